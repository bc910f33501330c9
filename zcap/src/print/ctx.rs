//! What a line is printed with: the options (`Detail`) and, for one packet, the printer's
//! context (`Ctx`): the TCP conversations, whether a printer jumped out, the tunnels entered,
//! and the frame walk that inner packets go back through.

use zcrx_flowcache::LinkType;

use crate::dissect::resolve;
use crate::dissect::tcp;
use crate::dissect::tcp_seq::Seqs;

/// The walk of one frame of a link type (its length on the wire, its bytes).
pub(super) type Frame = fn(&mut String, LinkType, u32, &[u8], &mut Ctx<'_>);

/// What the line shows beyond `tcpdump -n -q`'s: `-e`, `-v`, and the dumps `-x`/`-xx`,
/// `-X`/`-XX`, `-A`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// `-e`: the link-level header.
    pub link: bool,
    /// `-v` count.
    pub verbose: u8,
    /// `-x` count (2: from the link-level header on).
    pub hex: u8,
    /// `-X` count (hex and ASCII; 2: from the link-level header on).
    pub hex_ascii: u8,
    /// `-A`.
    pub ascii: bool,
    /// `-q`: tcpdump's quick lines (`tcp N`, `UDP, length N`, no application layer).
    pub quiet: bool,
    /// `-S`: absolute TCP sequence numbers.
    pub absolute: bool,
    /// Without `-n`: ports, addresses and MAC makers named (see [`crate::dissect::resolve`]).
    pub names: bool,
    /// `-K`: no checksum verified (none of `-v`'s checksum notes).
    pub no_checksums: bool,
    /// `-N`: host names without their domain.
    pub short_names: bool,
    /// `-f` on a live capture: the interface's IPv4 network, outside which addresses print
    /// as numbers.
    pub local_v4: Option<(u32, u32)>,
}

impl Detail {
    /// How TCP segments are printed.
    pub(super) fn tcp_style(&self) -> tcp::Style {
        tcp::Style {
            verbose: self.verbose,
            absolute: self.absolute,
            checksums: !self.no_checksums,
            quiet: self.quiet,
            names: self.names,
        }
    }

    /// How addresses are named.
    pub(super) fn naming(&self) -> resolve::Naming {
        resolve::Naming {
            names: self.names,
            short: self.short_names,
            local_v4: self.local_v4,
        }
    }
}

/// What a line's parts are printed with: the options and the TCP conversations.
pub(super) struct Ctx<'a> {
    pub(super) detail: &'a Detail,
    pub(super) seqs: &'a mut Seqs,
    /// A printer stopped as tcpdump's do by jumping out at a read past the capture: its dumps
    /// then start at the link layer.
    pub(super) jumped: bool,
    /// Tunnels entered (bounded: a packet of nested tunnels stops printing at
    /// `tunnel::MAX_DEPTH`).
    pub(super) depth: u8,
    /// The walk of a frame (`print::frame`), for the packets tunnels and link layers carry.
    pub(super) frame: Frame,
}
