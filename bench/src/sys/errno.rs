//! System calls' returns checked: `errno` as an `io::Error`, EAGAIN as nothing queued, and
//! MAP_FAILED.

use std::io;
use std::ptr::NonNull;

pub(super) fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A non-blocking receive's return: `Ok(None)` when nothing was queued (EAGAIN), the
/// length otherwise, `errno` for any other failure.
pub(super) fn check_nonblocking(ret: isize) -> io::Result<Option<usize>> {
    if ret >= 0 {
        return Ok(Some(ret as usize));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(None)
    } else {
        Err(e)
    }
}

/// An `mmap`/`mremap` return: the mapping, or `errno` for MAP_FAILED.
pub(super) fn check_map(p: *mut libc::c_void) -> io::Result<NonNull<u8>> {
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(p.cast()).expect("a successful mmap is non-null"))
}
