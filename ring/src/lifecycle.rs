//! The life cycle of one ring block, as a small state machine over three atomics plus the
//! block's `block_status` word (shared with the kernel). This is the only code that decides
//! who owns a block; [`crate::mem`] wraps it in the public `Block`/`Lease` types.
//!
//! The full description (states, transitions, which atomic orders what) is in
//! `ring/LIFECYCLE.md`. In short:
//!
//! ```text
//!  KERNEL ──kernel fills, smp_wmb, status=USER──▶ USER, unclaimed
//!     ▲                                               │ try_take: claim (CAS held), then
//!     │                                               │ check status USER (else unclaim)
//!     │                                               ▼
//!     └── hand_back: status=KERNEL (Release),   taken: shares ≥ 1, generation g
//!         then held=false (Release)    ◀── last put (shares → 0, Acquire fence)
//! ```
//!
//! The atomics come from [`crate::sync`], so the same code runs under loom
//! (`RUSTFLAGS="--cfg loom"`, models at the end of this file).

use crate::sync::{fence, AtomicBool, AtomicU32, Ordering};

/// `TP_STATUS_KERNEL` (linux/if_packet.h).
pub(crate) const STATUS_KERNEL: u32 = 0;
/// `TP_STATUS_USER` (linux/if_packet.h).
pub(crate) const STATUS_USER: u32 = 1;

/// The most shares a block may have, as `Arc` limits its count to `isize::MAX`: far above
/// anything real code makes, far enough below `u32::MAX` that racing increments between the
/// check and an abort cannot wrap the count.
pub(crate) const MAX_SHARES: u32 = u32::MAX / 2;

/// A block's `block_status` word: in ring memory for real rings (std atomics there, the
/// kernel's side of the protocol), a model atomic under loom.
pub(crate) trait StatusWord {
    fn load(&self, order: Ordering) -> u32;
    fn store(&self, value: u32, order: Ordering);
}

impl StatusWord for std::sync::atomic::AtomicU32 {
    #[inline]
    fn load(&self, order: Ordering) -> u32 {
        std::sync::atomic::AtomicU32::load(self, order)
    }
    #[inline]
    fn store(&self, value: u32, order: Ordering) {
        std::sync::atomic::AtomicU32::store(self, value, order)
    }
}

#[cfg(loom)]
impl StatusWord for loom::sync::atomic::AtomicU32 {
    fn load(&self, order: Ordering) -> u32 {
        loom::sync::atomic::AtomicU32::load(self, order)
    }
    fn store(&self, value: u32, order: Ordering) {
        loom::sync::atomic::AtomicU32::store(self, value, order)
    }
}

/// Ownership state of one block (ours; the status word is shared with the kernel).
#[derive(Debug)]
pub(crate) struct BlockState {
    /// The claim: set by the one taker that won the block, cleared after hand-back. While it
    /// is set, nobody else takes or re-arms the block.
    held: AtomicBool,
    /// Outstanding shares of the current take (the `Block` itself and every `Lease`).
    shares: AtomicU32,
    /// Take counter: stamped into every descriptor, so a descriptor of an earlier take of the
    /// same block is refused. Written only by the claim holder.
    generation: AtomicU32,
}

impl Default for BlockState {
    fn default() -> Self {
        BlockState {
            held: AtomicBool::new(false),
            shares: AtomicU32::new(0),
            generation: AtomicU32::new(0),
        }
    }
}

impl BlockState {
    /// Whether the block is taken (claimed) by us.
    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// Takes the block if it is user-owned and nobody holds it: one share, a new
    /// generation (returned).
    pub(crate) fn try_take(&self, status: &impl StatusWord) -> Option<u32> {
        // Claim first, then look: between a look and a claim another taker could take the
        // block, read it and hand it back to the kernel. Acquire pairs with the Release that
        // cleared the claim in `hand_back`/`rearm`, so the status read below is at least as
        // new as that hand-back's KERNEL.
        if self
            .held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        // Acquire: pairs with the kernel's smp_wmb before it sets TP_STATUS_USER, so every
        // byte it wrote into the block is visible before we read it.
        if status.load(Ordering::Acquire) & STATUS_USER == 0 {
            // Still the kernel's: give the claim up untouched.
            self.held.store(false, Ordering::Release);
            return None;
        }
        // We hold the claim alone: nobody else writes these two until we release it.
        self.shares.store(1, Ordering::Relaxed);
        let generation = self.generation.load(Ordering::Relaxed).wrapping_add(1);
        self.generation.store(generation, Ordering::Relaxed);
        Some(generation)
    }

