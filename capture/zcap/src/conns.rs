//! The TCP state of each flow (Zeek's conn_state and history, `zcrx_flowcache::TcpState`)
//! for `--flows` and `--ipfix`: followed by a shard's consumer from each TCP packet's header
//! (a second extraction, on the consumer's side: the stage's work is unchanged), read by the
//! shard's flow-end hook and its ticks. The consumer is inline, on the stage's thread, and
//! takes each packet as the stage steers it (not whole blocks after them), so a flow's state
//! holds every packet before its record.
//!
//! Kept per flow key (the table's canonical key) with the id of the flow it belongs to and
//! its first packet's time: a packet of a new flow of the same key starts a new state. The
//! state it replaces is kept aside until its record comes: a flow evicted for room has its
//! record handed out after the block, by which time its key may have come back. At most
//! `most` keys (the flow table's capacity: its live flows); a flow beyond them has no state.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use zcrx_capture::Delivered;
use zcrx_flowcache::{
    extract, EndReason, FlowId, FlowKey, FlowRecord, LinkType, TcpSegment, TcpState,
};

/// A flow's state, the flow's id and its first packet's time (ns).
type Held = (FlowId, u64, TcpState);

/// The TCP states of one shard's flows.
pub(crate) struct TcpStates {
    by_key: HashMap<FlowKey, Held>,
    /// States replaced by a newer flow of their key before their record came.
    replaced: HashMap<FlowKey, TcpState>,
    most: usize,
}

impl TcpStates {
    /// Room for `most` connections.
    pub(crate) fn new(most: usize) -> Self {
        TcpStates {
            by_key: HashMap::new(),
            replaced: HashMap::new(),
            most,
        }
    }

    /// A packet of a tracked flow, framed as `link`: a TCP segment moves its flow's state.
    pub(crate) fn packet(&mut self, link: LinkType, d: &Delivered<'_>) {
        let tag = d.flow();
        let Some(id) = tag.id() else { return };
        let Ok(x) = extract(link, d.data(), d.meta().vlan_tci) else {
            return;
        };
        let Some(seg) = TcpSegment::read(d.data(), &x) else {
            return;
        };
        let key = x.key.canonical().0;
        let ts = d.meta().ts_ns;
        let full = self.by_key.len() >= self.most;
        let (held, first_ns, state) = match self.by_key.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(_) if full => return,
            Entry::Vacant(e) => e.insert((id, ts, TcpState::new())),
        };
        if *held != id {
            // A new flow of the key: the last one ended (its record is out, or comes after
            // this block).
            self.replaced.insert(key, *state);
            *held = id;
            *first_ns = ts;
            *state = TcpState::new();
        }
        state.observe(tag.dir(), &seg);
    }

    /// The state of the flow `r` reports; forgotten when the flow ended (kept for an
    /// active-timeout report, the flow going on).
    pub(crate) fn ended(&mut self, r: &FlowRecord) -> Option<TcpState> {
        let key = &r.stats.key;
        // The held state is a later flow's when that flow began after this one's last packet.
        let later = self
            .by_key
            .get(key)
            .is_some_and(|&(_, first_ns, _)| first_ns > r.stats.last_ns);
        if later {
            return self.replaced.remove(key);
        }
        self.replaced.remove(key);
        if r.end == EndReason::Active {
            self.live(key)
        } else {
            self.by_key.remove(key).map(|(_, _, t)| t)
        }
    }

    /// The state of the live flow of canonical key `key`.
    pub(crate) fn live(&self, key: &FlowKey) -> Option<TcpState> {
        self.by_key.get(key).map(|&(_, _, t)| t)
    }
}
