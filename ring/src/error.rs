//! Error types of zcrx-ring. Messages say what to do: which capability, interface or field.

use std::io;

/// A block whose headers do not hold together. The walk stops at the first one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// The block is shorter than its own descriptor.
    #[error("block of {len} bytes is shorter than a block descriptor (48 bytes)")]
    TooShort {
        /// Bytes available.
        len: usize,
    },
    /// `blk_len` is outside the block.
    #[error("blk_len {blk_len} is outside the block of {block_size} bytes")]
    BadBlockLen {
        /// `blk_len` found.
        blk_len: u32,
        /// Block size.
        block_size: usize,
    },
    /// `offset_to_first_pkt` does not leave room for a packet header.
    #[error(
        "offset_to_first_pkt {offset} leaves no room for a tpacket3_hdr before blk_len {blk_len}"
    )]
    BadFirstOffset {
        /// `offset_to_first_pkt`.
        offset: u32,
        /// `blk_len`.
        blk_len: u32,
    },
    /// More packets than headers fit in the block.
    #[error("num_pkts {num_pkts} cannot fit in a block of {block_size} bytes")]
    TooManyPackets {
        /// `num_pkts`.
        num_pkts: u32,
        /// Block size.
        block_size: usize,
    },
    /// A `tp_next_offset` points backwards, nowhere, or past `blk_len`.
    #[error("packet at offset {offset}: tp_next_offset leads outside blk_len {blk_len} with {left} packets left")]
    BadNextOffset {
        /// Offset of the header holding the bad link.
        offset: u32,
        /// `blk_len`.
        blk_len: u32,
        /// Packets still expected.
        left: u32,
    },
    /// `tp_mac` points into the packet's own header.
    #[error("packet at offset {offset}: tp_mac {mac} points inside the tpacket3_hdr")]
    BadMac {
        /// Header offset.
        offset: u32,
        /// `tp_mac`.
        mac: u16,
    },
    /// `tp_mac + tp_snaplen` runs past `blk_len`.
    #[error("packet at offset {offset}: tp_snaplen {snaplen} runs past blk_len {blk_len}")]
    BadSnaplen {
        /// Header offset.
        offset: u32,
        /// `tp_snaplen`.
        snaplen: u32,
        /// `blk_len`.
        blk_len: u32,
    },
    /// `tp_snaplen > tp_len`: more captured than was on the wire.
    #[error("packet at offset {offset}: tp_snaplen {snaplen} exceeds tp_len {len}")]
    SnaplenOverLen {
        /// Header offset.
        offset: u32,
        /// `tp_snaplen`.
        snaplen: u32,
        /// `tp_len`.
        len: u32,
    },
}

/// A builder setting that was refused ([`RingError::InvalidConfig`]); displayed as the
/// builder method's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// `block_size`.
    BlockSize,
    /// `block_count` (or the ring's total size).
    BlockCount,
    /// `block_timeout`.
    BlockTimeout,
    /// `frame_size`.
    FrameSize,
    /// `frame_count` (TX ring).
    FrameCount,
    /// `snaplen`.
    Snaplen,
    /// `filter` (the BPF program).
    Filter,
    /// A frame handed to a ring (synthetic frames, TX frames).
    Frame,
    /// The interface's name (not one the kernel could give an interface).
    Interface,
}

