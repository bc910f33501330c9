//! Copy routines with runtime CPU dispatch (and, with feature `test-support`, the memcmp
//! variants `rxbench memcmp` compares, in the module `memcmp`).
//!
//! Routines: `Libc` (`copy_from_slice`, i.e. glibc's memcpy), `Erms` (`rep movsb`), `Avx2`
//! (32-byte vectors, overlapping head/tail, aligned unrolled body), `Avx512` (64-byte
//! vectors, a masked load and store up to 64 bytes, a cache-line-aligned body),
//! `NonTemporal` (the widest vector routine the CPU has, AVX-512 or AVX2, with streaming
//! stores for the aligned body of copies that have one — above 512 or 256 bytes —, ending
//! with `sfence`), and `Auto`: chosen by copy size and by the destination's reuse distance
//! against this CPU's caches ([`AutoPolicy`]). CPU features are detected once
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

/// A copy routine to use for delivered packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Routine {
    /// `<[u8]>::copy_from_slice` (glibc memcpy, itself dispatched by glibc).
    Libc,
    /// `rep movsb`.
    Erms,
    /// AVX2 vectors.
    Avx2,
    /// AVX-512 (F and BW) vectors.
    Avx512,
    /// Non-temporal (streaming) stores from the widest vectors the CPU has (AVX-512, else
    /// AVX2); bypasses the cache. Copies without a loop (up to 512 bytes with AVX-512, 256
    /// with AVX2) use ordinary stores.
    NonTemporal,
    /// By size, thresholds from the cache sizes (see [`AutoPolicy`]).
    Auto,
}

impl Routine {
    /// All routines, `Auto` last.
    pub const ALL: [Routine; 6] = [
        Routine::Libc,
        Routine::Erms,
        Routine::Avx2,
        Routine::Avx512,
        Routine::NonTemporal,
        Routine::Auto,
    ];

    /// The name used on command lines (`libc`, `erms`, `avx2`, `avx512`, `nt`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Routine::Libc => "libc",
            Routine::Erms => "erms",
            Routine::Avx2 => "avx2",
            Routine::Avx512 => "avx512",
            Routine::NonTemporal => "nt",
            Routine::Auto => "auto",
        }
    }

    /// Parses [`Routine::name`] (what [`str::parse`] does, without the error).
    pub fn from_name(s: &str) -> Option<Routine> {
        Routine::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl std::str::FromStr for Routine {
    type Err = UnknownName;
    /// Parses [`Routine::name`]; the error lists the names there are.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Routine::from_name(s)
            .ok_or_else(|| UnknownName::new("copy routine", s, Routine::ALL.map(Routine::name)))
    }
}

/// A name that names no copy routine or delivery mode (the error of their `FromStr`): the
/// ring's type, one for every name the crates parse.
pub use zcrx_ring::UnknownName;

impl fmt::Display for Routine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// From this copy size on, non-temporal stores into a destination that leaves the caches
/// before it is read ([`AutoPolicy::for_reuse`]): from this size on they are ahead of every
/// other routine for a cold copy (`rxbench copy` compares them); below it, the `sfence` each
/// copy ends with costs more than the stores save.
pub const COLD_NT_FROM: usize = 16 << 10;

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

/// A chosen copy routine, ready to call (a function pointer; no per-call feature test).
#[derive(Clone, Copy)]
pub struct Copier {
    routine: Routine,
    /// The widest vectors the CPU has: `NonTemporal`'s, and `Auto`'s up to
    /// `policy.wide_until` (`Avx512`, `Avx2` or `Libc`).
    vectors: Routine,
    /// Up to `policy.wide_until` bytes.
    wide: CopyFn,
    small: CopyFn,
    mid: CopyFn,
    large: CopyFn,
    policy: AutoPolicy,
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

impl Copier {
    /// The routine, if this CPU supports it; `Auto` with this CPU's [`AutoPolicy`].
    pub fn new(routine: Routine) -> Result<Copier, Unsupported> {
        Copier::with_policy(routine, AutoPolicy::for_cpu(cpu()))
    }

    /// As [`Copier::new`], `Auto` choosing by copy size and by the destination's reuse
    /// distance ([`AutoPolicy::for_reuse`]); fixed routines are unaffected.
    pub fn for_destination(routine: Routine, reuse_bytes: usize) -> Result<Copier, Unsupported> {
        Copier::with_policy(routine, AutoPolicy::for_reuse(cpu(), reuse_bytes))
    }

