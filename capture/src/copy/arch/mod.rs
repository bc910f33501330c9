//! The copy routines by instruction set, as memchr lays them out: one folder per ISA
//! (`x86_64/`: `rep movsb`, AVX2, AVX-512) and the portable fallback, each handed out as a
//! plain function once detection said the CPU runs it ([`routine_fn`]).

// The x86-64 routines; elsewhere (or with `--cfg zcrx_portable`, which CI uses to build and
// test the fallback on x86) only `Libc` and `Auto` (= libc) exist.
mod portable;
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
#[allow(unsafe_code)]
pub(crate) mod x86_64;

#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
pub(super) use self::x86_64::evict;
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
use self::x86_64::{avx512_copies, copy_avx2, copy_erms, copy_nt};
#[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
use super::detect::{cpu, AVX512_BUILT};
use super::routine::{CopyFn, Routine};
pub(super) use portable::copy_libc;
#[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
pub(super) use portable::evict;

/// The CPU lacks what a routine needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("copy routine {routine} needs {feature}, which this CPU does not have")]
pub struct Unsupported {
    /// The routine asked for.
    pub routine: Routine,
    /// The missing CPU feature.
    pub feature: &'static str,
}

impl Unsupported {
    /// The AVX-512 routines are missing: from the CPU, or from a build by a compiler older than
    /// Rust 1.89 ([`AVX512_BUILT`]).
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    fn avx512(routine: Routine) -> Unsupported {
        Unsupported {
            routine,
            feature: if AVX512_BUILT {
                "AVX-512F and AVX-512BW"
            } else {
                "AVX-512F and AVX-512BW, and a build by Rust 1.89 or newer"
            },
        }
    }
}

/// The function of a fixed routine (not `Auto`), if this CPU runs it.
pub(super) fn routine_fn(routine: Routine) -> Result<CopyFn, Unsupported> {
    #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
    let need_avx2 = |r| {
        if cpu().avx2 {
            Ok(())
        } else {
            Err(Unsupported {
                routine: r,
                feature: "AVX2",
            })
        }
    };
    Ok(match routine {
        Routine::Libc | Routine::Auto => copy_libc,
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Erms => copy_erms,
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Avx2 => {
            need_avx2(routine)?;
            copy_avx2
        }
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::Avx512 => {
            avx512_copies()
                .ok_or_else(|| Unsupported::avx512(routine))?
                .0
        }
        #[cfg(all(target_arch = "x86_64", not(zcrx_portable)))]
        Routine::NonTemporal => {
            need_avx2(routine)?;
            avx512_copies().map_or(copy_nt as CopyFn, |(_, nt)| nt)
        }
        #[cfg(not(all(target_arch = "x86_64", not(zcrx_portable))))]
        Routine::Erms | Routine::Avx2 | Routine::Avx512 | Routine::NonTemporal => {
            return Err(Unsupported {
                routine,
                feature: "x86-64",
            })
        }
    })
}
