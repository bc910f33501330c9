//! What the CPU offers (vector extensions, `rep movsb`'s speed, cache sizes), detected once.

use std::sync::OnceLock;

use super::routine::Routine;

/// Whether this build has the AVX-512 routines (x86-64, built by Rust 1.89 or newer, whose
/// AVX-512 intrinsics are stable; older compilers build the rest, and `Avx512` is then
/// [`Unsupported`](crate::copy::Unsupported) as on a CPU without AVX-512).
pub const AVX512_BUILT: bool = cfg!(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512));

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