    /// As [`Copier::new`] with explicit `Auto` thresholds (overrides).
    pub fn with_policy(routine: Routine, policy: AutoPolicy) -> Result<Copier, Unsupported> {
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        let avx2 = cpu().avx2;
        let vectors = cpu().widest();
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        let need_avx2 = |r| {
            if avx2 {
                Ok(())
            } else {
                Err(Unsupported {
                    routine: r,
                    feature: "AVX2",
                })
            }
        };
        let f: CopyFn = match routine {
            Routine::Libc => copy_libc,
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
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
            Routine::Auto => {
                let (wide, small, large): (CopyFn, CopyFn, CopyFn) = match (avx512_copies(), avx2) {
                    (Some((wide, nt)), _) => (wide, copy_avx2, nt),
                    (None, true) => (copy_avx2, copy_avx2, copy_nt),
                    (None, false) => (copy_libc, copy_libc, copy_libc),
                };
                return Ok(Copier {
                    routine,
                    vectors,
                    wide,
                    small,
                    mid: copy_erms,
                    large,
                    policy,
                });
            }
            // Portable: libc's memcpy for every size.
            #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
            Routine::Auto => copy_libc,
        };
        Ok(Copier {
            routine,
            vectors,
            wide: f,
            small: f,
            mid: f,
            large: f,
            policy,
        })
    }

    /// Which routine this is.
    pub fn routine(&self) -> Routine {
        self.routine
    }

    /// The `Auto` thresholds in force.
    pub fn policy(&self) -> AutoPolicy {
        self.policy
    }

    /// One line saying what was chosen, for logs.
    pub fn describe(&self) -> String {
        match self.routine {
            Routine::Auto => {
                let p = self.policy;
                let (wide, small) = match self.vectors {
                    Routine::Avx512 => ("avx512", "avx2"),
                    v => (v.name(), v.name()),
                };
                let large = format!("non-temporal {}", self.vectors);
                let band = |n: usize| -> &str {
                    match p.band(n) {
                        Band::Large => &large,
                        Band::Mid => "rep movsb",
                        Band::Wide => wide,
                        Band::Small => small,
                    }
                };
                let mut cuts = vec![
                    0,
                    p.wide_until.saturating_add(1),
                    p.erms_from,
                    p.erms_until,
                    p.nt_from,
                ];
                cuts.retain(|&c| c != usize::MAX);
                cuts.sort_unstable();
                let mut bands: Vec<(usize, &str)> = Vec::new();
                for c in cuts {
                    if bands.last().is_none_or(|&(_, b)| b != band(c)) {
                        bands.push((c, band(c)));
                    }
                }
                let bands: Vec<String> = bands
                    .iter()
                    .map(|(from, b)| {
                        if *from == 0 {
                            b.to_string()
                        } else {
                            format!("{b} from {from} B")
                        }
                    })
                    .collect();
                let nt = if p.nt_from == usize::MAX {
                    "; never non-temporal (the destination is read back from cache)"
                } else {
                    ""
                };
                format!("auto: {}{nt}", bands.join(", "))
            }
            Routine::NonTemporal => format!("nt ({} streaming stores)", self.vectors),
            r => r.name().to_string(),
        }
    }

    /// The fixed routine that runs a copy of `n` bytes: this copier's own routine, or for
    /// `Auto` the one its policy picks (the same function a fixed copier of that routine
    /// calls: `rxbench copy` uses it to measure its own noise).
    pub fn dispatch(&self, n: usize) -> Routine {
        if self.routine != Routine::Auto {
            return self.routine;
        }
        if !cfg!(all(target_arch = "x86_64", not(zcrx_portable))) {
            return Routine::Libc; // the portable Auto is libc at every size
        }
        match (self.policy.band(n), self.vectors) {
            (Band::Large, Routine::Libc) => Routine::Libc,
            (Band::Large, _) => Routine::NonTemporal,
            (Band::Mid, _) => Routine::Erms,
            (Band::Small, Routine::Avx512) => Routine::Avx2,
            (Band::Wide | Band::Small, v) => v,
        }
    }

    /// Copies `src` into `dst` (lengths must be equal).
    #[inline]
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        self.fn_for(src.len())(dst, src)
    }

    /// The function that copies `n` bytes.
    #[inline(always)]
    fn fn_for(&self, n: usize) -> CopyFn {
        match self.policy.band(n) {
            Band::Large => self.large,
            Band::Mid => self.mid,
            Band::Wide => self.wide,
            Band::Small => self.small,
        }
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
}