    /// Adds `k` shares to a taken block (a live share must exist: the caller holds one).
    /// Aborts the process if the count would pass [`MAX_SHARES`] (leases leaked with
    /// `mem::forget` by the billion), as `Arc::clone` does: wrapping would hand the block
    /// back under live references.
    #[inline]
    pub(crate) fn share(&self, k: u32) {
        // Relaxed: as in `Arc::clone`, a new share is derived from a live one, so the count
        // cannot reach zero concurrently; it is published to other threads by whatever
        // carries the lease there (a channel, a spawn), which orders it.
        let old = self.shares.fetch_add(k, Ordering::Relaxed);
        if old > MAX_SHARES || k > MAX_SHARES - old {
            std::process::abort();
        }
    }

    /// Drops `k` shares; the last one hands the block back (status KERNEL, then the claim
    /// released). Returns whether it did.
    #[inline]
    pub(crate) fn put(&self, k: u32, status: &impl StatusWord) -> bool {
        // Release: this holder's reads of the block happen before the decrement; the last
        // decrement's Acquire fence then orders every holder's reads before the hand-back.
        let old = self.shares.fetch_sub(k, Ordering::Release);
        debug_assert!(old >= k, "more shares dropped than made");
        if old != k {
            return false;
        }
        fence(Ordering::Acquire);
        self.hand_back(status);
        true
    }

    fn hand_back(&self, status: &impl StatusWord) {
        // Release: the kernel may overwrite the block as soon as it sees KERNEL; all our
        // reads of it happen before (af_packet.c reads the status, then smp_rmb).
        status.store(STATUS_KERNEL, Ordering::Release);
        // Release: pairs with the taker's Acquire claim, so a later taker sees KERNEL (or
        // the kernel's later USER), never our stale USER.
        self.held.store(false, Ordering::Release);
    }

    /// Synthetic rings: plays the kernel's part. If nobody holds the block and it is
    /// kernel-owned, `refill` rewrites it and, if it returns true, the block becomes
    /// user-owned again.
    pub(crate) fn rearm(&self, status: &impl StatusWord, refill: impl FnOnce() -> bool) {
        if self.claim_kernel_owned(status) {
            let filled = refill();
            self.end_refill(status, filled);
        }
    }

    /// First half of [`BlockState::rearm`]: claims the block, as a taker does, if it is
    /// kernel-owned (then nobody can take it while it is rewritten). `false`: it is held or
    /// already user-owned, and nothing changed.
    pub(crate) fn claim_kernel_owned(&self, status: &impl StatusWord) -> bool {
        if self
            .held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if status.load(Ordering::Acquire) & STATUS_USER != 0 {
            self.held.store(false, Ordering::Release);
            return false;
        }
        true
    }

    /// Second half of [`BlockState::rearm`]: a filled block becomes user-owned, and the
    /// claim is released.
    pub(crate) fn end_refill(&self, status: &impl StatusWord, filled: bool) {
        if filled {
            // Release: the refill is visible to whoever next sees USER (the kernel's smp_wmb).
            status.store(STATUS_USER, Ordering::Release);
        }
        // Release: the next taker's claim sees the status above.
        self.held.store(false, Ordering::Release);
    }

    /// The share count (loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn shares(&self) -> u32 {
        self.shares.load(Ordering::Relaxed)
    }

    /// Sets the share count (tests of the overflow guard).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn set_shares_for_test(&self, n: u32) {
        self.shares.store(n, Ordering::Relaxed);
    }
}

