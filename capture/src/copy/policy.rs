//! [`AutoPolicy`]: which routine `Auto` runs by copy size, from the CPU's caches and the
//! destination's reuse distance.

use super::calibrate::COLD_NT_FROM;
use super::detect::Cpu;

/// Size thresholds of [`Routine::Auto`](crate::copy::Routine::Auto).
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
pub(super) enum Band {
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
    pub(super) fn band(&self, n: usize) -> Band {
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
