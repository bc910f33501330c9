//! What the flow table hands out: flow ids and tags, per-flow counters, finished flows'
//! records and why they ended, idle timeouts, and the inputs and results of `track`.

use std::time::Duration;

use crate::key::{Direction, FlowKey};

/// TCP flag bits (RFC 9293 §3.1).
pub mod tcp {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// ACK.
    pub const ACK: u8 = 0x10;
}

/// Idle timeouts per protocol: [`Timeouts::default`], then set the fields that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// TCP without FIN or RST seen: 5 min (Zeek's `tcp_inactivity_timeout`).
    pub tcp: Duration,
    /// TCP after a FIN or RST: 10 s, so closed connections leave the table quickly
    /// (Suricata's `tcp.closed` is 60 s, its emergency value 0).
    pub tcp_closed: Duration,
    /// UDP, UDP-Lite: 1 min (Zeek's `udp_inactivity_timeout`).
    pub udp: Duration,
    /// ICMP and ICMPv6: 1 min (Zeek's `icmp_inactivity_timeout`).
    pub icmp: Duration,
    /// Everything else: 1 min.
    pub other: Duration,
    /// Active timeout: a flow that lasts longer than this is reported every `active` (its
    /// counters since the last report, as NetFlow and IPFIX exporters do) and stays in the
    /// table. `None` (the default): a flow is reported once, when it ends.
    pub active: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            tcp: Duration::from_secs(300),
            tcp_closed: Duration::from_secs(10),
            udp: Duration::from_secs(60),
            icmp: Duration::from_secs(60),
            other: Duration::from_secs(60),
            active: None,
        }
    }
}

/// How a flow's record came to be emitted (IPFIX's flowEndReason, RFC 7012 §5.11.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EndReason {
    /// Idle longer than its protocol's timeout.
    Idle,
    /// Lived longer than the active timeout: a periodic report; the flow goes on.
    Active,
    /// A TCP flow that saw FIN or RST and then went quiet for [`Timeouts::tcp_closed`].
    EndOfFlow,
    /// Its set was full and it was the least recently seen (lack of resources).
    Evicted,
    /// The table was flushed (end of capture: forced end).
    Flush,
}

impl EndReason {
    /// Every reason, in IPFIX code order.
    pub const ALL: [EndReason; 5] = [
        EndReason::Idle,
        EndReason::Active,
        EndReason::EndOfFlow,
        EndReason::Flush,
        EndReason::Evicted,
    ];

    /// The reason's name, as JSON output spells it: "idle", "active", "end_of_flow",
    /// "evicted", "flush".
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Idle => "idle",
            EndReason::Active => "active",
            EndReason::EndOfFlow => "end_of_flow",
            EndReason::Evicted => "evicted",
            EndReason::Flush => "flush",
        }
    }

    /// The IPFIX flowEndReason code: 1 idle timeout, 2 active timeout, 3 end of flow
    /// detected, 4 forced end, 5 lack of resources.
    pub fn ipfix_code(self) -> u8 {
        match self {
            EndReason::Idle => 1,
            EndReason::Active => 2,
            EndReason::EndOfFlow => 3,
            EndReason::Flush => 4,
            EndReason::Evicted => 5,
        }
    }
}

impl std::fmt::Display for EndReason {
    /// [`EndReason::name`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an [`EndReason`]'s (or a [`Direction`]'s).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}; one of: {expected}")]
pub struct UnknownName {
    what: &'static str,
    name: String,
    expected: &'static str,
}

/// An [`UnknownName`] for the crate's other names.
pub(crate) fn unknown_name(what: &'static str, name: &str, expected: &'static str) -> UnknownName {
    UnknownName {
        what,
        name: name.to_string(),
        expected,
    }
}

impl UnknownName {
    /// What was being named (`"end reason"`, `"direction"`).
    pub fn kind(&self) -> &'static str {
        self.what
    }
    /// The name given.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::str::FromStr for EndReason {
    type Err = UnknownName;

