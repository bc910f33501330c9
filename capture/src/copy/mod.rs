//! Copy routines with runtime CPU dispatch, and memcmp variants for the benchmark.
//!
//! Routines: `Libc` (`copy_from_slice`, i.e. glibc's memcpy), `Erms` (`rep movsb`), `Avx2`
//! (32-byte vectors, overlapping head/tail, aligned unrolled body), `NonTemporal` (the AVX2
//! routine with streaming stores for the aligned body, ending with `sfence`), and `Auto`: a
//! size policy whose thresholds come from this CPU's caches. CPU features are detected once
//! ([`cpu`]); a [`Copier`] holds a plain function pointer, so no call tests features again.
//!
//! Promise: every routine copies exactly `src` into `dst` (same length, asserted), for every
//! length and alignment (tested against `copy_from_slice` for all lengths 0..=4160 and all 64x64
//! misalignments), and a `NonTemporal` copy is globally visible when the call returns.

// The x86-64 routines; elsewhere (or with `--cfg zcrx_portable`, which CI uses to build and
// test the fallback on x86) only `Libc` and `Auto` (= libc) exist.
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
mod x86;

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

/// The copy sizes the benchmarks sweep (`rxbench copy`, `cargo bench -p zcrx-capture --bench
/// copy`): packet sizes, a page, and buffers around the cache sizes.
pub const BENCH_SIZES: [usize; 14] = [
    64,
    128,
    256,
    512,
    1024,
    1500,
    4096,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    8 << 20,
    32 << 20,
];

/// A copy routine to use for delivered packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Routine {
    /// `<[u8]>::copy_from_slice` (glibc memcpy, itself dispatched by glibc).
    Libc,
    /// `rep movsb`.
    Erms,
    /// AVX2 vectors.
    Avx2,
    /// AVX2 loads with non-temporal (streaming) stores; bypasses the cache.
    NonTemporal,
    /// By size, thresholds from the cache sizes (see [`AutoPolicy`]).
    Auto,
}

impl Routine {
    /// All routines, `Auto` last.
    pub const ALL: [Routine; 5] = [
        Routine::Libc,
        Routine::Erms,
        Routine::Avx2,
        Routine::NonTemporal,
        Routine::Auto,
    ];

    /// The name used on command lines (`libc`, `erms`, `avx2`, `nt`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Routine::Libc => "libc",
            Routine::Erms => "erms",
            Routine::Avx2 => "avx2",
            Routine::NonTemporal => "nt",
            Routine::Auto => "auto",
        }
    }

    /// Parses [`Routine::name`].
    pub fn from_name(s: &str) -> Option<Routine> {
        Routine::ALL.into_iter().find(|r| r.name() == s)
    }
}

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
    /// From this size on, `rep movsb` (never on AMD below `nt_from`, as glibc).
    pub erms_from: usize,
    /// From this size on, non-temporal stores: about a quarter of the last-level cache, the
    /// size beyond which a copy would evict more useful data than it gains (glibc's
    /// `x86_non_temporal_threshold` is of the same order).
    pub nt_from: usize,
}

