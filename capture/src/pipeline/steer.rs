//! Steering: read a packet's headers, track its flow, choose the consumer that owns it.

use zcrx_flowcache::{
    extract_fast, extract_general, Extracted, FlowEnd, FlowTable, FlowTableConfig, FlowTableError,
    LinkType, TcpSegment,
};
use zcrx_ring::Packet;

use super::config::{PipelineConfig, Steering};
use super::consumer::FlowTag;
use super::stats::PipelineStats;

/// The tag of a packet without a flow (steering off, or not IP).
pub(super) static NO_FLOW: FlowTag = FlowTag::NONE;

/// The stage's flow table and the owner rule.
pub(super) struct Steer {
    table: FlowTable,
    tracking: bool,
    /// The table follows TCP states ([`FlowTableConfig::tcp_state`]): each TCP packet's
    /// segment moves its flow's state right after the packet is tracked.
    tcp: bool,
    link: LinkType,
    consumers: u64,
    expire_ns: u64,
    next_expire: u64,
    last_ts: u64,
}

impl Steer {
    /// The stage's steering for `config`, over blocks of `block_size` bytes, or the flow
    /// table's refusal of its configuration.
    pub(super) fn new(config: &PipelineConfig, block_size: usize) -> Result<Self, FlowTableError> {
        let (table, tracking) = match config.steering {
            // Evicted flows' records are taken after every block (`after_block`), and a
            // packet evicts at most one flow: room for a block's packets loses none.
            Steering::Flows(t) => {
                let room = t
                    .evicted_room
                    .max(zcrx_ring::block::max_packets(block_size));
                (FlowTable::new(t.with_evicted_room(room))?, true)
            }
            // An empty table for the tick hook: nothing is ever tracked in it.
            Steering::Off => (
                FlowTable::new(FlowTableConfig::with_capacity(16).with_evicted_room(0))?,
                false,
            ),
        };
        Ok(Steer {
            tcp: table.follows_tcp_state(),
            table,
            tracking,
            link: config.link,
            consumers: config.consumers.count() as u64,
            expire_ns: config.expire_every.as_nanos() as u64,
            next_expire: 0,
            last_ts: 0,
        })
    }

    /// The owner of `p`'s flow and its tag; frames without an IP flow go to consumer 0.
    /// `TCP`: the table follows TCP states ([`Steer::follows_tcp`]), and each TCP packet's
    /// segment moves its flow's state. A constant, chosen once a block by the stage, so that
    /// a stage without TCP states tests no field per packet (which would cost every packet
    /// reloads of the stage's state).
    #[inline(always)]
    pub(super) fn route<const TCP: bool>(
        &mut self,
        p: &Packet<'_>,
        stats: &mut PipelineStats,
        on_flow_end: &mut dyn FnMut(&FlowEnd),
    ) -> (usize, FlowTag) {
        self.last_ts = p.ts_ns();
        if !self.tracking {
            return (0, NO_FLOW);
        }
        // Timeouts by packet time, also inside a block (a file's block can span minutes).
        if self.last_ts >= self.next_expire {
            self.after_block(on_flow_end);
        }
        // The fast path's result apart from the general path's: merged, both would go
        // through memory (stores on every packet).
        if let Some(x) = extract_fast(self.link, p.data(), p.vlan_tci()) {
            return self.track::<TCP>(&x, p, stats);
        }
        match extract_general(self.link, p.data(), p.vlan_tci()) {
            Ok(x) => self.track::<TCP>(&x, p, stats),
            Err(_) => {
                stats.non_ip += 1;
                (0, NO_FLOW)
            }
        }
    }

    /// Tracks the flow `x` of packet `p`: its owner and tag.
    #[inline(always)]
    fn track<const TCP: bool>(
        &mut self,
        x: &Extracted,
        p: &Packet<'_>,
        stats: &mut PipelineStats,
    ) -> (usize, FlowTag) {
        // Flows count IP octets (header and payload), as IPFIX and NetFlow do.
        let t = self
            .table
            .track(x.track_input(x.ip_octets(p.wire_len()), p.ts_ns()));
        stats.flows_created += u64::from(t.created);
        if TCP {
            // The TCP header's 20 bytes, in the line extraction has just read.
            if let Some(seg) = TcpSegment::read(p.data(), x) {
                self.table.observe_tcp(t.id, t.dir, &seg);
            }
        }
        // The owner is a function of the flow's keyed hash, so a flow never moves;
        // multiply-shift maps the hash onto 0..n without a division.
        let owner = ((u64::from(t.hash) * self.consumers) >> 32) as usize;
        let tag = FlowTag::new(Some(t.id), t.dir);
        (owner, tag)
    }

    /// Hands the ends of flows evicted during the block to `on_flow_end`, and expires idle
    /// flows (and reports active ones) every `expire_every` of packet time: called after each
    /// block, and per packet when flow time passes the next expiry. (Evictions are handed
    /// over here, not per packet: any eviction code on the packet's path, even a branch never
    /// taken, costs every packet reloads of the stage's state.)
    pub(super) fn after_block(&mut self, on_flow_end: &mut dyn FnMut(&FlowEnd)) {
        while let Some(ev) = self.table.pop_evicted_end() {
            on_flow_end(&ev);
        }
        if self.tracking && self.last_ts >= self.next_expire {
            for e in self.table.expire_ends(self.last_ts) {
                on_flow_end(&e);
            }
            self.next_expire = self.last_ts.saturating_add(self.expire_ns);
        }
    }

    /// While no packet arrives from a live source: flow time follows the system clock (the
    /// clock the kernel stamps packets with), so idle and active timeouts fire on a quiet
    /// link too.
    pub(super) fn quiet(&mut self, now_ns: u64, on_flow_end: &mut dyn FnMut(&FlowEnd)) {
        if now_ns > self.last_ts {
            self.last_ts = now_ns;
            self.after_block(on_flow_end);
        }
    }

    /// At the end of a run: every flow still in the table ends.
    pub(super) fn finish(&mut self, on_flow_end: &mut dyn FnMut(&FlowEnd)) {
        for e in self.table.flush_ends() {
            on_flow_end(&e);
        }
    }

    /// Whether the table follows TCP states: the stage then walks blocks with
    /// `route::<true>` (`Pipeline::walk_tcp`).
    pub(super) fn follows_tcp(&self) -> bool {
        self.tcp
    }

    /// Whether flows are tracked (steering on).
    pub(super) fn tracking(&self) -> bool {
        self.tracking
    }

    /// The live table (empty with steering off).
    pub(super) fn table(&self) -> &FlowTable {
        &self.table
    }
}
