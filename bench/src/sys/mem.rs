//! Anonymous mappings, for the remap micro-benchmark and the AF_XDP and io_uring buffers.

use std::io;
use std::ptr::NonNull;

use super::errno::check_map;

/// An anonymous private mapping, unmapped on drop.
pub struct Anon {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain memory, no thread affinity.
unsafe impl Send for Anon {}
// SAFETY: shared access only reads through `as_slice`.
unsafe impl Sync for Anon {}

impl Anon {
    /// `mmap(len)`, populated.
    pub fn new(len: usize) -> io::Result<Self> {
        // SAFETY: anonymous mapping, no fd.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Ok(Anon {
            ptr: check_map(p)?,
            len,
        })
    }
    /// The mapping's first byte (for memory shared with the kernel, where a slice over the
    /// whole mapping would claim bytes the kernel may be writing).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    /// The whole mapping, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
    /// The whole mapping.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as above, shared.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    /// Moves the pages of `self` to a new address with `mremap(MREMAP_MAYMOVE)`: no copy, page
    /// tables are moved and the old range's TLB entries flushed.
    pub fn remap_moving(self) -> io::Result<Anon> {
        // Reserve a destination range so the kernel must move, not extend in place.
        let target = Anon::reserve(self.len)?;
        // SAFETY: `self` owns [ptr, ptr+len); `target` is a mapping of the same length that
        // MREMAP_FIXED replaces; ownership of the pages moves to the new address.
        let p = unsafe {
            libc::mremap(
                self.ptr.as_ptr().cast(),
                self.len,
                self.len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                target.ptr.as_ptr().cast::<libc::c_void>(),
            )
        };
        let moved = Anon {
            ptr: check_map(p)?,
            len: self.len,
        };
        std::mem::forget(self); // its range no longer exists
        std::mem::forget(target); // replaced by `moved`
        Ok(moved)
    }
    fn reserve(len: usize) -> io::Result<Anon> {
        // SAFETY: anonymous PROT_NONE reservation.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        Ok(Anon {
            ptr: check_map(p)?,
            len,
        })
    }
    /// `munmap` now (drop does the same).
    pub fn unmap(self) {}
}

impl Drop for Anon {
    fn drop(&mut self) {
        // SAFETY: we own the mapping.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