/// Loom models of the block life cycle: `RUSTFLAGS="--cfg loom" cargo test -p zcrx-ring
/// --lib --release loom` (scripts/loom.sh). A "kernel" thread refills the block whenever it
/// sees KERNEL, writing its bytes through a loom cell, so loom reports any read of the
/// block that is not ordered against that write, and every taker asserts that the status
/// is USER for as long as it holds the block.
#[cfg(all(test, loom))]
#[allow(unsafe_code)] // the model shares a loom cell between threads
mod loom_models {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    /// One block: its status word, its bytes (a counter the kernel bumps on every refill),
    /// and our ownership state.
    struct Model {
        status: loom::sync::atomic::AtomicU32,
        bytes: UnsafeCell<u32>,
        state: BlockState,
    }

    // SAFETY: `bytes` is only touched under the protocol being checked; loom's cell reports
    // every unsynchronised access, which is the point of the model.
    unsafe impl Sync for Model {}

    impl Model {
        fn new(status: u32) -> Arc<Self> {
            Arc::new(Model {
                status: loom::sync::atomic::AtomicU32::new(status),
                bytes: UnsafeCell::new(0),
                state: BlockState::default(),
            })
        }

        /// The kernel's side: if it owns the block, fill it and hand it to user space
        /// (af_packet.c: write frames, smp_wmb, status = USER).
        fn kernel_fill(&self) {
            if self.status.load(Ordering::Acquire) == STATUS_KERNEL {
                self.bytes.with_mut(|p| {
                    // SAFETY: checked by loom: the kernel owns the block here.
                    unsafe { *p += 1 }
                });
                self.status.store(STATUS_USER, Ordering::Release);
            }
        }

        /// A holder's read of the block: the status must be USER while any share lives.
        fn read(&self) -> u32 {
            assert_eq!(
                self.status.load(Ordering::Relaxed),
                STATUS_USER,
                "a held block is kernel-owned"
            );
            self.bytes.with(|p| {
                // SAFETY: checked by loom: we hold a share of a user-owned block.
                unsafe { *p }
            })
        }

        /// The synthetic ring's refill: the same write the kernel does, through `rearm`.
        fn rearm(&self) {
            self.state.rearm(&self.status, || {
                self.bytes.with_mut(|p| {
                    // SAFETY: checked by loom: rearm claims the block before writing.
                    unsafe { *p += 1 }
                });
                true
            });
        }

        fn take(&self) -> Option<u32> {
            self.state.try_take(&self.status)
        }

        fn put(&self, k: u32) -> bool {
            self.state.put(k, &self.status)
        }
    }

