//! What every header view shares: the error, the field type, big-endian reads and the
//! `view!` macro. A module of its own so that the views import it, not their parent.

/// Why a buffer is not a header of the kind asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The buffer ends inside the header.
    #[error("buffer ends inside the header")]
    Truncated,
    /// The header declares a length of its own below its minimum (IPv4 IHL below 5, TCP data
    /// offset below 5, DCCP data offset below 3).
    #[error("header length field below the header's minimum")]
    BadHeaderLength,
}

/// A range of bytes within a header.
pub type Field = std::ops::Range<usize>;

/// The big-endian 16-bit value at `at` of `b` (which the caller has checked holds it).
#[inline(always)]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian 32-bit value at `at` of `b` (which the caller has checked holds it).
#[inline(always)]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The big-endian 16-bit value at `at` of `b`, or `None` past its end: for printers that
/// show what a cut-off header still holds.
#[inline]
pub fn read_be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// The big-endian 32-bit value at `at` of `b`, or `None` past its end.
#[inline]
pub fn read_be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Implements the constructors every view shares: `new_unchecked`, `new_checked`,
/// `into_inner` and `as_bytes`.
macro_rules! view {
    ($ty:ident) => {
        impl<T: AsRef<[u8]>> $ty<T> {
            /// A view of `buffer` without checking its length: accessors panic when the
            /// buffer is too short. See [`Self::new_checked`].
            #[inline(always)]
            pub const fn new_unchecked(buffer: T) -> Self {
                $ty { buffer }
            }

            /// A view of `buffer` after [`Self::check_len`]: no accessor panics.
            #[inline(always)]
            pub fn new_checked(buffer: T) -> Result<Self, $crate::wire::WireError> {
                let v = Self::new_unchecked(buffer);
                v.check_len()?;
                Ok(v)
            }

            /// The bytes the view was built on.
            #[inline(always)]
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The bytes the view was built on, by reference.
            #[inline(always)]
            pub fn as_bytes(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }
    };
}
pub(crate) use view;

/// Checks that `b` holds `len` bytes.
#[inline(always)]
pub(crate) fn need(b: &[u8], len: usize) -> Result<(), WireError> {
    if b.len() < len {
        Err(WireError::Truncated)
    } else {
        Ok(())
    }
}
