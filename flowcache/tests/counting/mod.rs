//! A global allocator that counts allocations per thread (tests run in parallel threads),
//! for the no-allocation tests. A test binary that declares `mod counting;` installs it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made by this thread so far.
pub fn allocs() -> usize {
    ALLOCS.with(|a| a.get())
}

// A global allocator is unsafe to implement: the only unsafe code of these tests.
#[allow(unsafe_code)]
// SAFETY: delegates every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Guards the no-allocation tests against passing vacuously: the allocator is installed.
#[test]
fn the_counting_allocator_counts() {
    let before = allocs();
    let v = std::hint::black_box(vec![1u8; 100]);
    assert!(allocs() > before, "allocator not installed");
    drop(v);
}
