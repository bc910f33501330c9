//! Cache-line flushes (`clflush`, SSE2, baseline on x86-64): the calibration's cold
//! destination.

use std::arch::x86_64::*;

/// Writes back and evicts from every cache level the lines of `p[..n]` (`clflush`, SSE2,
/// baseline on x86-64), then waits for that (`mfence`): the calibration's cold destination.
///
/// # Safety
/// `p` is valid for `n` reads.
pub unsafe fn evict_lines(p: *const u8, n: usize) {
    let mut i = 0;
    while i < n {
        // SAFETY: `p + i` is within `p[..n]` (the caller's contract); clflush only needs a
        // readable address.
        unsafe { _mm_clflush(p.add(i)) };
        i += 64;
    }
    if n > 0 {
        // SAFETY: the last line, whatever the alignment of `p`.
        unsafe { _mm_clflush(p.add(n - 1)) };
    }
    // SAFETY: a fence has no operands.
    unsafe { _mm_mfence() };
}
