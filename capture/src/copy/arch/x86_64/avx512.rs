//! x86_64 AVX-512 copy and compare routines, built where the compiler has the AVX-512
//! intrinsics (stable since Rust 1.89; `build.rs` probes and sets `zcrx_avx512`). As in
//! `avx2.rs`, every function here is `unsafe`: the caller guarantees AVX-512F and BW and the
//! pointer contract in its `# Safety`.

// Compiled only where the probe found these intrinsics, whatever the crate's MSRV.
#![allow(clippy::incompatible_msrv)]

use std::arch::x86_64::*;

/// The byte mask selecting the first `n` (`<= 64`) lanes of a 64-byte vector.
#[inline(always)]
fn first_lanes(n: usize) -> __mmask64 {
    debug_assert!(n <= 64);
    // n == 0 shifts by 64, which `checked_shr` answers with None: no lane.
    u64::MAX.checked_shr(64 - n as u32).unwrap_or(0)
}

/// AVX-512 copy: up to 64 bytes in one masked load and store (no size classes), up to 512
/// with overlapping head/tail vectors and no loop, above that head/tail vectors around a body of
/// 64-byte-aligned stores (one cache line each) unrolled 4x. With `STREAM`, as
/// [`super::avx2::copy_avx2`]: the body in non-temporal stores, then `sfence`.
///
/// # Safety
/// As [`super::erms::copy_erms`], and AVX-512F and AVX-512BW are available.
///
/// One cascade of length tests, as [`super::avx2::copy_avx2`]: each size class a function of
/// its own with its own SAFETY reasoning, inlined here (`#[inline(always)]`), so that they run
/// under this `target_feature` and the copy compiles to the one body it was written as.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn copy_avx512<const STREAM: bool>(dst: *mut u8, src: *const u8, n: usize) {
    if n <= 64 {
        let k = first_lanes(n);
        // SAFETY: lanes outside the mask `k` (the first `n` bytes) are neither read nor
        // written, and a masked-off lane does not fault (AVX-512 fault suppression): only
        // `src[..n]` is read and `dst[..n]` written.
        unsafe {
            let v = _mm512_maskz_loadu_epi8(k, src.cast());
            _mm512_mask_storeu_epi8(dst.cast(), k, v);
        }
        return;
    }
    if n <= 256 {
        // SAFETY: forwarded contract, 64 < n <= 256; AVX-512F and BW are enabled here.
        unsafe { copy_to_256(dst, src, n) };
        return;
    }
    if n <= 512 {
        // SAFETY: forwarded contract, 256 < n <= 512; AVX-512F and BW are enabled here.
        unsafe { copy_to_512(dst, src, n) };
        return;
    }
    // SAFETY: forwarded contract, n > 512; AVX-512F and BW are enabled here.
    unsafe { copy_large::<STREAM>(dst, src, n) }
}

/// [`copy_avx512`] of 65..=256 bytes: overlapping head and tail vectors, no loop.
///
/// # Safety
/// As [`copy_avx512`], and `64 < n <= 256`. Called only from [`copy_avx512`], into which it is
/// always inlined, so AVX-512F and BW are enabled where it runs.
#[inline(always)]
unsafe fn copy_to_256(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: 64 < n <= 256: every load and store is within the first and last 64 or
    // 128 bytes of the ranges; all loads happen before any store.
    unsafe {
        let h0 = _mm512_loadu_si512(src.cast());
        let t0 = _mm512_loadu_si512(src.add(n - 64).cast());
        if n <= 128 {
            _mm512_storeu_si512(dst.cast(), h0);
            _mm512_storeu_si512(dst.add(n - 64).cast(), t0);
            return;
        }
        let h1 = _mm512_loadu_si512(src.add(64).cast());
        let t1 = _mm512_loadu_si512(src.add(n - 128).cast());
        _mm512_storeu_si512(dst.cast(), h0);
        _mm512_storeu_si512(dst.add(64).cast(), h1);
        _mm512_storeu_si512(dst.add(n - 128).cast(), t1);
        _mm512_storeu_si512(dst.add(n - 64).cast(), t0);
    }
}

/// [`copy_avx512`] of 257..=512 bytes: four head and four tail vectors, no loop.
///
/// # Safety
/// As [`copy_avx512`], and `256 < n <= 512`. Called only from [`copy_avx512`], into which it is
/// always inlined, so AVX-512F and BW are enabled where it runs.
#[inline(always)]
unsafe fn copy_to_512(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: 256 < n <= 512: every load and store is within the first and last 256
    // bytes of the ranges; all loads happen before any store.
    unsafe {
        let h0 = _mm512_loadu_si512(src.cast());
        let h1 = _mm512_loadu_si512(src.add(64).cast());
        let h2 = _mm512_loadu_si512(src.add(128).cast());
        let h3 = _mm512_loadu_si512(src.add(192).cast());
        let t3 = _mm512_loadu_si512(src.add(n - 256).cast());
        let t2 = _mm512_loadu_si512(src.add(n - 192).cast());
        let t1 = _mm512_loadu_si512(src.add(n - 128).cast());
        let t0 = _mm512_loadu_si512(src.add(n - 64).cast());
        _mm512_storeu_si512(dst.cast(), h0);
        _mm512_storeu_si512(dst.add(64).cast(), h1);
        _mm512_storeu_si512(dst.add(128).cast(), h2);
        _mm512_storeu_si512(dst.add(192).cast(), h3);
        _mm512_storeu_si512(dst.add(n - 256).cast(), t3);
        _mm512_storeu_si512(dst.add(n - 192).cast(), t2);
        _mm512_storeu_si512(dst.add(n - 128).cast(), t1);
        _mm512_storeu_si512(dst.add(n - 64).cast(), t0);
    }
}