    /// The reason named as [`EndReason::name`] names it.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        EndReason::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| UnknownName {
                what: "end reason",
                name: s.to_string(),
                expected: "idle, active, end_of_flow, evicted, flush",
            })
    }
}

impl std::fmt::Display for Direction {
    /// "forward" or "reverse".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        })
    }
}

impl std::str::FromStr for Direction {
    type Err = UnknownName;

    /// "forward" or "reverse".
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "forward" => Ok(Direction::Forward),
            "reverse" => Ok(Direction::Reverse),
            _ => Err(UnknownName {
                what: "direction",
                name: s.to_string(),
                expected: "forward, reverse",
            }),
        }
    }
}

/// Per-flow counters. Index 0 is [`Direction::Forward`], 1 is [`Direction::Reverse`].
///
/// With an active timeout ([`Timeouts::active`]) the counters, flags and `first_ns` are those
/// since the flow's last report (a flow read between a report and its next packet has no
/// packets, and `first_ns` equal to `last_ns`); `initiator` and `closed` hold for the flow's
/// whole life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct FlowStats {
    /// The key (canonical in symmetric mode).
    pub key: FlowKey,
    /// Packets per direction.
    pub packets: [u64; 2],
    /// Bytes per direction: whatever length the caller passed to `track` (the pipeline and
    /// zcap pass IP octets, see [`crate::Extracted::ip_octets`]).
    pub bytes: [u64; 2],
    /// First packet, ns.
    pub first_ns: u64,
    /// Last packet, ns.
    pub last_ns: u64,
    /// TCP flags seen per direction (OR of all).
    pub tcp_flags: [u8; 2],
    /// The direction of the flow's first packet: its sender is the initiator.
    pub initiator: Direction,
    /// A FIN or RST was seen, in either direction (the shorter idle timeout applies).
    pub closed: bool,
}

impl FlowStats {
    /// The same flow seen from its initiator: `key` from the first packet's sender, index 0
    /// the initiator's direction (RFC 5103's biflow orientation). `initiator` is then
    /// `Forward`.
    pub fn oriented(&self) -> FlowStats {
        match self.initiator {
            Direction::Forward => *self,
            Direction::Reverse => FlowStats {
                key: self.key.reversed(),
                packets: [self.packets[1], self.packets[0]],
                bytes: [self.bytes[1], self.bytes[0]],
                tcp_flags: [self.tcp_flags[1], self.tcp_flags[0]],
                initiator: Direction::Forward,
                ..*self
            },
        }
    }
}

impl FlowStats {
    /// Packets both ways.
    pub fn total_packets(&self) -> u64 {
        self.packets[0] + self.packets[1]
    }
    /// Bytes both ways.
    pub fn total_bytes(&self) -> u64 {
        self.bytes[0] + self.bytes[1]
    }
    /// The flow's Community ID v1 with `seed`, from its [`FlowStats::oriented`] key (so that
    /// an ICMP flow's type and code are its first packet's).
    pub fn community_id(&self, seed: u16) -> crate::CommunityId {
        let key = match self.initiator {
            Direction::Forward => self.key,
            Direction::Reverse => self.key.reversed(),
        };
        key.community_id(seed)
    }
}

/// A finished flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FlowRecord {
    /// The flow's key and counters at the moment it ended.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub stats: FlowStats,
    /// Why it ended.
    pub end: EndReason,
}

/// A flow's handle: slot and generation. Stable for the flow's life; after the flow ends the
/// slot's generation changes, so a stale id finds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl FlowId {
    /// Slot index (`< capacity`): usable as an index into the caller's own per-flow array.
    pub fn slot(&self) -> usize {
        self.slot as usize
    }
    /// Generation of the slot when the flow was created.
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// The most slots a table has (2^30, some 104 GB of slots): a slot index then fits in 31
/// bits, which lets a [`FlowTag`] carry an id and a direction in 8 bytes.
pub const MAX_CAPACITY: usize = 1 << 30;

