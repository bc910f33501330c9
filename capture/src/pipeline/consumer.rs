//! The consumer's side of the pipeline: the packet a handler is given ([`Delivered`]), the
//! [`Consumer`] trait, the calls on the stage thread ([`Hooks`]) and the [`StopToken`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Which flow a delivered packet belongs to ([`FlowTag::id`] is `None` for frames that carry
/// no IP flow: ARP, malformed headers, steering off; those go to consumer 0) and its
/// direction: 8 bytes, travelling with each packet from the stage to its consumer. The flow
/// key is not in it (with it the tag would be 64 bytes, a cache line per packet crossing
/// between cores): [`Delivered::flow_key`] reads it again from the frame's headers when a
/// consumer asks.
pub use zcrx_flowcache::FlowTag;
use zcrx_flowcache::{FlowEnd, FlowKey, FlowRecord, FlowTable, LinkType};
use zcrx_ring::{Block, Direction, LinkAddr, PacketMeta};

/// One packet handed to a consumer's handler.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    pub(super) data: &'a [u8],
    pub(super) meta: PacketMeta,
    pub(super) flow: &'a FlowTag,
    pub(super) consumer: usize,
    /// The frames' link type, for [`Delivered::flow_key`].
    pub(super) linktype: LinkType,
    /// Where the packet's sockaddr_ll can be read (inline consumers): its block and header
    /// offset. Read only when asked ([`Delivered::link`]): carrying the address itself would
    /// cost the stage a copy of it on every packet.
    pub(super) link: Option<(&'a Block<'a>, u32)>,
}

impl<'a> Delivered<'a> {
    /// The frame's captured bytes (in the ring for zero-copy, in the consumer's arena for copy).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Header facts from the ring (lengths, timestamp, VLAN, status).
    pub fn meta(&self) -> &PacketMeta {
        &self.meta
    }
    /// The packet's flow as the stage tracked it: its id (or none) and the packet's direction.
    pub fn flow(&self) -> &'a FlowTag {
        self.flow
    }
    /// The flow key as the packet travelled (directional), `None` for a packet without a
    /// flow. Read from the frame's headers when asked, with the stage's own extraction (the
    /// same bytes give the same key): a few nanoseconds here instead of 48 bytes per packet
    /// carried from the stage for consumers that never look.
    pub fn flow_key(&self) -> Option<FlowKey> {
        self.flow.id()?;
        let vlan = self.meta.vlan_tci;
        zcrx_flowcache::extract(self.linktype, self.data, vlan)
            .ok()
            .map(|x| x.key)
    }
    /// Where the packet was going (its `sll_pkttype`), for every consumer, inline or
    /// threaded, zero-copy or copied. On loopback each packet comes twice, once
    /// [`Direction::Outgoing`] and once [`Direction::Host`]: skip the outgoing copy to see
    /// each once (or build the ring with `ignore_outgoing`).
    #[inline]
    pub fn direction(&self) -> Direction {
        self.meta.direction()
    }
    /// The consumer running the handler.
    pub fn consumer(&self) -> usize {
        self.consumer
    }
    /// The packet's `sockaddr_ll` (interface, direction, link-layer type and address), read
    /// from the ring when asked; `None` for threaded consumers (the block may be back with
    /// the kernel by then).
    pub fn link(&self) -> Option<LinkAddr> {
        self.link.map(|(b, hdr)| b.link_addr_at(hdr))
    }
}

