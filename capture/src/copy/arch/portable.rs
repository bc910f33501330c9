//! The portable routines: libc's copy, here on every target (and the only routine off
//! x86-64, or with `--cfg zcrx_portable`).

pub(in crate::copy) fn copy_libc(dst: &mut [u8], src: &[u8]) {
    dst.copy_from_slice(src);
}

/// Evicts nothing: off x86-64 the calibration's cold destination is only one not written
/// for a while.
#[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
pub(in crate::copy) fn evict(buf: &[u8]) {
    let _ = buf;
}
