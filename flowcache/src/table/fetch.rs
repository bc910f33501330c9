/// PREFETCHT0 (through `safe_arch`'s safe wrapper; SSE is baseline on x86-64).
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
#[inline(always)]
pub(super) fn line<T>(x: &T) {
    safe_arch::prefetch_t0(x);
}

/// Elsewhere a plain load the CPU need not wait for (its value is never used).
#[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
#[inline(always)]
pub(super) fn line<T: Copy>(x: &T) {
    std::hint::black_box(*x);
}
