//! What the DNS printers share: the line, the message, the verbosity, mDNS's reading, and
//! how a printer gives up.

/// tcpdump's truncation mark for this protocol (`nd_print_trunc`).
pub(super) const TRUNC: &str = " [|domain]";

/// The most label and pointer steps one packet's names may take: tcpdump has no bound (a
/// hostile message can make it walk a name's pointers for quadratic time); real messages
/// take a few thousand.
pub(super) const STEPS: u32 = 1 << 22;

/// How a printer gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// tcpdump's NULL return: the caller decides (mostly: the truncation mark).
    Null,
    /// A read past the capture (tcpdump's longjmp): the truncation mark, always.
    Trunc,
}

/// A position, or how the printing stopped.
pub(super) type Res = Result<usize, Stop>;

/// What the DNS printers share: the line, the message, the verbosity and mDNS's reading.
pub(super) struct Ctx<'a, 'o> {
    pub(super) out: &'o mut String,
    /// The message's captured bytes, from its header on.
    pub(super) m: &'a [u8],
    pub(super) verbose: u8,
    pub(super) mdns: bool,
    /// Label steps left for this packet (see [`STEPS`]).
    pub(super) steps: u32,
}

impl Ctx<'_, '_> {
    /// The byte at `at`, if captured (tcpdump's `ND_TTEST_1` then `GET_U_1`).
    pub(super) fn byte(&self, at: usize) -> Option<u8> {
        self.m.get(at).copied()
    }

    /// The byte at `at`, or the jump out (`GET_U_1` unchecked).
    pub(super) fn get(&self, at: usize) -> Result<u8, Stop> {
        self.byte(at).ok_or(Stop::Trunc)
    }

    pub(super) fn be16(&self, at: usize) -> Option<u16> {
        let b = self.m.get(at..at.checked_add(2)?)?;
        Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
    }

    pub(super) fn be32(&self, at: usize) -> Option<u32> {
        Some(u32::from(self.be16(at)?) << 16 | u32::from(self.be16(at + 2)?))
    }

    /// Whether `n` bytes from `at` were captured (`ND_TTEST_LEN`).
    pub(super) fn has(&self, at: usize, n: usize) -> bool {
        at.checked_add(n).is_some_and(|end| end <= self.m.len())
    }

    /// Counts one step of a name's walk; past the packet's budget, the walk is given up.
    pub(super) fn step(&mut self) -> Result<(), Stop> {
        self.steps = self.steps.checked_sub(1).ok_or(Stop::Trunc)?;
        Ok(())
    }
}
