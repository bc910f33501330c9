//! memcmp variants for `rxbench memcmp` (byte loop, word at a time, AVX2, AVX-512, libc),
//! each tested against `<[u8]>::cmp`. Benchmark scaffolding behind feature `test-support`.

use std::cmp::Ordering;

use super::cpu;

/// A memcmp variant for the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memcmp {
    /// One byte at a time.
    ByteLoop,
    /// Eight bytes at a time as big-endian words (any alignment: the words are assembled
    /// from bytes, never read through a misaligned pointer), bytes for the tail.
    WordAtATime,
    /// AVX2 compare + movemask, 32 bytes at a time.
    Avx2,
    /// AVX-512 compare into a mask, 64 bytes at a time, the tail one masked load.
    Avx512,
    /// `<[u8]>::cmp`, i.e. libc memcmp.
    Libc,
}

impl Memcmp {
    /// All variants.
    pub const ALL: [Memcmp; 5] = [
        Memcmp::ByteLoop,
        Memcmp::WordAtATime,
        Memcmp::Avx2,
        Memcmp::Avx512,
        Memcmp::Libc,
    ];

    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Memcmp::ByteLoop => "byte-loop",
            Memcmp::WordAtATime => "word-at-a-time",
            Memcmp::Avx2 => "avx2",
            Memcmp::Avx512 => "avx512",
            Memcmp::Libc => "libc",
        }
    }

    /// The variant as a plain function, resolved once (the CPU test happens here, not per
    /// comparison): `Avx2` falls back to `WordAtATime` on a CPU (or target) without AVX2,
    /// `Avx512` to `Avx2` (then `WordAtATime`) without AVX-512F and BW; [`Memcmp::resolved`]
    /// says which.
    pub fn comparator(self) -> CompareFn {
        match self {
            Memcmp::ByteLoop => byte_loop,
            Memcmp::WordAtATime => word_at_a_time,
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
            Memcmp::Avx2 if cpu().avx2 => memcmp_avx2,
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
            Memcmp::Avx512 if cpu().avx512 => memcmp_avx512,
            #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
            Memcmp::Avx512 if cpu().avx2 => memcmp_avx2,
            Memcmp::Avx2 | Memcmp::Avx512 => word_at_a_time,
            Memcmp::Libc => |a, b| a.cmp(b),
        }
    }

    /// The variant that [`Memcmp::comparator`] runs on this CPU.
    pub fn resolved(self) -> Memcmp {
        let c = cpu();
        match self {
            Memcmp::Avx512 if c.avx512 => Memcmp::Avx512,
            Memcmp::Avx2 | Memcmp::Avx512 if c.avx2 => Memcmp::Avx2,
            Memcmp::Avx2 | Memcmp::Avx512 => Memcmp::WordAtATime,
            m => m,
        }
    }

    /// Compares two equal-length buffers like `memcmp`: the order of the first differing byte.
    /// Resolves the variant on each call; loops should call [`Memcmp::comparator`] once.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        self.comparator()(a, b)
    }
}

/// A resolved memcmp variant. Panics if the lengths differ.
pub type CompareFn = fn(&[u8], &[u8]) -> Ordering;

fn byte_loop(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    Ordering::Equal
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
fn memcmp_avx2(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    debug_assert!(cpu().avx2);
    // SAFETY: both slices hold a.len() bytes; handed out by `comparator` only after AVX2 was
    // detected.
    unsafe { super::arch::x86_64::avx2::memcmp_avx2(a.as_ptr(), b.as_ptr(), a.len()) }.cmp(&0)
}

#[cfg(all(target_arch = "x86_64", not(zcrx_portable), zcrx_avx512))]
fn memcmp_avx512(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    debug_assert!(cpu().avx512);
    // SAFETY: both slices hold a.len() bytes; handed out by `comparator` only after AVX-512F
    // and BW were detected.
    unsafe { super::arch::x86_64::avx512::memcmp_avx512(a.as_ptr(), b.as_ptr(), a.len()) }.cmp(&0)
}

fn word_at_a_time(a: &[u8], b: &[u8]) -> Ordering {
    assert_eq!(a.len(), b.len(), "memcmp: length mismatch");
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        // Big-endian words compare in byte order, so the first unequal word decides.
        let x = u64::from_be_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
    }
    ca.remainder().cmp(cb.remainder())
}
