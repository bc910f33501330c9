//! The `--flows` table at the end of a run: the run's flow records summed per flow key, so
//! that it grows with the number of flows, not with the run's length. A flow reported
//! several times (by the active timeout, or ended by a timeout and seen again) is one line:
//! packets, bytes and TCP flags summed (OR-ed) per direction, the earliest first packet (and
//! the initiator of the record that holds it), the latest last packet and the end reason of
//! the record that holds it. At most a bound of keys ([`KEYS_PER_SLOT`] x `--max-flows`);
//! the records of further keys are counted, not kept. `--flows-every` and the IPFIX export
//! stay per record.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use zcrx_flowcache::names::Names;
use zcrx_flowcache::{EndReason, FlowKey, FlowRecord, FlowStats, TcpState};

use crate::print::FlowLine;

/// Flow keys the final table holds per slot of the flow table (`--max-flows`): room for the
/// table's flows four times over, for runs whose flows come and go.
pub(crate) const KEYS_PER_SLOT: usize = 4;

/// A flow key's sums, the latest record's end reason and TCP state, and the first names found
/// (`--names`).
type Line = (FlowStats, EndReason, Option<TcpState>, Option<Box<Names>>);

/// The flow records of a run, summed per flow key.
pub(crate) struct FlowTotals {
    /// Per canonical key: the sums, the end reason of the latest record, and the TCP state
    /// that record had.
    flows: HashMap<FlowKey, Line>,
    /// Keys held at most.
    most: usize,
    /// Records whose key found no room (`most` keys held).
    left_out: u64,
}

impl FlowTotals {
    /// Room for `most` flow keys.
    pub(crate) fn new(most: usize) -> Self {
        FlowTotals {
            flows: HashMap::new(),
            most,
            left_out: 0,
        }
    }

    /// Adds `r` (with its TCP state, if followed, and its names, if found) to its key's
    /// line, or counts it when the key is new and the table is full. A line keeps the first
    /// of each name found (the shards of `--shards N` may each report the key, and each see
    /// one direction of it).
    pub(crate) fn add(&mut self, r: &FlowRecord, tcp: Option<TcpState>, names: Option<Box<Names>>) {
        let full = self.flows.len() >= self.most;
        match self.flows.entry(r.stats.key) {
            Entry::Occupied(mut e) => {
                let line = e.get_mut();
                merge(line, r, tcp);
                match (&mut line.3, names) {
                    (Some(have), Some(more)) => merge_names(have, *more),
                    (have @ None, more) => *have = more,
                    (Some(_), None) => {}
                }
            }
            Entry::Vacant(_) if full => self.left_out += 1,
            Entry::Vacant(e) => {
                e.insert((r.stats, r.end, tcp, names));
            }
        }
    }

    /// The lines, in the order of their first packets (ties by key), for
    /// [`print_flows`](crate::print::print_flows), which sorts them by bytes.
    pub(crate) fn into_lines(self) -> Vec<FlowLine> {
        let mut lines: Vec<FlowLine> = self
            .flows
            .into_values()
            .map(|(s, end, tcp, names)| (s, Some(end), tcp, names))
            .collect();
        lines.sort_by_key(|(s, _, _, _)| (s.first_ns, s.key));
        lines
    }

    /// What the table could not hold, for standard error (`None`: it holds every record).
    pub(crate) fn note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "zcap: --flows: {} flow records of flows beyond the table's {} are not in it ({} x --max-flows; --ipfix exports every record)",
                self.left_out, self.most, KEYS_PER_SLOT
            )
        })
    }
}

/// Says, if any were, how many flow records the flow tables lost: evicted flows' records
/// their queues had no room for, in neither `--flows` nor the IPFIX export. The pipeline
/// gives its tables room for a block's evictions, so this stays silent but in a defect.
pub(crate) fn report_lost(lost: u64) {
    if lost > 0 {
        eprintln!(
            "zcap: {lost} flow records lost (evicted flows' records the flow table had no room to queue: in neither --flows nor the IPFIX export)"
        );
    }
}

/// `more`'s names that `have` lacks, added to it (the first found of each stays).
fn merge_names(have: &mut Names, more: Names) {
    have.client_hello = have.client_hello.take().or(more.client_hello);
    have.server_hello = have.server_hello.take().or(more.server_hello);
    have.dns_query = have.dns_query.take().or(more.dns_query);
    have.dns_response = have.dns_response.take().or(more.dns_response);
    have.http_request = have.http_request.take().or(more.http_request);
    have.http_response = have.http_response.take().or(more.http_response);
}

/// `r` (its TCP state `tcp`) added to the line of its key.
fn merge((s, end, state, _): &mut Line, r: &FlowRecord, tcp: Option<TcpState>) {
    let n = &r.stats;
    for d in 0..2 {
        s.packets[d] += n.packets[d];
        s.bytes[d] += n.bytes[d];
        s.tcp_flags[d] |= n.tcp_flags[d];
    }
    if n.first_ns < s.first_ns {
        s.first_ns = n.first_ns;
        s.initiator = n.initiator;
    }
    if n.last_ns >= s.last_ns {
        s.last_ns = n.last_ns;
        *end = r.end;
        *state = tcp;
    }
    s.closed |= n.closed;
}

