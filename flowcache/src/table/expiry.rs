//! Flows leaving the table between packets: idle and active timeouts, and the flush at the
//! end of a capture.

use std::time::Duration;

use super::evicted::{copy_state, take_state, FlowEnd};
use super::flow_table::FlowTable;
use super::slot::{Slot, NONE_SINCE};
use super::tags::{EMPTY, WAYS};
use crate::proto::ipproto;
use crate::record::{EndReason, FlowRecord};

impl FlowTable {
    /// Frees `slot`; its record, unless the flow has had no packet since its last report.
    fn remove(&mut self, slot: usize, end: EndReason) -> Option<FlowRecord> {
        self.tags[slot / WAYS][slot % WAYS] = EMPTY;
        self.len -= 1;
        match end {
            EndReason::Evicted => self.counters.evicted += 1,
            EndReason::Idle | EndReason::EndOfFlow => self.counters.expired += 1,
            EndReason::Flush => self.counters.flushed += 1,
            EndReason::Active => {}
        }
        let s = &mut self.slots[slot];
        s.generation = s.generation.wrapping_add(1);
        (s.packets[0] + s.packets[1] > 0).then(|| FlowRecord {
            stats: s.stats(),
            end,
        })
    }

    /// The flow's counters since its last report, which start again from zero (the flow
    /// stays, with its initiator and generation).
    fn report(&mut self, slot: usize) -> FlowRecord {
        let s = &mut self.slots[slot];
        let record = FlowRecord {
            stats: s.stats(),
            end: EndReason::Active,
        };
        s.closed_before = record.stats.closed;
        s.first_ns = NONE_SINCE;
        s.packets = [0; 2];
        s.bytes = [0; 2];
        s.tcp_flags = [0; 2];
        record
    }

    fn timeout(&self, s: &Slot) -> Duration {
        let t = &self.timeouts;
        match s.key.proto() {
            ipproto::TCP if s.closed() => t.tcp_closed,
            ipproto::TCP => t.tcp,
            ipproto::UDP | ipproto::UDPLITE => t.udp,
            ipproto::ICMP | ipproto::ICMPV6 => t.icmp,
            _ => t.other,
        }
    }

    /// Removes and yields every flow idle at `now_ns` for longer than its timeout
    /// ([`EndReason::EndOfFlow`] for TCP after FIN or RST, else [`EndReason::Idle`]), and
    /// yields a report of every flow whose current report period is older than the active
    /// timeout ([`EndReason::Active`]; the flow stays). A flow that ends with nothing new
    /// since its last report yields nothing more. Flows not yet consumed from the iterator
    /// when it is dropped stay as they are. Any evicted flow's record not yet taken
    /// ([`FlowTable::drain_evicted`]) comes first. ([`FlowTable::expire_ends`] yields the
    /// flows' TCP states with them.)
    pub fn expire(&mut self, now_ns: u64) -> impl Iterator<Item = FlowRecord> + '_ {
        self.expire_ends(now_ns).map(|e| e.record)
    }

    /// [`FlowTable::expire`], each record with its flow's TCP state ([`FlowEnd`]): the state
    /// at its end for a flow that ends, the state so far for an active-timeout report.
    pub fn expire_ends(&mut self, now_ns: u64) -> impl Iterator<Item = FlowEnd> + '_ {
        let active = self.timeouts.active.map(|a| a.as_nanos() as u64);
        let mut slot = 0;
        std::iter::from_fn(move || {
            if let Some(e) = self.aside.evicted.pop() {
                return Some(e);
            }
            while slot < self.slots.len() {
                let i = slot;
                slot += 1;
                if self.tag(i) == EMPTY {
                    continue;
                }
                let s = &self.slots[i];
                if now_ns.saturating_sub(s.last_ns) > self.timeout(s).as_nanos() as u64 {
                    let end = if s.key.proto() == ipproto::TCP && s.closed() {
                        EndReason::EndOfFlow
                    } else {
                        EndReason::Idle
                    };
                    let tcp = take_state(&mut self.aside.tcp, i);
                    match self.remove(i, end) {
                        Some(record) => return Some(FlowEnd { record, tcp }),
                        None => continue,
                    }
                }
                if active.is_some_and(|a| {
                    s.packets[0] + s.packets[1] > 0 && now_ns.saturating_sub(s.first_ns) >= a
                }) {
                    let tcp = copy_state(&self.aside.tcp, i);
                    let record = self.report(i);
                    return Some(FlowEnd { record, tcp });
                }
            }
            None
        })
    }

    /// Removes and yields every flow (end of capture), after any evicted flow's record not
    /// yet taken. ([`FlowTable::flush_ends`] yields the flows' TCP states with them.)
    pub fn flush(&mut self) -> impl Iterator<Item = FlowRecord> + '_ {
        self.flush_ends().map(|e| e.record)
    }

    /// [`FlowTable::flush`], each record with its flow's TCP state ([`FlowEnd`]).
    pub fn flush_ends(&mut self) -> impl Iterator<Item = FlowEnd> + '_ {
        let mut slot = 0;
        std::iter::from_fn(move || {
            if let Some(e) = self.aside.evicted.pop() {
                return Some(e);
            }
            while slot < self.slots.len() {
                let i = slot;
                slot += 1;
                if self.tag(i) != EMPTY {
                    let tcp = take_state(&mut self.aside.tcp, i);
                    if let Some(record) = self.remove(i, EndReason::Flush) {
                        return Some(FlowEnd { record, tcp });
                    }
                }
            }
            None
        })
    }
}
