//! Copy routines with runtime CPU dispatch (and, with feature `test-support`, the memcmp
//! variants `rxbench memcmp` compares, in the module `memcmp`).
//!
//! Routines: `Libc` (`copy_from_slice`, i.e. glibc's memcpy), `Erms` (`rep movsb`), `Avx2`
//! (32-byte vectors, overlapping head/tail, aligned unrolled body), `Avx512` (64-byte
//! vectors, a masked load and store up to 64 bytes, a cache-line-aligned body),
//! `NonTemporal` (the widest vector routine the CPU has, AVX-512 or AVX2, with streaming
//! stores for the aligned body of copies that have one — above 512 or 256 bytes —, ending
//! with `sfence`), and `Auto`: chosen by copy size and by the destination's reuse distance,
//! as measured on this CPU at first use ([`calibration`]; [`AutoPolicy`] places the
//! non-temporal band, and gives the thresholds of `ZCRX_COPY_AUTO=static` and
//! [`Copier::with_policy`]). CPU features are detected once
//! ([`cpu`]); a [`Copier`] holds a plain function pointer, so no call tests features again,
//! and [`Copier::describe`] says which vectors were chosen.
//!
//! Promise: every routine copies exactly `src` into `dst` (same length, asserted), for every
//! length and alignment (tested against `copy_from_slice` for all lengths 0..=4160 and all 64x64
//! misalignments), and a `NonTemporal` copy is globally visible when the call returns.

mod arch;
/// `Auto`'s calibration: which fixed routine copies each size class fastest here.
mod calibrate;
mod copier;
mod detect;
mod policy;
/// The routines' names.
mod routine;

/// memcmp variants for the benchmarks (feature `test-support`; not part of the API).
#[cfg(feature = "test-support")]
#[allow(unsafe_code)]
pub mod memcmp;

pub use arch::Unsupported;
pub use calibrate::{Calibration, COLD_NT_FROM};
pub use copier::{calibration, Copier};
pub use detect::{cpu, Cpu, AVX512_BUILT};
pub use policy::AutoPolicy;
pub use routine::Routine;
/// A name that names no copy routine or delivery mode (the error of their `FromStr`): the
/// ring's type, one for every name the crates parse.
pub use zcrx_ring::UnknownName;

/// The copy sizes the benchmarks sweep (`rxbench copy`, `cargo bench -p zcrx-capture --bench
/// copy`): packet sizes, a page, and buffers around the cache sizes. Feature `test-support`.
#[cfg(feature = "test-support")]
pub const BENCH_SIZES: [usize; 15] = [
    64,
    128,
    256,
    512,
    1024,
    1500,
    4096,
    16 << 10,
    32 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    8 << 20,
    32 << 20,
];