#[cfg(test)]
mod test {
    use super::*;
    use std::net::Ipv4Addr;
    use zcrx_flowcache::Direction;

    fn record(port: u16, first_ns: u64, last_ns: u64, end: EndReason) -> FlowRecord {
        FlowRecord {
            stats: {
                let mut stats = FlowStats::default();
                stats.key = zcrx_flowcache::FlowKey::v4(
                    Ipv4Addr::new(198, 18, 0, 1),
                    Ipv4Addr::new(198, 18, 0, 2),
                    6,
                    port,
                    80,
                );
                stats.packets = [2, 1];
                stats.bytes = [200, 100];
                stats.first_ns = first_ns;
                stats.last_ns = last_ns;
                stats.tcp_flags = [0x02, 0x12];
                stats.initiator = Direction::Forward;
                stats.closed = false;
                stats
            },
            end,
        }
    }

    /// Reports of one flow make one line: counts summed per direction, flags OR-ed, the
    /// earliest first packet with its initiator, the latest last packet with its end reason,
    /// whatever order the records come in.
    #[test]
    fn records_of_a_key_sum_into_one_line() {
        let mut t = FlowTotals::new(10);
        let mut late = record(1000, 120, 170, EndReason::Idle);
        late.stats.tcp_flags = [0x01, 0x04];
        late.stats.closed = true;
        let mut early = record(1000, 10, 60, EndReason::Active);
        early.stats.initiator = Direction::Reverse;
        t.add(&record(1000, 60, 120, EndReason::Active), None, None);
        t.add(&late, None, None);
        t.add(&early, None, None);
        t.add(&record(2000, 5, 6, EndReason::Flush), None, None);
        let lines = t.into_lines();
        assert_eq!(lines.len(), 2);
        let (s, end, _, _) = &lines[1];
        let (s, end) = (*s, *end);
        assert_eq!(s.key.sport(), 1000);
        assert_eq!((s.packets, s.bytes), ([6, 3], [600, 300]));
        assert_eq!(s.tcp_flags, [0x03, 0x16]);
        assert_eq!((s.first_ns, s.last_ns), (10, 170));
        assert_eq!(s.initiator, Direction::Reverse);
        assert!(s.closed);
        assert_eq!(end, Some(EndReason::Idle));
        assert_eq!(lines[0].0.key.sport(), 2000, "ordered by first packet");
    }

    /// The table holds at most its bound of keys: records of known keys still add up, those
    /// of further keys are counted and said.
    #[test]
    fn keys_beyond_the_bound_are_counted_not_kept() {
        let mut t = FlowTotals::new(3);
        for round in 0..4u64 {
            for port in 0..5u16 {
                t.add(
                    &record(port, round * 100, round * 100 + 50, EndReason::Active),
                    None,
                    None,
                );
            }
        }
        assert_eq!(t.left_out, 4 * 2);
        let note = t.note().unwrap();
        assert!(
            note.contains("8 flow records") && note.contains("table's 3"),
            "{note}"
        );
        let lines = t.into_lines();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|(s, _, _, _)| s.packets == [8, 4]));
        assert!(FlowTotals::new(3).note().is_none());
    }

    /// With several shards (or several records of a flow) a line keeps the first of each
    /// name found: a record without names neither clears nor replaces them, a later one adds
    /// what the line lacks (a response a shard of the other direction read).
    #[test]
    fn a_line_keeps_the_first_names_found() {
        let named = |host: &str| {
            let mut f = zcrx_flowcache::names::FlowNames::new();
            let req = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
            f.tcp(Direction::Forward, 1, 0x18, req.as_bytes(), (1000, 80));
            Some(Box::new(f.names().clone()))
        };
        let mut t = FlowTotals::new(10);
        t.add(&record(1000, 10, 20, EndReason::Active), None, None);
        t.add(
            &record(1000, 20, 30, EndReason::Active),
            None,
            named("first.example"),
        );
        t.add(&record(1000, 30, 40, EndReason::Active), None, None);
        t.add(
            &record(1000, 40, 50, EndReason::Idle),
            None,
            named("second.example"),
        );
        let mut reply = zcrx_flowcache::names::FlowNames::new();
        reply.tcp(
            Direction::Reverse,
            1,
            0x18,
            b"HTTP/1.1 404 No\r\n",
            (80, 1000),
        );
        let reply = Some(Box::new(reply.names().clone()));
        t.add(&record(1000, 50, 60, EndReason::Idle), None, reply);
        let lines = t.into_lines();
        let names = lines[0].3.as_ref().expect("names kept");
        let host = names.http_request.as_ref().unwrap().host.as_deref();
        assert_eq!(host, Some("first.example"));
        assert_eq!(names.http_response.unwrap().status, 404);
    }
}
