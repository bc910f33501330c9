//! Copy routines with runtime CPU dispatch (and, with feature `test-support`, the memcmp
//! variants `rxbench memcmp` compares, in the module `memcmp`).
//!
//! Routines: `Libc` (`copy_from_slice`, i.e. glibc's memcpy), `Erms` (`rep movsb`), `Avx2`
//! (32-byte vectors, overlapping head/tail, aligned unrolled body), `Avx512` (64-byte
//! vectors, a masked load and store up to 64 bytes, a cache-line-aligned body),
//! `NonTemporal` (the widest vector routine the CPU has, AVX-512 or AVX2, with streaming
//! stores for the aligned body of copies that have one — above 512 or 256 bytes —, ending
//! with `sfence`), and `Auto`: chosen by copy size and by the destination's reuse distance,
//! as measured on this CPU at first use ([`calibration`]; [`AutoPolicy`] places the
//! non-temporal band, and gives the thresholds of `ZCRX_COPY_AUTO=static` and
//! [`Copier::with_policy`]). CPU features are detected once
//! ([`cpu`]); a [`Copier`] holds a plain function pointer, so no call tests features again,
//! and [`Copier::describe`] says which vectors were chosen.
//!
//! Promise: every routine copies exactly `src` into `dst` (same length, asserted), for every
//! length and alignment (tested against `copy_from_slice` for all lengths 0..=4160 and all 64x64
//! misalignments), and a `NonTemporal` copy is globally visible when the call returns.

// The x86-64 routines; elsewhere (or with `--cfg zcrx_portable`, which CI uses to build and
// test the fallback on x86) only `Libc` and `Auto` (= libc) exist.
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
mod x86;
// The AVX-512 routines, where the compiler has the intrinsics (Rust >= 1.89: `build.rs`).
#[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
mod x86_512;

/// Whether this build has the AVX-512 routines (x86-64, built by Rust 1.89 or newer, whose
/// AVX-512 intrinsics are stable; older compilers build the rest, and `Avx512` is then
/// [`Unsupported`] as on a CPU without AVX-512).
pub const AVX512_BUILT: bool = cfg!(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512));

/// `Auto`'s calibration: which fixed routine copies each size class fastest here.
mod calibrate;
/// The routines' names.
mod routine;
pub use calibrate::{
    Calibration, CLASS_TOPS, COLD_NT_FROM, DEADLINE as CALIBRATION_DEADLINE, LIBC_MARGIN,
};
pub use routine::Routine;

/// memcmp variants for the benchmarks (feature `test-support`; not part of the API).
#[cfg(feature = "test-support")]
pub mod memcmp;

/// The copy sizes the benchmarks sweep (`rxbench copy`, `cargo bench -p zcrx-capture --bench
/// copy`): packet sizes, a page, and buffers around the cache sizes. Feature `test-support`.
#[cfg(feature = "test-support")]
pub const BENCH_SIZES: [usize; 15] = [
    64,
    128,
    256,
    512,
    1024,
    1500,
    4096,
    16 << 10,
    32 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    8 << 20,
    32 << 20,
];

use std::fmt;
use std::sync::OnceLock;

/// A name that names no copy routine or delivery mode (the error of their `FromStr`): the
/// ring's type, one for every name the crates parse.
pub use zcrx_ring::UnknownName;

/// What this CPU offers, detected once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    /// AVX2.
    pub avx2: bool,
    /// AVX-512 F and BW (64-byte vectors with byte masks), detected at run time, and this
    /// build has the routines ([`AVX512_BUILT`]).
    pub avx512: bool,
    /// Enhanced REP MOVSB.
    pub erms: bool,
    /// Fast short REP MOVSB.
    pub fsrm: bool,
    /// AMD (glibc avoids `rep movsb` below the non-temporal threshold there).
    pub amd: bool,
    /// Last-level cache in bytes (0 if unknown).
    pub llc_bytes: usize,
    /// L2 in bytes (0 if unknown).
    pub l2_bytes: usize,
}