impl Setting {
    /// The builder method's name.
    pub const fn name(self) -> &'static str {
        match self {
            Setting::BlockSize => "block_size",
            Setting::BlockCount => "block_count",
            Setting::BlockTimeout => "block_timeout",
            Setting::FrameSize => "frame_size",
            Setting::FrameCount => "frame_count",
            Setting::Snaplen => "snaplen",
            Setting::Filter => "filter",
            Setting::Frame => "frame",
            Setting::Interface => "interface",
        }
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors from building or reading a ring.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// No interface of that name (in this network namespace).
    #[error("no network interface named {iface:?} in this network namespace (see `ip link`)")]
    NoSuchInterface {
        /// The name asked for.
        iface: String,
    },
    /// The operation needs CAP_NET_RAW.
    #[error("{op} on interface {iface:?} needs CAP_NET_RAW (run as root or `setcap cap_net_raw+ep` the binary)")]
    Permission {
        /// What was being done.
        op: &'static str,
        /// The interface the ring is bound to, by name.
        iface: String,
    },
    /// A geometry or option value that the kernel would refuse or that makes no sense.
    #[error("invalid {setting}: {reason}")]
    InvalidConfig {
        /// Which setting.
        setting: Setting,
        /// What is wrong with the value (the range or rule it breaks).
        reason: String,
    },
    /// The interface went away or down while the ring was open.
    #[error("interface {iface:?} is gone or down: {source}")]
    InterfaceGone {
        /// The interface the ring is bound to, by name.
        iface: String,
        /// What the kernel said.
        source: io::Error,
    },
    /// Any other system call failure.
    #[error("{op} on interface {iface:?} failed: {source}")]
    Sys {
        /// The system call or socket option that failed.
        op: &'static str,
        /// The interface the ring is bound to, by name.
        iface: String,
        /// The error the kernel returned (errno).
        source: io::Error,
    },
    /// A TX batch stopped at a frame that was refused (by the length check, or by the kernel:
    /// `TP_STATUS_WRONG_FORMAT`). Frames `0..index` of the batch went out, frame `index` and
    /// those after it did not; the refused frame was reset and the ring takes the next batch.
    #[error("TX on {iface:?}: frame {index} of the batch refused ({reason}); the {index} frames before it were sent, none after it")]
    TxFrameRefused {
        /// The interface the ring is bound to, by name.
        iface: String,
        /// Index of the refused frame in the batch (= frames sent).
        index: usize,
        /// Why it was refused (too long for the frame, or the kernel's wrong-format status).
        reason: String,
    },
    /// A TX batch stopped on a failure (interface gone, timeout). Frames `0..sent` of the
    /// batch went out, none after them; nothing is left marked for sending.
    #[error("TX on {iface:?} stopped after {sent} frames of the batch: {cause}")]
    TxStopped {
        /// The interface the ring is bound to, by name.
        iface: String,
        /// Frames of the batch that went out.
        sent: usize,
        /// The failure that stopped the batch.
        cause: Box<RingError>,
    },
    /// A block or packet header that does not hold together, found by a walk of a block
    /// ([`Block::packets`](crate::Block::packets), [`BlockView::parse`](crate::BlockView::parse)):
    /// what `?` makes of a [`BlockError`]. The walk of that block stops there.
    #[error("malformed block: {0}")]
    Malformed(#[from] BlockError),
    /// A block failed validation; the block has been handed back.
    #[error("block {index}: {source}")]
    Block {
        /// Index of the block in the ring.
        index: usize,
        /// What was wrong.
        source: BlockError,
    },
}

impl RingError {
    /// Maps a failed call to `Permission` when errno says so, else to `Sys`.
    pub(crate) fn sys(op: &'static str, iface: &str, source: io::Error) -> Self {
        match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => RingError::Permission {
                op,
                iface: iface.to_owned(),
            },
            Some(libc::ENODEV) | Some(libc::ENXIO) | Some(libc::ENETDOWN) => {
                RingError::InterfaceGone {
                    iface: iface.to_owned(),
                    source,
                }
            }
            _ => RingError::Sys {
                op,
                iface: iface.to_owned(),
                source,
            },
        }
    }

    pub(crate) fn config(setting: Setting, reason: impl Into<String>) -> Self {
        RingError::InvalidConfig {
            setting,
            reason: reason.into(),
        }
    }

    /// The setting an [`RingError::InvalidConfig`] is about.
    pub fn setting(&self) -> Option<Setting> {
        match self {
            RingError::InvalidConfig { setting, .. } => Some(*setting),
            _ => None,
        }
    }
}

/// A name that names nothing of its kind (a fanout mode, a timestamp source; in zcrx-capture
/// a copy routine or a delivery mode): says which names there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {name:?}; one of: {known}")]
pub struct UnknownName {
    kind: &'static str,
    name: String,
    known: String,
}

impl UnknownName {
    /// `name`, given as a `kind` (`"fanout mode"`), is none of `known`: the error of a
    /// `FromStr` over a fixed set of names.
    pub fn new<K: AsRef<str>>(
        kind: &'static str,
        name: &str,
        known: impl IntoIterator<Item = K>,
    ) -> Self {
        UnknownName {
            kind,
            name: name.to_owned(),
            known: known
                .into_iter()
                .map(|k| k.as_ref().to_owned())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
    /// What was being named (`"fanout mode"`, `"timestamp source"`).
    pub fn kind(&self) -> &'static str {
        self.kind
    }
    /// The name given.
    pub fn name(&self) -> &str {
        &self.name
    }
}