/// A consumer: receives every packet of the flows it owns, then is finished for its
/// result, which [`Pipeline::run`](crate::Pipeline::run) returns. Any `FnMut(&Delivered)` closure is a consumer
/// whose result is `()`.
pub trait Consumer: Send {
    /// What the consumer hands back at the end of the run.
    type Output: Send;
    /// One packet. The packet (zero-copy: the ring's bytes) lives only for this call.
    fn packet(&mut self, packet: &Delivered<'_>);
    /// Several packets whose bytes all stay readable until this call returns: a consumer
    /// thread's batch, or with zero-copy delivery to the inline consumer and steering off,
    /// the rest of a block, or with steering on a whole steered block if the consumer
    /// [wants them](Consumer::wants_steered_blocks); the other packets come one at a time
    /// through [`Consumer::packet`]. For a consumer that gains from holding several at once (zcap
    /// hands a block's large frames to one `writev` instead of copying them); the default
    /// hands each to [`Consumer::packet`]. Packets left in the iterator when this returns
    /// count as delivered and are not offered again. Drive `packets` by internal iteration
    /// (`for_each`, `try_fold`): the walk of the block is then inlined into the loop, where a
    /// `for` loop may leave its `next` a call a packet.
    #[inline]
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>)
    where
        Self: Sized,
    {
        packets.for_each(|p| self.packet(&p));
    }
    /// Whether this consumer, inline with zero-copy delivery and flows tracked, would rather
    /// take each block's packets together through [`Consumer::packets`] once the stage has
    /// steered the whole block, than one by one as the stage goes (the default, `false`).
    /// Asked once, when the run starts; blocks of small frames (under 512 bytes of block a
    /// packet) go one by one all the same, where the second walk would cost more. The bytes
    /// are the ring's either way; what changes is when: a flow that ends in the middle of a
    /// block (a timeout by packet time) reaches the flow-end hook before the block's packets
    /// reach the consumer. zcap says yes when it
    /// writes a capture file (large frames then go to one `writev` from the ring instead of
    /// being copied, as without flows).
    fn wants_steered_blocks(&self) -> bool {
        false
    }
    /// The run is over (every packet delivered): the result.
    fn finish(self) -> Self::Output;
}

impl<F: FnMut(&Delivered<'_>) + Send> Consumer for F {
    type Output = ();
    #[inline]
    fn packet(&mut self, packet: &Delivered<'_>) {
        self(packet)
    }
    fn finish(self) {}
}

/// Stops a run from outside: any thread (or, through [`StopToken::flag`], a signal handler)
/// may stop it; the stage checks the token between blocks, delivers the blocks already
/// filled and the one the kernel was filling (a live ring hands it over within its block
/// timeout), and returns. One token can stop several pipelines.
#[derive(Debug, Clone, Default)]
pub struct StopToken(Arc<AtomicBool>);

impl StopToken {
    /// A token not yet stopped.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every run holding this token to stop.
    pub fn stop(&self) {
        // Relaxed: a request checked at block boundaries; it publishes no data.
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`StopToken::stop`] was called (or the flag set).
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// The flag behind the token, for code that sets a flag (e.g.
    /// `signal_hook::flag::register(SIGINT, token.flag())`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

/// Calls on the stage thread: `on_flow_end` sees every finished flow (evicted, idle, and all
/// remaining ones at the end; the stage takes evicted flows' records after every block, and
/// its table keeps room for as many as a block has packets, so none is lost), and
/// `on_flow_ended` the same with each flow's TCP state when the table follows them
/// ([`FlowTableConfig::with_tcp_state`](zcrx_flowcache::FlowTableConfig::with_tcp_state));
/// `on_tick` looks at the live flow table every
/// [`PipelineConfig::tick_every`](crate::PipelineConfig::tick_every) (periodic flow reports,
/// status lines; [`FlowTable::tcp_state`] reads a live flow's state).
pub struct Hooks<'h> {
    pub(super) flow_end: Box<dyn FnMut(&FlowRecord) + 'h>,
    pub(super) flow_ended: Box<dyn FnMut(&FlowEnd) + 'h>,
    pub(super) tick: Box<dyn FnMut(&FlowTable) + 'h>,
}

impl Default for Hooks<'_> {
    fn default() -> Self {
        Hooks {
            flow_end: Box::new(|_| {}),
            flow_ended: Box::new(|_| {}),
            tick: Box::new(|_| {}),
        }
    }
}

impl std::fmt::Debug for Hooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hooks")
    }
}

impl<'h> Hooks<'h> {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }
    /// Called for every flow that ends.
    pub fn on_flow_end(mut self, f: impl FnMut(&FlowRecord) + 'h) -> Self {
        self.flow_end = Box::new(f);
        self
    }
    /// Called for every flow that ends, with its TCP state when the stage's table follows
    /// them ([`FlowEnd::tcp`]: the stage reads each TCP packet's segment right after tracking
    /// it, so the state holds every packet of the flow before its end). Called after
    /// [`Hooks::on_flow_end`]'s hook, if both are set, for the same flow.
    pub fn on_flow_ended(mut self, f: impl FnMut(&FlowEnd) + 'h) -> Self {
        self.flow_ended = Box::new(f);
        self
    }
    /// Called every `tick_every` with the live flow table (empty with
    /// [`Steering::Off`](crate::Steering::Off)).
    pub fn on_tick(mut self, f: impl FnMut(&FlowTable) + 'h) -> Self {
        self.tick = Box::new(f);
        self
    }
}