/// The CPU's features and cache sizes (sysfs), detected on first use.
pub fn cpu() -> &'static Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    CPU.get_or_init(|| {
        let (mut llc, mut l2) = (0, 0);
        for i in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let (Ok(level), Ok(size)) = (
                std::fs::read_to_string(format!("{dir}/level")),
                std::fs::read_to_string(format!("{dir}/size")),
            ) else {
                continue;
            };
            let size = parse_size(size.trim()).unwrap_or(0);
            match level.trim() {
                "2" => l2 = size,
                "3" => llc = size,
                _ => {}
            }
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let has = |flag: &str| {
            cpuinfo
                .lines()
                .filter(|l| l.starts_with("flags"))
                .take(1)
                .any(|l| l.split_whitespace().any(|w| w == flag))
        };
        Cpu {
            avx2: avx2_detected(),
            avx512: avx512_detected(),
            erms: has("erms"),
            fsrm: has("fsrm"),
            amd: cpuinfo.contains("AuthenticAMD"),
            llc_bytes: if llc > 0 { llc } else { l2 },
            l2_bytes: l2,
        }
    })
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn avx2_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

#[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
fn avx2_detected() -> bool {
    false
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
fn avx512_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
}

#[cfg(not(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512)))]
fn avx512_detected() -> bool {
    false
}

impl Cpu {
    /// The widest vector copy this CPU runs: `Avx512`, `Avx2`, or `Libc` (no vector routine
    /// of ours).
    pub fn widest(&self) -> Routine {
        if self.avx512 {
            Routine::Avx512
        } else if self.avx2 {
            Routine::Avx2
        } else {
            Routine::Libc
        }
    }
}

fn parse_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mult)
}

/// Size thresholds of [`Routine::Auto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoPolicy {
    /// Up to this size, 512-bit vectors (on a CPU with AVX-512; 0 without): a copy of a few
    /// vectors, one masked load and store up to 64 bytes. Larger copies run a loop, where
    /// 256-bit vectors are as fast or faster: Zen 4 splits 512-bit operations in two, and a
    /// 64-byte access at a misaligned address crosses a cache line every time, a 32-byte one
    /// every other time (`rxbench copy` compares them; docs/PERFORMANCE.md has the figures).
    pub wide_until: usize,
    /// From this size on, `rep movsb`, up to `erms_until`. Never on AMD: there the vector
    /// loop is ahead or level at every size (`rxbench drain` and `rxbench copy` compare them;
    /// docs/PERFORMANCE.md has the figures).
    pub erms_from: usize,
    /// Below this size, `rep movsb` (from `erms_from`).
    pub erms_until: usize,
    /// From this size on, non-temporal stores: about a quarter of the last-level cache, the
    /// size beyond which a copy would evict more useful data than it gains (glibc's
    /// `x86_non_temporal_threshold` is of the same order).
    pub nt_from: usize,
}

/// Which of `Auto`'s functions copies a given size ([`AutoPolicy`]'s thresholds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Band {
    /// Up to `wide_until`: the widest vectors.
    Wide,
    /// The rest below `erms_from` / `nt_from`: 256-bit vectors where the CPU has wider.
    Small,
    /// `erms_from..erms_until`: `rep movsb`.
    Mid,
    /// From `nt_from`: streaming stores.
    Large,
}

impl AutoPolicy {
    /// The band a copy of `n` bytes falls in: the one decision behind `Copier::copy`,
    /// `Copier::dispatch` and `Copier::describe`.
    #[inline(always)]
    fn band(&self, n: usize) -> Band {
        if n >= self.nt_from {
            Band::Large
        } else if n >= self.erms_from && n < self.erms_until {
            Band::Mid
        } else if n <= self.wide_until {
            Band::Wide
        } else {
            Band::Small
        }
    }

