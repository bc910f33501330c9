//! The counting global allocator of the no-allocation tests (feature `test-support`).
//!
//! A global allocator belongs to a binary, so this module holds only a macro: a test binary
//! that calls [`counting_allocator!`](crate::counting_allocator) gets a module `counting`
//! whose allocator is installed for the whole binary and counts every allocation and
//! reallocation (and the bytes they ask for) twice: for the process (the pipeline's
//! consumer threads allocate on threads of their own) and for the calling thread (the test
//! harness runs tests in parallel threads, so a thread's count is the test's own). Nothing is
//! compiled into this crate.

/// Installs the counting allocator in this test binary and defines `mod counting` with
/// `allocs()` and `bytes()` (the process's allocations and the bytes they asked for),
/// `thread_allocs()` (the calling thread's) and `assert_installed()`, which fails unless the
/// allocator counts (so a no-allocation test cannot pass because nothing counts). Called
/// without argument it also defines a test that calls `assert_installed`; a binary whose one
/// test counts for the whole process, so must run alone, says `counting_allocator!(one_test)`
/// and calls `counting::assert_installed()` in that test.
///
/// ```
/// zcrx_ring::counting_allocator!();
///
/// fn main() {
///     let before = counting::thread_allocs();
///     let v = std::hint::black_box(vec![0u8; 64]);
///     assert_eq!(counting::thread_allocs() - before, 1);
///     drop(v);
///     assert_eq!(counting::thread_allocs() - before, 1, "freeing is not counted");
/// }
/// ```
#[macro_export]
macro_rules! counting_allocator {
    () => {
        $crate::counting_allocator!(one_test);
        /// Guards the no-allocation tests against passing vacuously.
        #[test]
        fn the_counting_allocator_counts() {
            counting::assert_installed();
        }
    };
    (one_test) => {
        /// The counting global allocator of this test binary
        /// (`zcrx_ring::counting_allocator!`).
        mod counting {
            use ::std::alloc::{GlobalAlloc, Layout, System};
            use ::std::cell::Cell;
            use ::std::sync::atomic::{AtomicU64, Ordering};

            struct Counting;

            static ALLOCS: AtomicU64 = AtomicU64::new(0);
            static BYTES: AtomicU64 = AtomicU64::new(0);
            ::std::thread_local! {
                // A `const` Cell without a destructor: reading it never allocates.
                static THREAD_ALLOCS: Cell<u64> = const { Cell::new(0) };
            }

            /// Allocations (and reallocations) made by the whole process so far.
            #[allow(dead_code)]
            pub fn allocs() -> u64 {
                ALLOCS.load(Ordering::Relaxed)
            }

            /// Bytes asked for by the process's allocations (and reallocations) so far.
            #[allow(dead_code)]
            pub fn bytes() -> u64 {
                BYTES.load(Ordering::Relaxed)
            }

            /// Allocations (and reallocations) made by the calling thread so far.
            #[allow(dead_code)]
            pub fn thread_allocs() -> u64 {
                THREAD_ALLOCS.with(|a| a.get())
            }

            fn count(size: usize) {
                ALLOCS.fetch_add(1, Ordering::Relaxed);
                BYTES.fetch_add(size as u64, Ordering::Relaxed);
                THREAD_ALLOCS.with(|a| a.set(a.get() + 1));
            }

            // A global allocator is unsafe to implement: the only unsafe code of the tests.
            #[allow(unsafe_code)]
            // SAFETY: delegates every call to the system allocator unchanged; only counts.
            unsafe impl GlobalAlloc for Counting {
                unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                    count(layout.size());
                    // SAFETY: same contract as our caller's.
                    unsafe { System.alloc(layout) }
                }
                unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
                    count(new_size);
                    // SAFETY: same contract as our caller's.
                    unsafe { System.realloc(ptr, layout, new_size) }
                }
                unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                    // SAFETY: `ptr` came from `System` with this layout.
                    unsafe { System.dealloc(ptr, layout) }
                }
            }

            #[global_allocator]
            static GLOBAL: Counting = Counting;

            /// Fails unless the allocator is installed and counts on both counters.
            pub fn assert_installed() {
                let (process, thread) = (allocs(), thread_allocs());
                let v = ::std::hint::black_box(vec![1u8; 100]);
                assert!(
                    allocs() > process,
                    "the counting allocator is not installed"
                );
                assert!(thread_allocs() > thread, "the thread's count did not move");
                drop(v);
            }
        }
    };
}
