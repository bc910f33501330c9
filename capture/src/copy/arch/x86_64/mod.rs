//! The x86-64 routines behind safe functions: each checks its contract (equal lengths; the
//! CPU feature, detected before the function is handed out) and calls its routine.

pub(crate) mod avx2;
// The AVX-512 routines, where the compiler has the intrinsics (Rust >= 1.89: `build.rs`).
#[cfg(zcrx_avx512)]
pub(crate) mod avx512;
mod cache;
mod erms;

use crate::copy::detect::cpu;
use crate::copy::routine::CopyFn;

pub(super) fn copy_erms(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    // SAFETY: equal lengths; `&mut` and `&` slices never overlap. `rep movsb` needs no CPU
    // feature to be correct (ERMS only makes it fast).
    unsafe { erms::copy_erms(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

pub(super) fn copy_avx2(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: equal lengths, no overlap; this function is only handed out by `Copier::new`
    // after AVX2 was detected.
    unsafe { avx2::copy_avx2::<false>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

pub(super) fn copy_nt(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: as `copy_avx2`; the routine ends with sfence.
    unsafe { avx2::copy_avx2::<true>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(zcrx_avx512)]
fn copy_avx512(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx512);
    // SAFETY: equal lengths, no overlap; handed out by `avx512_copies` only after AVX-512F
    // and BW were detected.
    unsafe { avx512::copy_avx512::<false>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

#[cfg(zcrx_avx512)]
fn copy_nt512(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy: length mismatch");
    debug_assert!(cpu().avx512);
    // SAFETY: as `copy_avx512`; the routine ends with sfence.
    unsafe { avx512::copy_avx512::<true>(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

/// The AVX-512 copy and its streaming form, where the CPU has AVX-512F and BW and this
/// build the routines.
pub(super) fn avx512_copies() -> Option<(CopyFn, CopyFn)> {
    #[cfg(zcrx_avx512)]
    if cpu().avx512 {
        return Some((copy_avx512, copy_nt512));
    }
    None
}

/// Evicts `buf`'s lines from every cache level: the calibration's cold destination.
pub(in crate::copy) fn evict(buf: &[u8]) {
    // SAFETY: `buf` is valid for `buf.len()` reads.
    unsafe { cache::evict_lines(buf.as_ptr(), buf.len()) }
}