    /// The policy for copies into a destination that is read again after about
    /// `reuse_bytes` of other traffic (its reuse distance: the consumer's arena in the
    /// pipeline, a batch, at most a block).
    ///
    /// - Within half the last-level cache the destination is read back from cache:
    ///   non-temporal stores are never used, whatever the copy size (streaming a packet past
    ///   the cache the consumer is about to read it from costs a DRAM round trip per line),
    ///   and the loop above [`AutoPolicy::wide_until`] runs 256-bit vectors.
    /// - Beyond, the lines leave the caches before they are read: the stores' cost is the
    ///   memory's, and full-line 64-byte stores pay at every size (AVX-512 where the CPU has
    ///   it), streaming from [`COLD_NT_FROM`] (where the closing `sfence` is amortised).
    ///
    /// Measured with `rxbench copy --rounds N`, destinations hot, cold and arena (docs/PERFORMANCE.md).
    pub fn for_reuse(cpu: &Cpu, reuse_bytes: usize) -> Self {
        let mut p = AutoPolicy::for_cpu(cpu);
        let llc = if cpu.llc_bytes > 0 {
            cpu.llc_bytes
        } else {
            8 << 20
        };
        if reuse_bytes <= llc / 2 {
            p.nt_from = usize::MAX;
        } else {
            if cpu.avx512 {
                p.wide_until = usize::MAX;
            }
            p.nt_from = p.nt_from.min(COLD_NT_FROM);
        }
        p
    }

    /// The policy for this CPU, by copy size alone.
    pub fn for_cpu(cpu: &Cpu) -> Self {
        let nt_from = if cpu.llc_bytes > 0 {
            cpu.llc_bytes / 4
        } else {
            4 << 20
        };
        let (erms_from, erms_until) = if cpu.amd || !cpu.erms {
            (usize::MAX, usize::MAX)
        } else {
            (2048, usize::MAX)
        };
        AutoPolicy {
            wide_until: if cpu.avx512 { 512 } else { 0 },
            erms_from,
            erms_until,
            nt_from,
        }
    }
}

type CopyFn = fn(&mut [u8], &[u8]);