/// [`copy_avx512`] above 512 bytes: head and tail vectors around a body of 64-byte-aligned
/// stores (one cache line each) unrolled 4x (non-temporal with `STREAM`, then `sfence`).
///
/// # Safety
/// As [`copy_avx512`], and `n > 512`. Called only from [`copy_avx512`], into which it is
/// always inlined, so AVX-512F and BW are enabled where it runs.
#[inline(always)]
unsafe fn copy_large<const STREAM: bool>(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: n > 512, so head (first 64) and tail (last 64) are in bounds; the body loops
    // write only within dst[skip..n-64] at 64-byte-aligned addresses (skip is 1..=64) and
    // read the same offsets of src; the head and tail stores cover what the body skips.
    unsafe {
        let head = _mm512_loadu_si512(src.cast());
        let tail = _mm512_loadu_si512(src.add(n - 64).cast());
        let skip = 64 - (dst as usize & 63);
        let mut d = dst.add(skip);
        let mut s = src.add(skip);
        let end = dst.add(n - 64);
        while (end as usize) - (d as usize) >= 256 {
            let a = _mm512_loadu_si512(s.cast());
            let b = _mm512_loadu_si512(s.add(64).cast());
            let c = _mm512_loadu_si512(s.add(128).cast());
            let e = _mm512_loadu_si512(s.add(192).cast());
            if STREAM {
                _mm512_stream_si512(d.cast(), a);
                _mm512_stream_si512(d.add(64).cast(), b);
                _mm512_stream_si512(d.add(128).cast(), c);
                _mm512_stream_si512(d.add(192).cast(), e);
            } else {
                _mm512_store_si512(d.cast(), a);
                _mm512_store_si512(d.add(64).cast(), b);
                _mm512_store_si512(d.add(128).cast(), c);
                _mm512_store_si512(d.add(192).cast(), e);
            }
            d = d.add(256);
            s = s.add(256);
        }
        while d < end {
            let a = _mm512_loadu_si512(s.cast());
            if STREAM {
                _mm512_stream_si512(d.cast(), a);
            } else {
                _mm512_store_si512(d.cast(), a);
            }
            d = d.add(64);
            s = s.add(64);
        }
        _mm512_storeu_si512(dst.cast(), head);
        _mm512_storeu_si512(dst.add(n - 64).cast(), tail);
        if STREAM {
            // As in `copy_avx2`: fence the weakly ordered stores before publication.
            _mm_sfence();
        }
    }
}

/// AVX-512 compare of `n` bytes, like [`super::avx2::memcmp_avx2`]: 256 bytes per step while
/// they are equal, then 64, the last partial step a masked load (no byte loop, no
/// overlapping reload).
///
/// # Safety
/// `a` and `b` are valid for `n` reads; AVX-512F and AVX-512BW are available.
#[cfg(feature = "test-support")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn memcmp_avx512(a: *const u8, b: *const u8, n: usize) -> i32 {
    let at = |i: usize| -> i32 {
        // SAFETY: the caller passes i < n, within both ranges.
        unsafe { i32::from(*a.add(i)) - i32::from(*b.add(i)) }
    };
    let mut i = 0;
    // SAFETY: every load is at offset i with i + 256 <= n.
    unsafe {
        // Four vectors a step, one test for all of them: a difference anywhere stops the
        // loop and the one-vector loop below finds the first differing byte.
        while i + 256 <= n {
            let d0 = _mm512_xor_si512(
                _mm512_loadu_si512(a.add(i).cast()),
                _mm512_loadu_si512(b.add(i).cast()),
            );
            let d1 = _mm512_xor_si512(
                _mm512_loadu_si512(a.add(i + 64).cast()),
                _mm512_loadu_si512(b.add(i + 64).cast()),
            );
            let d2 = _mm512_xor_si512(
                _mm512_loadu_si512(a.add(i + 128).cast()),
                _mm512_loadu_si512(b.add(i + 128).cast()),
            );
            let d3 = _mm512_xor_si512(
                _mm512_loadu_si512(a.add(i + 192).cast()),
                _mm512_loadu_si512(b.add(i + 192).cast()),
            );
            let any = _mm512_or_si512(_mm512_or_si512(d0, d1), _mm512_or_si512(d2, d3));
            if _mm512_test_epi64_mask(any, any) != 0 {
                break;
            }
            i += 256;
        }
    }
    // SAFETY: every full load is at offset i with i + 64 <= n.
    unsafe {
        while i + 64 <= n {
            let x = _mm512_loadu_si512(a.add(i).cast());
            let y = _mm512_loadu_si512(b.add(i).cast());
            let ne = _mm512_cmpneq_epi8_mask(x, y);
            if ne != 0 {
                return at(i + ne.trailing_zeros() as usize);
            }
            i += 64;
        }
    }
    if i < n {
        let k = first_lanes(n - i);
        // SAFETY: only the first n - i lanes from offset i (within both ranges) are read; a
        // masked-off lane does not fault.
        let ne = unsafe {
            let x = _mm512_maskz_loadu_epi8(k, a.add(i).cast());
            let y = _mm512_maskz_loadu_epi8(k, b.add(i).cast());
            _mm512_mask_cmpneq_epi8_mask(k, x, y)
        };
        if ne != 0 {
            return at(i + ne.trailing_zeros() as usize);
        }
    }
    0
}