impl AutoPolicy {
    /// The policy for copies into a destination that is read again after about
    /// `reuse_bytes` of other traffic (its reuse distance: the consumer's arena in the
    /// pipeline, a batch, at most a block). Non-temporal stores only pay when the
    /// destination would leave the caches before it is read: while the reuse distance fits
    /// in half the last-level cache they are never used, whatever the copy size (streaming
    /// a packet past the cache the consumer is about to read it from costs a DRAM round
    /// trip per line); beyond, from [`AutoPolicy::for_cpu`]'s threshold.
    pub fn for_reuse(cpu: &Cpu, reuse_bytes: usize) -> Self {
        let mut p = AutoPolicy::for_cpu(cpu);
        let llc = if cpu.llc_bytes > 0 {
            cpu.llc_bytes
        } else {
            8 << 20
        };
        if reuse_bytes <= llc / 2 {
            p.nt_from = usize::MAX;
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
        let erms_from = if cpu.amd || !cpu.erms {
            usize::MAX
        } else {
            2048
        };
        AutoPolicy { erms_from, nt_from }
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

/// A chosen copy routine, ready to call (a function pointer; no per-call feature test).
#[derive(Clone, Copy)]
pub struct Copier {
    routine: Routine,
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
#[error("copy routine {routine} needs {feature}, which this CPU does not have")]
pub struct Unsupported {
    /// The routine asked for.
    pub routine: Routine,
    /// The missing CPU feature.
    pub feature: &'static str,
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
            Routine::NonTemporal => {
                need_avx2(routine)?;
                copy_nt
            }
            #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
            Routine::Erms | Routine::Avx2 | Routine::NonTemporal => {
                return Err(Unsupported {
                    routine,
                    feature: "x86-64",
                })
            }
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
            Routine::Auto => {
                let small: CopyFn = if avx2 { copy_avx2 } else { copy_libc };
                let large: CopyFn = if avx2 { copy_nt } else { copy_libc };
                return Ok(Copier {
                    routine,
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
                let erms = if p.erms_from < p.nt_from {
                    format!("rep movsb from {}", p.erms_from)
                } else {
                    "no rep movsb".into()
                };
                let nt = if p.nt_from == usize::MAX {
                    "never non-temporal (the destination is read back from cache)".to_string()
                } else {
                    format!("non-temporal from {} bytes", p.nt_from)
                };
                let below = if p.erms_from.min(p.nt_from) == usize::MAX {
                    "at every size".to_string()
                } else {
                    format!("below {}", p.erms_from.min(p.nt_from))
                };
                format!("auto: avx2 {below}, {erms}, {nt}")
            }
            r => r.name().to_string(),
        }
    }

    /// Copies `src` into `dst` (lengths must be equal).
    #[inline]
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        let f = if n >= self.policy.nt_from {
            self.large
        } else if n >= self.policy.erms_from {
            self.mid
        } else {
            self.small
        };
        f(dst, src)
    }
}

/// A memcmp variant for the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memcmp {
    /// One byte at a time.
    ByteLoop,
    /// Eight bytes at a time as big-endian words (any alignment: the words are assembled
    /// from bytes, never read through a misaligned pointer), bytes for the tail.
    WordAtATime,
    /// AVX2 compare + movemask, 32 bytes at a time.
    Avx2,
    /// `<[u8]>::cmp`, i.e. libc memcmp.
    Libc,
}

impl Memcmp {
    /// All variants.
    pub const ALL: [Memcmp; 4] = [
        Memcmp::ByteLoop,
        Memcmp::WordAtATime,
        Memcmp::Avx2,
        Memcmp::Libc,
    ];

    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Memcmp::ByteLoop => "byte-loop",
            Memcmp::WordAtATime => "word-at-a-time",
            Memcmp::Avx2 => "avx2",
            Memcmp::Libc => "libc",
        }
    }

    /// The variant as a plain function, resolved once (the CPU test happens here, not per
    /// comparison): `Avx2` falls back to `WordAtATime` on a CPU (or target) without AVX2.
    pub fn comparator(self) -> CompareFn {
        match self {
            Memcmp::ByteLoop => byte_loop,
            Memcmp::WordAtATime => word_at_a_time,
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
            Memcmp::Avx2 if cpu().avx2 => memcmp_avx2,
            Memcmp::Avx2 => word_at_a_time,
            Memcmp::Libc => |a, b| a.cmp(b),
        }
    }

    /// Compares two equal-length buffers like `memcmp`: the order of the first differing byte.
    /// Resolves the variant on each call; loops should call [`Memcmp::comparator`] once.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        self.comparator()(a, b)
    }
}

/// A resolved memcmp variant. Panics if the lengths differ.
pub type CompareFn = fn(&[u8], &[u8]) -> Ordering;

fn byte_loop(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    Ordering::Equal
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn memcmp_avx2(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: both slices hold a.len() bytes; handed out by `comparator` only after AVX2 was
    // detected.
    unsafe { x86::memcmp_avx2(a.as_ptr(), b.as_ptr(), a.len()) }.cmp(&0)
}

fn word_at_a_time(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        // Big-endian words compare in byte order, so the first unequal word decides.
        let x = u64::from_be_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
    }
    ca.remainder().cmp(cb.remainder())
}