    /// Runs `f` under every interleaving loom explores (bounded by LOOM_MAX_PREEMPTIONS
    /// when set) and prints how many that was.
    fn model(name: &str, f: impl Fn() + Sync + Send + 'static) {
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = runs.clone();
        loom::model::Builder::new().check(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            f()
        });
        println!(
            "loom model {name}: {} interleavings explored",
            runs.load(std::sync::atomic::Ordering::Relaxed)
        );
    }

    /// Taker vs taker: two threads take, read and hand back the same block, twice
    /// each, while the kernel refills it twice. Nobody may take a block the other handed
    /// back to the kernel.
    #[test]
    fn loom_taker_vs_taker() {
        model("taker_vs_taker", || {
            let m = Model::new(STATUS_USER);
            let others: Vec<_> = (0..2)
                .map(|_| {
                    let m = m.clone();
                    thread::spawn(move || {
                        for _ in 0..2 {
                            if m.take().is_some() {
                                m.read();
                                m.put(1);
                            }
                        }
                    })
                })
                .collect();
            m.kernel_fill();
            m.kernel_fill();
            for t in others {
                t.join().unwrap();
            }
        });
    }

    /// Three takers against the kernel: at most one holds the block at any time, and only
    /// while it is user-owned.
    #[test]
    fn loom_three_takers() {
        model("three_takers", || {
            let m = Model::new(STATUS_USER);
            let holders = Arc::new(loom::sync::atomic::AtomicU32::new(0));
            let others: Vec<_> = (0..3)
                .map(|_| {
                    let (m, holders) = (m.clone(), holders.clone());
                    thread::spawn(move || {
                        if m.take().is_some() {
                            assert_eq!(holders.fetch_add(1, Ordering::Relaxed), 0);
                            m.read();
                            holders.fetch_sub(1, Ordering::Relaxed);
                            m.put(1);
                        }
                    })
                })
                .collect();
            m.kernel_fill();
            for t in others {
                t.join().unwrap();
            }
        });
    }

    /// `Leases` dropped with shares left (put of several at once) races a lessee's drop and
    /// a taker: one hand-back, after every read.
    #[test]
    fn loom_unconsumed_leases_vs_lessee() {
        model("unconsumed_leases_vs_lessee", || {
            let m = Model::new(STATUS_USER);
            assert!(m.take().is_some());
            m.state.share(2); // into_leases(3)
            let lessee = {
                let m = m.clone();
                thread::spawn(move || {
                    m.read();
                    m.put(1)
                })
            };
            let taker = {
                let m = m.clone();
                thread::spawn(move || {
                    if m.take().is_some() {
                        m.read();
                        m.put(1);
                    }
                })
            };
            m.read();
            let mine = m.put(2); // the iterator dropped with two leases not handed out
            let theirs = lessee.join().unwrap();
            assert!(mine ^ theirs, "handed back exactly once");
            taker.join().unwrap();
            m.kernel_fill();
        });
    }

    /// Last share vs taker: a lease dropped on another thread races the block's own drop
    /// and a second taker; the block goes back exactly once, after both reads.
    #[test]
    fn loom_last_share_vs_taker() {
        model("last_share_vs_taker", || {
            let m = Model::new(STATUS_USER);
            assert!(m.take().is_some());
            m.state.share(1); // a lease
            let lessee = {
                let m = m.clone();
                thread::spawn(move || {
                    m.read();
                    m.put(1)
                })
            };
            let taker = {
                let m = m.clone();
                thread::spawn(move || {
                    if m.take().is_some() {
                        m.read();
                        m.put(1);
                    }
                })
            };
            m.read();
            let mine = m.put(1);
            let theirs = lessee.join().unwrap();
            assert!(mine ^ theirs, "handed back exactly once by the last share");
            taker.join().unwrap();
        });
    }

    /// Shares made by `lease` and by `into_leases` add up: three shares on three
    /// threads, one hand-back, after every read.
    #[test]
    fn loom_shares_add_up() {
        model("shares_add_up", || {
            let m = Model::new(STATUS_USER);
            assert!(m.take().is_some());
            m.state.share(1); // Block::lease
            m.state.share(1); // into_leases(2) turns the block's own share into the first
            let ts: Vec<_> = (0..2)
                .map(|_| {
                    let m = m.clone();
                    thread::spawn(move || {
                        m.read();
                        m.put(1)
                    })
                })
                .collect();
            m.read();
            let mut backs = u32::from(m.put(1));
            for t in ts {
                backs += u32::from(t.join().unwrap());
            }
            assert_eq!(backs, 1);
            assert_eq!(m.state.shares(), 0);
            assert!(!m.state.is_held());
        });
    }

    /// Rearm vs taker (synthetic replay): one thread re-arms while another takes and hands
    /// back; a re-arm never makes a held block look kernel-free or a kernel block readable.
    #[test]
    fn loom_rearm_vs_taker() {
        model("rearm_vs_taker", || {
            let m = Model::new(STATUS_KERNEL);
            let rearmer = {
                let m = m.clone();
                thread::spawn(move || {
                    m.rearm();
                    if m.take().is_some() {
                        m.read();
                        m.put(1);
                    }
                })
            };
            m.rearm();
            if m.take().is_some() {
                m.read();
                m.put(1);
            }
            rearmer.join().unwrap();
        });
    }
}
