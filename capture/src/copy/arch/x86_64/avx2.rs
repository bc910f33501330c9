//! The AVX2 copy and compare routines. Every function here is `unsafe`: the caller
//! guarantees AVX2 and the pointer contract in its `# Safety`.

use std::arch::x86_64::*;

/// Copies 0..=64 bytes with overlapping loads (no loop, no byte-by-byte tail).
///
/// # Safety
/// As [`copy_erms`](super::erms::copy_erms), `n <= 64`, and AVX2 is available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn copy_small(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: every access is within `src[..n]` / `dst[..n]` (each size class reads and writes
    // its first and last `k` bytes with `k <= n`), and the ranges do not overlap.
    unsafe {
        if n >= 32 {
            let a = _mm256_loadu_si256(src.cast());
            let b = _mm256_loadu_si256(src.add(n - 32).cast());
            _mm256_storeu_si256(dst.cast(), a);
            _mm256_storeu_si256(dst.add(n - 32).cast(), b);
        } else if n >= 16 {
            let a = _mm_loadu_si128(src.cast());
            let b = _mm_loadu_si128(src.add(n - 16).cast());
            _mm_storeu_si128(dst.cast(), a);
            _mm_storeu_si128(dst.add(n - 16).cast(), b);
        } else if n >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else if n >= 2 {
            let a = src.cast::<u16>().read_unaligned();
            let b = src.add(n - 2).cast::<u16>().read_unaligned();
            dst.cast::<u16>().write_unaligned(a);
            dst.add(n - 2).cast::<u16>().write_unaligned(b);
        } else if n == 1 {
            *dst = *src;
        }
    }
}

/// AVX2 copy: up to 256 bytes with overlapping head/tail vectors and no loop; above that,
/// head/tail vectors around a body of 32-byte-aligned stores unrolled 4x.
/// With `stream`, the aligned body uses non-temporal stores and the copy ends with `sfence`,
/// so the bytes are globally visible before the caller publishes the buffer to another thread.
///
/// # Safety
/// As [`copy_erms`](super::erms::copy_erms), and AVX2 is available.
///
/// One cascade of length tests, each size class a function of its own with its own SAFETY
/// reasoning, inlined here (`#[inline(always)]`): they run under this `target_feature`, and
/// the copy compiles to the one body it was written as.
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn copy_avx2<const STREAM: bool>(dst: *mut u8, src: *const u8, n: usize) {
    if n <= 64 {
        // SAFETY: forwarded contract, n <= 64.
        unsafe { copy_small(dst, src, n) };
        return;
    }
    if n <= 256 {
        // SAFETY: forwarded contract, 64 < n <= 256; AVX2 is enabled here.
        unsafe { copy_to_256(dst, src, n) };
        return;
    }
    // SAFETY: forwarded contract, n > 256; AVX2 is enabled here.
    unsafe { copy_large::<STREAM>(dst, src, n) }
}

/// [`copy_avx2`] of 65..=256 bytes: overlapping head and tail vectors, no loop.
///
/// # Safety
/// As [`copy_avx2`], and `64 < n <= 256`. Called only from [`copy_avx2`], into which it is
/// always inlined, so AVX2 is enabled where it runs.
#[inline(always)]
unsafe fn copy_to_256(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: 64 < n <= 256: all loads and stores are within the first and last
    // 64 or 128 bytes of the ranges; all loads happen before any store.
    unsafe {
        let h0 = _mm256_loadu_si256(src.cast());
        let h1 = _mm256_loadu_si256(src.add(32).cast());
        let t0 = _mm256_loadu_si256(src.add(n - 64).cast());
        let t1 = _mm256_loadu_si256(src.add(n - 32).cast());
        if n <= 128 {
            _mm256_storeu_si256(dst.cast(), h0);
            _mm256_storeu_si256(dst.add(32).cast(), h1);
            _mm256_storeu_si256(dst.add(n - 64).cast(), t0);
            _mm256_storeu_si256(dst.add(n - 32).cast(), t1);
            return;
        }
        let h2 = _mm256_loadu_si256(src.add(64).cast());
        let h3 = _mm256_loadu_si256(src.add(96).cast());
        let t2 = _mm256_loadu_si256(src.add(n - 128).cast());
        let t3 = _mm256_loadu_si256(src.add(n - 96).cast());
        _mm256_storeu_si256(dst.cast(), h0);
        _mm256_storeu_si256(dst.add(32).cast(), h1);
        _mm256_storeu_si256(dst.add(64).cast(), h2);
        _mm256_storeu_si256(dst.add(96).cast(), h3);
        _mm256_storeu_si256(dst.add(n - 128).cast(), t2);
        _mm256_storeu_si256(dst.add(n - 96).cast(), t3);
        _mm256_storeu_si256(dst.add(n - 64).cast(), t0);
        _mm256_storeu_si256(dst.add(n - 32).cast(), t1);
    }
}

