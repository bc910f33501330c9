//! [`Routine`]: the copy routines by name (what a command line or a configuration names).

use std::fmt;

use zcrx_ring::UnknownName;

/// A fixed routine's function, behind its safe signature (equal lengths, asserted).
pub(super) type CopyFn = fn(&mut [u8], &[u8]);

/// A copy routine to use for delivered packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Routine {
    /// `<[u8]>::copy_from_slice` (glibc memcpy, itself dispatched by glibc).
    Libc,
    /// `rep movsb`.
    Erms,
    /// AVX2 vectors.
    Avx2,
    /// AVX-512 (F and BW) vectors.
    Avx512,
    /// Non-temporal (streaming) stores from the widest vectors the CPU has (AVX-512, else
    /// AVX2); bypasses the cache. Copies without a loop (up to 512 bytes with AVX-512, 256
    /// with AVX2) use ordinary stores.
    NonTemporal,
    /// By size, thresholds from the cache sizes (see [`AutoPolicy`](super::AutoPolicy)).
    Auto,
}

impl Routine {
    /// All routines, `Auto` last.
    pub const ALL: [Routine; 6] = [
        Routine::Libc,
        Routine::Erms,
        Routine::Avx2,
        Routine::Avx512,
        Routine::NonTemporal,
        Routine::Auto,
    ];

    /// The name used on command lines (`libc`, `erms`, `avx2`, `avx512`, `nt`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Routine::Libc => "libc",
            Routine::Erms => "erms",
            Routine::Avx2 => "avx2",
            Routine::Avx512 => "avx512",
            Routine::NonTemporal => "nt",
            Routine::Auto => "auto",
        }
    }

    /// Parses [`Routine::name`] (what [`str::parse`] does, without the error).
    pub fn from_name(s: &str) -> Option<Routine> {
        Routine::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl std::str::FromStr for Routine {
    type Err = UnknownName;
    /// Parses [`Routine::name`]; the error lists the names there are.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Routine::from_name(s)
            .ok_or_else(|| UnknownName::new("copy routine", s, Routine::ALL.map(Routine::name)))
    }
}

impl fmt::Display for Routine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