fn copy_libc(dst: &mut [u8], src: &[u8]) {
    dst.copy_from_slice(src);
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn copy_erms(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    // SAFETY: equal lengths; `&mut` and `&` slices never overlap. `rep movsb` needs no CPU
    // feature to be correct (ERMS only makes it fast).
    unsafe { x86::copy_erms(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn copy_avx2(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: equal lengths, no overlap; this function is only handed out by `Copier::new`
    // after AVX2 was detected.
    unsafe { x86::copy_avx2::<false>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn copy_nt(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: as `copy_avx2`; the routine ends with sfence.
    unsafe { x86::copy_avx2::<true>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
fn copy_avx512(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx512);
    // SAFETY: equal lengths, no overlap; handed out by `avx512_copies` only after AVX-512F
    // and BW were detected.
    unsafe { x86_512::copy_avx512::<false>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
fn copy_nt512(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx512);
    // SAFETY: as `copy_avx512`; the routine ends with sfence.
    unsafe { x86_512::copy_avx512::<true>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

/// Evicts `buf`'s lines from every cache level (x86-64; elsewhere nothing): the
/// calibration's cold destination.
fn evict(buf: &[u8]) {
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    // SAFETY: `buf` is valid for `buf.len()` reads.
    unsafe {
        x86::evict_lines(buf.as_ptr(), buf.len())
    }
    #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
    let _ = buf;
}

/// The AVX-512 copy and its streaming form, where the CPU has AVX-512F and BW and this
/// build the routines.
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn avx512_copies() -> Option<(CopyFn, CopyFn)> {
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
    if cpu().avx512 {
        return Some((copy_avx512, copy_nt512));
    }
    None
}

/// Which of the calibration's layouts a destination is like.
#[derive(Clone, Copy)]
enum Layout {
    /// Reused within half the L2.
    Hot,
    /// Reused within half the last-level cache (or not known).
    Arena,
    /// Reused beyond: its lines have left the caches.
    Cold,
}

/// Bands of copy sizes a copier tells apart at most: a band per size class and the
/// non-temporal band.
const MAX_BANDS: usize = CLASS_TOPS.len() + 1;
// `Copier::start` holds band indices as `u8`.
const _: () = assert!(MAX_BANDS <= u8::MAX as usize);

/// A chosen copy routine, ready to call (function pointers; no per-call feature test).
#[derive(Clone, Copy)]
pub struct Copier {
    routine: Routine,
    /// The widest vectors the CPU has: `NonTemporal`'s (`Avx512`, `Avx2` or `Libc`).
    vectors: Routine,
    /// Bands in use (1 for a fixed routine).
    bands: usize,
    /// Band `i` copies sizes `from[i]..from[i + 1]` (the last, every larger size); `from[0]`
    /// is 0.
    from: [usize; MAX_BANDS],
    /// Each band's function.
    fns: [CopyFn; MAX_BANDS],
    /// Each band's fixed routine (whose function `fns` holds).
    routines: [Routine; MAX_BANDS],
    /// By a size's bit length (0 for 0 bytes, `k + 1` for `2^k..2^(k+1)`), the band of the
    /// smallest size of that length: where `band_of`'s walk starts, so that a copy passes at
    /// most the cuts inside its own power of two (with the calibration's class tops, one,
    /// or two from 1 KiB to 2 KiB: 1025 and 1519) instead of every band below it.
    start: [u8; usize::BITS as usize + 1],
    policy: AutoPolicy,
    /// `Auto` chose by the calibration ([`calibration`]), not by `policy`'s thresholds
    /// (whose `nt_from` still places the non-temporal band).
    calibrated: bool,
}

impl fmt::Debug for Copier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Copier({})", self.describe())
    }
}

/// The CPU lacks what a routine needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("copy routine {routine} needs {feature}, which this CPU does not have")]
pub struct Unsupported {
    /// The routine asked for.
    pub routine: Routine,
    /// The missing CPU feature.
    pub feature: &'static str,
}

impl Unsupported {
    /// The AVX-512 routines are missing: from the CPU, or from a build by a compiler older than
    /// Rust 1.89 ([`AVX512_BUILT`]).
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    fn avx512(routine: Routine) -> Unsupported {
        Unsupported {
            routine,
            feature: if AVX512_BUILT {
                "AVX-512F and AVX-512BW"
            } else {
                "AVX-512F and AVX-512BW, and a build by Rust 1.89 or newer"
            },
        }
    }
}

/// The function of a fixed routine (not `Auto`), if this CPU runs it.
fn routine_fn(routine: Routine) -> Result<CopyFn, Unsupported> {
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    let need_avx2 = |r| {
        if cpu().avx2 {
            Ok(())
        } else {
            Err(Unsupported {
                routine: r,
                feature: "AVX2",
            })
        }
    };
    Ok(match routine {
        Routine::Libc | Routine::Auto => copy_libc,
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Erms => copy_erms,
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Avx2 => {
            need_avx2(routine)?;
            copy_avx2
        }
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Avx512 => {
            avx512_copies()
                .ok_or_else(|| Unsupported::avx512(routine))?
                .0
        }
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::NonTemporal => {
            need_avx2(routine)?;
            avx512_copies().map_or(copy_nt as CopyFn, |(_, nt)| nt)
        }
        #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
        Routine::Erms | Routine::Avx2 | Routine::Avx512 | Routine::NonTemporal => {
            return Err(Unsupported {
                routine,
                feature: "x86-64",
            })
        }
    })
}

/// The fixed routines `Auto` may choose between for a destination in the cache: libc, and
/// `rep movsb` (on a CPU with ERMS), AVX2 and AVX-512 where the CPU has them.
fn auto_candidates() -> Vec<Routine> {
    let c = cpu();
    let mut v = vec![Routine::Libc];
    if cfg!(all(target_arch = "x86_64", not(zcrx_portable))) {
        if c.erms {
            v.push(Routine::Erms);
        }
        if c.avx2 {
            v.push(Routine::Avx2);
        }
        if c.avx512 {
            v.push(Routine::Avx512);
        }
    }
    v
}

/// `Auto`'s choice by size on this CPU: measured once per process, at first use, in at most
/// a few milliseconds (module `calibrate`'s docs), or pinned by the environment variable
/// `ZCRX_COPY_AUTO` (`static`: the thresholds from the cache sizes, [`AutoPolicy::for_cpu`];
/// `libc`, `erms`, `avx2`, `avx512`: that routine).
pub fn calibration() -> &'static Calibration {
    static CALIBRATION: OnceLock<Calibration> = OnceLock::new();
    CALIBRATION.get_or_init(|| {
        let candidates = auto_candidates();
        let env = std::env::var("ZCRX_COPY_AUTO").ok();
        let measure = || {
            let copiers: Vec<Copier> = candidates
                .iter()
                .filter_map(|&r| Copier::with_policy(r, AutoPolicy::for_cpu(cpu())).ok())
                .collect();
            calibrate::measure(&copiers, cpu().l2_bytes)
        };
        match calibrate::pinned(env.as_deref(), &candidates) {
            Ok(Some(pinned)) => pinned,
            Ok(None) => measure(),
            Err(why) => {
                let mut c = measure();
                c.how = format!("{}; {why}", c.how);
                c
            }
        }
    })
}

impl calibrate::Candidate for Copier {
    fn routine(&self) -> Routine {
        Copier::routine(self)
    }
    fn copy(&self, dst: &mut [u8], src: &[u8]) {
        Copier::copy(self, dst, src)
    }
    fn evict(buf: &[u8]) {
        evict(buf)
    }
}

impl Copier {
    /// The routine, if this CPU supports it; `Auto` as [`calibration`] chose for this CPU
    /// for copies into a destination beyond the L2 (its arena layout: where the destination
    /// is not known), non-temporal from [`AutoPolicy::for_cpu`]'s `nt_from` (a quarter of
    /// the last-level cache).
    pub fn new(routine: Routine) -> Result<Copier, Unsupported> {
        if routine == Routine::Auto {
            return Ok(Copier::calibrated(
                AutoPolicy::for_cpu(cpu()),
                Layout::Arena,
            ));
        }
        Copier::with_policy(routine, AutoPolicy::for_cpu(cpu()))
    }

    /// As [`Copier::new`], `Auto` choosing by copy size and by the destination's reuse
    /// distance ([`AutoPolicy::for_reuse`]) as [`calibration`] measured: within half the L2,
    /// the routines fastest into a destination in the core's caches; within half the
    /// last-level cache, those fastest into an arena larger than the L2; beyond (the lines
    /// leave the caches before they are read), those fastest into lines in no cache, and
    /// non-temporal stores from [`COLD_NT_FROM`], the only place `Auto` streams. Fixed
    /// routines are unaffected.
    pub fn for_destination(routine: Routine, reuse_bytes: usize) -> Result<Copier, Unsupported> {
        let c = cpu();
        let policy = AutoPolicy::for_reuse(c, reuse_bytes);
        if routine == Routine::Auto {
            let llc = if c.llc_bytes > 0 {
                c.llc_bytes
            } else {
                8 << 20
            };
            let layout = if reuse_bytes > llc / 2 {
                Layout::Cold
            } else if c.l2_bytes > 0 && reuse_bytes <= c.l2_bytes / 2 {
                Layout::Hot
            } else {
                Layout::Arena
            };
            return Ok(Copier::calibrated(policy, layout));
        }
        Copier::with_policy(routine, policy)
    }

    /// `Auto` by the calibration's choices in `layout` below `policy.nt_from`,
    /// non-temporal from there (by `policy` alone when the calibration is pinned to
    /// `static`).
    fn calibrated(policy: AutoPolicy, layout: Layout) -> Copier {
        let cal = calibration();
        if cal.static_policy {
            return Copier::by_policy(policy);
        }
        let classes = match layout {
            Layout::Hot => &cal.classes,
            Layout::Arena => &cal.arena,
            Layout::Cold => &cal.cold,
        };
        let mut bands = vec![(0usize, classes.first().map_or(Routine::Libc, |c| c.1))];
        for w in classes.windows(2) {
            let from = w[0].0.saturating_add(1);
            if from < policy.nt_from {
                bands.push((from, w[1].1));
            }
        }
        if policy.nt_from != usize::MAX {
            bands.push((policy.nt_from, Copier::streaming()));
        }
        let mut c = Copier::from_bands(Routine::Auto, &bands, policy);
        c.calibrated = true;
        c
    }

    /// The routine of `Auto`'s non-temporal band: `NonTemporal`, or libc on a CPU without
    /// the vectors it needs.
    fn streaming() -> Routine {
        if cfg!(all(target_arch = "x86_64", not(zcrx_portable))) && cpu().avx2 {
            Routine::NonTemporal
        } else {
            Routine::Libc
        }
    }

    /// `Auto` by `policy`'s thresholds.
    fn by_policy(policy: AutoPolicy) -> Copier {
        let vectors = cpu().widest();
        let portable = !cfg!(all(target_arch = "x86_64", not(zcrx_portable)));
        let routine_of = |b: Band| match (b, vectors) {
            _ if portable => Routine::Libc, // the portable Auto is libc at every size
            (Band::Large, Routine::Libc) => Routine::Libc,
            (Band::Large, _) => Routine::NonTemporal,
            (Band::Mid, _) => Routine::Erms,
            (Band::Small, Routine::Avx512) => Routine::Avx2,
            (Band::Wide | Band::Small, v) => v,
        };
        let mut cuts = vec![
            0,
            policy.wide_until.saturating_add(1),
            policy.erms_from,
            policy.erms_until,
            policy.nt_from,
        ];
        cuts.retain(|&c| c != usize::MAX);
        cuts.sort_unstable();
        cuts.dedup();
        let bands: Vec<(usize, Routine)> = cuts
            .into_iter()
            .map(|c| (c, routine_of(policy.band(c))))
            .collect();
        Copier::from_bands(Routine::Auto, &bands, policy)
    }

    /// A copier of `bands` (ascending starts, the first 0; each routine one this CPU runs),
    /// neighbours of the same routine merged.
    fn from_bands(routine: Routine, bands: &[(usize, Routine)], policy: AutoPolicy) -> Copier {
        let mut c = Copier {
            routine,
            vectors: cpu().widest(),
            bands: 0,
            from: [usize::MAX; MAX_BANDS],
            fns: [copy_libc as CopyFn; MAX_BANDS],
            routines: [Routine::Libc; MAX_BANDS],
            start: [0; usize::BITS as usize + 1],
            policy,
            calibrated: false,
        };
        for &(from, r) in bands {
            // Every routine here was offered by this CPU's detection; libc if not.
            let (r, f) = match routine_fn(r) {
                Ok(f) => (r, f),
                Err(_) => (Routine::Libc, copy_libc as CopyFn),
            };
            if c.bands > 0 && c.routines[c.bands - 1] == r {
                continue;
            }
            if c.bands == MAX_BANDS {
                break; // more bands than sizes told apart: the last one goes on
            }
            c.from[c.bands] = if c.bands == 0 { 0 } else { from };
            c.fns[c.bands] = f;
            c.routines[c.bands] = r;
            c.bands += 1;
        }
        if c.bands == 0 {
            c.from[0] = 0;
            c.bands = 1;
        }
        for len in 1..c.start.len() {
            // Below MAX_BANDS, which fits a u8.
            c.start[len] = c.walk_from(0, 1usize << (len - 1)) as u8;
        }
        c
    }

    /// A fixed routine (not `Auto`).
    fn fixed(routine: Routine, policy: AutoPolicy) -> Result<Copier, Unsupported> {
        let f = routine_fn(routine)?;
        let mut c = Copier::from_bands(routine, &[], policy);
        c.fns[0] = f;
        c.routines[0] = routine;
        Ok(c)
    }

    /// As [`Copier::new`] with explicit `Auto` thresholds (overrides; no calibration).
    pub fn with_policy(routine: Routine, policy: AutoPolicy) -> Result<Copier, Unsupported> {
        if routine == Routine::Auto {
            return Ok(Copier::by_policy(policy));
        }
        Copier::fixed(routine, policy)
    }

    /// Which routine this is.
    pub fn routine(&self) -> Routine {
        self.routine
    }

    /// The `Auto` thresholds in force (with a calibrated `Auto`, only `nt_from`: the sizes
    /// below it go as [`calibration`] chose).
    pub fn policy(&self) -> AutoPolicy {
        self.policy
    }

    /// Whether this `Auto` chose by the calibration ([`calibration`]).
    pub fn is_calibrated(&self) -> bool {
        self.calibrated
    }

    /// One line saying what was chosen, for logs.
    pub fn describe(&self) -> String {
        match self.routine {
            Routine::Auto => {
                let bands: Vec<String> = (0..self.bands)
                    .map(|i| {
                        let name = match self.routines[i] {
                            Routine::NonTemporal => format!("non-temporal {}", self.vectors),
                            Routine::Erms => "rep movsb".to_string(),
                            r => r.name().to_string(),
                        };
                        if i == 0 {
                            name
                        } else {
                            format!("{name} from {} B", self.from[i])
                        }
                    })
                    .collect();
                let nt = if self.policy.nt_from == usize::MAX {
                    "; never non-temporal (the destination is read back from cache)"
                } else {
                    ""
                };
                let how = if self.calibrated { " (calibrated)" } else { "" };
                format!("auto: {}{nt}{how}", bands.join(", "))
            }
            Routine::NonTemporal => format!("nt ({} streaming stores)", self.vectors),
            r => r.name().to_string(),
        }
    }

    /// The fixed routine that runs a copy of `n` bytes: this copier's own routine, or for
    /// `Auto` the one it picks (the same function a fixed copier of that routine calls:
    /// `rxbench copy` uses it to measure its own noise).
    pub fn dispatch(&self, n: usize) -> Routine {
        self.routines[self.band_of(n)]
    }

    /// Copies `src` into `dst` (lengths must be equal).
    #[inline]
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        self.fn_for(src.len())(dst, src)
    }

    /// The band a copy of `n` bytes falls in: the last whose start is at most `n`. Bands
    /// rise with the size, so the walk may start at the band of `n`'s power of two.
    #[inline(always)]
    fn band_of(&self, n: usize) -> usize {
        self.walk_from(
            self.start[(usize::BITS - n.leading_zeros()) as usize] as usize,
            n,
        )
    }

    /// The band of `n` bytes, walking up from band `i` (at or below it).
    #[inline(always)]
    fn walk_from(&self, mut i: usize, n: usize) -> usize {
        while i + 1 < self.bands && n >= self.from[i + 1] {
            i += 1;
        }
        i
    }

    /// The function that copies `n` bytes.
    #[inline(always)]
    fn fn_for(&self, n: usize) -> CopyFn {
        self.fns[self.band_of(n)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dispatch` names the fixed routine whose very function `Auto` calls, at every size
    /// around every threshold, for the policies the pipeline and the benches make.
    #[test]
    fn dispatch_names_the_function_auto_calls() {
        let c = cpu();
        let policies = [
            AutoPolicy::for_cpu(c),
            AutoPolicy::for_reuse(c, 1 << 20),
            AutoPolicy::for_reuse(c, 1 << 40),
            AutoPolicy {
                wide_until: 70,
                erms_from: 100,
                erms_until: 700,
                nt_from: 1000,
            },
        ];
        for policy in policies {
            let auto = Copier::with_policy(Routine::Auto, policy).unwrap();
            let mut sizes = vec![0, 1, 64, 65, 512, 513, 1500, 4096, 1 << 30];
            for t in [
                policy.wide_until,
                policy.erms_from,
                policy.erms_until,
                policy.nt_from,
            ] {
                if t < usize::MAX {
                    sizes.extend([t.saturating_sub(1), t, t + 1]);
                }
            }
            for n in sizes {
                let fixed = Copier::with_policy(auto.dispatch(n), policy).unwrap();
                assert_eq!(
                    auto.fn_for(n) as usize,
                    fixed.fn_for(n) as usize,
                    "{n} bytes under {policy:?}: auto is not {:?}",
                    auto.dispatch(n)
                );
            }
        }
    }

    /// The walk that starts at the band of a size's power of two finds the same band as a
    /// walk from the first, at every cut, every power of two and their neighbours, for
    /// copiers with one band, the policies' few and the most a copier holds (cuts that fall
    /// inside and on powers of two).
    #[test]
    fn band_of_matches_a_walk_from_the_first_band() {
        let walk = |c: &Copier, n: usize| c.walk_from(0, n);
        let routines = [Routine::Libc, Routine::Erms];
        let many: Vec<(usize, Routine)> = (0..MAX_BANDS + 2)
            .map(|i| (if i == 0 { 0 } else { 3 + 7 * i * i * i }, routines[i % 2]))
            .collect();
        let on_powers: Vec<(usize, Routine)> = (0..8)
            .map(|i| (if i == 0 { 0 } else { 1 << (2 * i) }, routines[i % 2]))
            .collect();
        let policy = AutoPolicy::for_cpu(cpu());
        let copiers = [
            Copier::with_policy(Routine::Libc, policy).unwrap(),
            Copier::with_policy(Routine::Auto, policy).unwrap(),
            Copier::from_bands(Routine::Auto, &many, policy),
            Copier::from_bands(Routine::Auto, &on_powers, policy),
        ];
        for c in &copiers {
            let mut sizes = vec![0, 1, 2, 3, usize::MAX];
            for k in 0..usize::BITS {
                let p = 1usize << k;
                sizes.extend([p - 1, p, p + 1]);
            }
            for &f in &c.from[..c.bands] {
                sizes.extend([f.saturating_sub(1), f, f.saturating_add(1)]);
            }
            for n in sizes {
                assert_eq!(c.band_of(n), walk(c, n), "{n} bytes, {}", c.describe());
            }
        }
        // Where `rep movsb` is not offered (the portable build) its bands are libc's, merged.
        let expected = if routine_fn(Routine::Erms).is_ok() {
            MAX_BANDS
        } else {
            1
        };
        assert_eq!(copiers[2].bands, expected, "{}", copiers[2].describe());
    }

    /// The calibration runs once per process (every call returns the same one), measures
    /// every class or says it stopped at its deadline (the classes it did not reach keeping
    /// libc; how long it took is the host's, and the deadline is tested in `calibrate` with
    /// a candidate slow on purpose), and names a routine of this CPU for every class; `Auto`
    /// copiers follow it below the non-temporal band, and never stream into a destination
    /// read back from cache.
    #[test]
    fn calibration_runs_once_and_auto_follows_it() {
        let first = calibration();
        assert!(std::ptr::eq(first, calibration()), "calibrated twice");
        assert_eq!(first.classes.len(), CLASS_TOPS.len());
        if first.how.starts_with("measured") {
            let measured = first.timings.len();
            assert!(
                measured == CLASS_TOPS.len() || first.how.contains("stopped at the"),
                "{measured} classes measured: {}",
                first.how
            );
            assert!(
                first.classes[measured..]
                    .iter()
                    .all(|&(_, r)| r == Routine::Libc),
                "{:?}",
                first.classes
            );
        }
        let candidates = auto_candidates();
        for &(_, r) in &first.classes {
            assert!(candidates.contains(&r), "{r} is not a candidate here");
        }
        if first.static_policy {
            return; // ZCRX_COPY_AUTO=static: the thresholds, tested above
        }
        let auto = Copier::new(Routine::Auto).unwrap();
        assert!(auto.is_calibrated());
        let nt_from = auto.policy().nt_from;
        for &top in CLASS_TOPS.iter().filter(|&&t| t < nt_from) {
            assert_eq!(auto.dispatch(top), first.arena_routine_for(top), "{top} B");
        }
        let hot = Copier::for_destination(Routine::Auto, 4096).unwrap();
        if cpu().l2_bytes >= 8192 {
            for &top in CLASS_TOPS.iter() {
                assert_eq!(hot.dispatch(top), first.routine_for(top), "{top} B");
            }
        }
        let arena = Copier::for_destination(Routine::Auto, 1 << 20).unwrap();
        assert!(arena.is_calibrated());
        for n in [0, 64, 1500, 1 << 16, 1 << 24, 1 << 30] {
            assert_ne!(
                arena.dispatch(n),
                Routine::NonTemporal,
                "{n} B into the arena"
            );
            assert_ne!(
                hot.dispatch(n),
                Routine::NonTemporal,
                "{n} B into a hot buffer"
            );
        }
        // A destination that leaves the caches: streaming from COLD_NT_FROM, and below it
        // the cold layout's choice.
        let cold = Copier::for_destination(Routine::Auto, 1 << 40).unwrap();
        assert!(cold.is_calibrated());
        for &top in CLASS_TOPS.iter().filter(|&&t| t < COLD_NT_FROM) {
            assert_eq!(cold.dispatch(top), first.cold_routine_for(top), "{top} B");
        }
        if cpu().avx2 && cfg!(all(target_arch = "x86_64", not(zcrx_portable))) {
            assert_eq!(cold.dispatch(COLD_NT_FROM), Routine::NonTemporal);
            assert_ne!(cold.dispatch(COLD_NT_FROM - 1), Routine::NonTemporal);
        }
    }
}