/// A packet's flow and direction in 8 bytes (a pipeline hands one to its consumers with every
/// packet): the flow's [`FlowId`], or none for a packet without a flow, and the packet's
/// [`Direction`] in it. The direction shares the slot index's word (slots are below
/// [`MAX_CAPACITY`]), so a tag is one 8-byte store where an `(Option<FlowId>, Direction)`
/// takes 16 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowTag {
    /// The slot index, or [`FlowTag::NO_SLOT`]; the direction in bit 31.
    slot_dir: u32,
    generation: u32,
}

impl FlowTag {
    const DIR_BIT: u32 = 1 << 31;
    /// Above any slot index (`< MAX_CAPACITY`).
    const NO_SLOT: u32 = !Self::DIR_BIT;
    /// No flow, forward.
    pub const NONE: FlowTag = FlowTag {
        slot_dir: Self::NO_SLOT,
        generation: 0,
    };

    /// The tag of flow `id` (or of no flow) for a packet going `dir`.
    #[inline]
    pub fn new(id: Option<FlowId>, dir: Direction) -> Self {
        let dir = (dir as u32) << 31;
        match id {
            Some(id) => FlowTag {
                slot_dir: id.slot | dir,
                generation: id.generation,
            },
            None => FlowTag {
                slot_dir: Self::NO_SLOT | dir,
                generation: 0,
            },
        }
    }
    /// The flow, `None` for a packet without one (not IP, malformed, steering off).
    #[inline]
    pub fn id(&self) -> Option<FlowId> {
        let slot = self.slot_dir & !Self::DIR_BIT;
        (slot != Self::NO_SLOT).then_some(FlowId {
            slot,
            generation: self.generation,
        })
    }
    /// The packet's direction relative to the flow's canonical key.
    #[inline]
    pub fn dir(&self) -> Direction {
        if self.slot_dir & Self::DIR_BIT == 0 {
            Direction::Forward
        } else {
            Direction::Reverse
        }
    }
}

impl Default for FlowTag {
    fn default() -> Self {
        FlowTag::NONE
    }
}

impl std::fmt::Debug for FlowTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowTag")
            .field("id", &self.id())
            .field("dir", &self.dir())
            .finish()
    }
}

/// One packet for [`FlowTable::track_batch`](crate::FlowTable::track_batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackInput {
    /// Its flow key (as extracted: directional).
    pub key: FlowKey,
    /// Wire length.
    pub len: u32,
    /// Timestamp, ns.
    pub ts_ns: u64,
    /// TCP flags.
    pub tcp_flags: u8,
}

/// Result of [`FlowTable::track`](crate::FlowTable::track): 16 bytes, returned in two
/// registers. An evicted flow's record is not part of it but waits in the table: a result
/// that carried the record (over 100 bytes) would cost every caller that keeps the result a
/// store of that size on every packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracked {
    /// The flow's id.
    pub id: FlowId,
    /// The flow's keyed hash (its high 32 bits): the same for every packet of the flow
    /// (both directions in symmetric mode) and for its whole life, e.g. to pick the thread
    /// that owns it (`(hash as u64 * threads as u64 >> 32) as usize`).
    pub hash: u32,
    /// Direction of this packet within the flow.
    pub dir: Direction,
    /// The packet started a new flow.
    pub created: bool,
    /// A flow was evicted to make room, and its record waits in the table: take it with
    /// [`FlowTable::drain_evicted`](crate::FlowTable::drain_evicted) (or from the next
    /// [`FlowTable::expire`](crate::FlowTable::expire) or
    /// [`FlowTable::flush`](crate::FlowTable::flush), which hand pending evictions out first)
    /// — unless the table's queue of such records was full, in which case the record was
    /// dropped and counted ([`TableCounters::lost`](crate::TableCounters::lost)).
    pub evicted: bool,
}

const _: () = assert!(std::mem::size_of::<Tracked>() == 16);