/// [`copy_avx2`] above 256 bytes: head and tail vectors around a body of 32-byte-aligned
/// stores unrolled 4x (non-temporal with `STREAM`, then `sfence`).
///
/// # Safety
/// As [`copy_avx2`], and `n > 256`. Called only from [`copy_avx2`], into which it is always
/// inlined, so AVX2 is enabled where it runs.
#[inline(always)]
unsafe fn copy_large<const STREAM: bool>(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: n > 64, so head (first 32) and tail (last 32) are in bounds; the body loop
    // writes only within dst[skip..n-32] at 32-byte-aligned addresses and reads the same
    // offsets of src; the head and tail stores cover what the aligned body skips.
    unsafe {
        let head = _mm256_loadu_si256(src.cast());
        let tail = _mm256_loadu_si256(src.add(n - 32).cast());
        let skip = 32 - (dst as usize & 31);
        let mut d = dst.add(skip);
        let mut s = src.add(skip);
        let end = dst.add(n - 32);
        while (end as usize) - (d as usize) >= 128 {
            let a = _mm256_loadu_si256(s.cast());
            let b = _mm256_loadu_si256(s.add(32).cast());
            let c = _mm256_loadu_si256(s.add(64).cast());
            let e = _mm256_loadu_si256(s.add(96).cast());
            if STREAM {
                _mm256_stream_si256(d.cast(), a);
                _mm256_stream_si256(d.add(32).cast(), b);
                _mm256_stream_si256(d.add(64).cast(), c);
                _mm256_stream_si256(d.add(96).cast(), e);
            } else {
                _mm256_store_si256(d.cast(), a);
                _mm256_store_si256(d.add(32).cast(), b);
                _mm256_store_si256(d.add(64).cast(), c);
                _mm256_store_si256(d.add(96).cast(), e);
            }
            d = d.add(128);
            s = s.add(128);
        }
        while d < end {
            let a = _mm256_loadu_si256(s.cast());
            if STREAM {
                _mm256_stream_si256(d.cast(), a);
            } else {
                _mm256_store_si256(d.cast(), a);
            }
            d = d.add(32);
            s = s.add(32);
        }
        _mm256_storeu_si256(dst.cast(), head);
        _mm256_storeu_si256(dst.add(n - 32).cast(), tail);
        if STREAM {
            // Streaming stores are weakly ordered: fence them before anyone is told the
            // buffer is ready.
            _mm_sfence();
        }
    }
}

/// AVX2 compare of `n` bytes: the sign of the first differing byte (as unsigned), like memcmp.
///
/// # Safety
/// `a` and `b` are valid for `n` reads; AVX2 is available.
#[cfg(feature = "test-support")]
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn memcmp_avx2(a: *const u8, b: *const u8, n: usize) -> i32 {
    let first_diff = |i: usize| -> i32 {
        // SAFETY: i < n, within both ranges.
        unsafe { i32::from(*a.add(i)) - i32::from(*b.add(i)) }
    };
    let mut i = 0;
    // SAFETY: every 32-byte load is at offset i with i + 32 <= n.
    unsafe {
        while i + 32 <= n {
            let x = _mm256_loadu_si256(a.add(i).cast());
            let y = _mm256_loadu_si256(b.add(i).cast());
            let eq = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)) as u32;
            if eq != u32::MAX {
                return first_diff(i + (!eq).trailing_zeros() as usize);
            }
            i += 32;
        }
    }
    if n >= 32 && i < n {
        // Overlapping last vector: the bytes before `i` are already known to be equal.
        let j = n - 32;
        // SAFETY: j + 32 == n.
        let eq = unsafe {
            let x = _mm256_loadu_si256(a.add(j).cast());
            let y = _mm256_loadu_si256(b.add(j).cast());
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)) as u32
        };
        return if eq == u32::MAX {
            0
        } else {
            first_diff(j + (!eq).trailing_zeros() as usize)
        };
    }
    while i < n {
        let d = first_diff(i);
        if d != 0 {
            return d;
        }
        i += 1;
    }
    0
}
