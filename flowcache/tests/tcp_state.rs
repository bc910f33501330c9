//! `TcpState` against Zeek's documented definitions (conn.log's `conn_state` and `history`,
//! scripts/base/protocols/conn/main.zeek): a crafted segment sequence for every state, and for
//! every history rule (upper case for the originator; a, d, i, q once a direction; s, h, f, r
//! again at a new sequence number; t and w at the 1st, 10th, 100th occurrence). Then the same
//! connections as frames, through `extract`, `FlowTable::track` and `TcpSegment::read`, the
//! state kept per flow slot by the caller, and by a table that follows TCP states
//! (`FlowTableConfig::with_tcp_state`): each flow's state leaves the table with its record on
//! every path (eviction from a full table, idle expiry, active-timeout reports, flush), and a
//! slot's next flow starts afresh.

use std::time::Duration;

use zcrx_flowcache::tcp_state::HISTORY_MAX;
use zcrx_flowcache::{
    extract, ConnState, Direction, EndReason, FlowEnd, FlowId, FlowKey, FlowTable, FlowTableConfig,
    LinkType, TcpSegment, TcpState, Timeouts, Tracked, TCP_STATE_BYTES,
};

const F: u8 = 0x01;
const S: u8 = 0x02;
const R: u8 = 0x04;
const P: u8 = 0x08;
const A: u8 = 0x10;

/// One segment: who sent it (true: the first sender's side, the key's forward direction),
/// flags, sequence, acknowledgement, payload length, window.
type Seg = (bool, u8, u32, u32, u32, u16);

/// The originator's initial sequence number and the responder's.
const O: u32 = 1000;
const RS: u32 = 5000;

fn run(segs: &[Seg]) -> TcpState {
    let mut t = TcpState::new();
    for &(fwd, flags, seq, ack, len, win) in segs {
        let dir = if fwd {
            Direction::Forward
        } else {
            Direction::Reverse
        };
        t.observe(dir, &TcpSegment::new(flags, seq, ack, len, win));
    }
    t
}

/// The three-way handshake.
fn handshake() -> Vec<Seg> {
    vec![
        (true, S, O, 0, 0, 64240),
        (false, S | A, RS, O + 1, 0, 65160),
        (true, A, O + 1, RS + 1, 0, 502),
    ]
}

fn with(mut a: Vec<Seg>, b: &[Seg]) -> Vec<Seg> {
    a.extend_from_slice(b);
    a
}

/// Every conn_state, each from the situation its definition names.
fn cases() -> Vec<(&'static str, Vec<Seg>, ConnState, &'static str)> {
    let data = [
        (true, P | A, O + 1, RS + 1, 100, 502),
        (false, A, RS + 1, O + 101, 0, 509),
        (false, P | A, RS + 1, O + 101, 300, 509),
        (true, A, O + 101, RS + 301, 0, 501),
    ];
    vec![
        (
            "S0: connection attempt seen, no reply",
            vec![(true, S, O, 0, 0, 64240)],
            ConnState::S0,
            "S",
        ),
        (
            "S1: established, not terminated",
            with(handshake(), &data),
            ConnState::S1,
            "ShADad",
        ),
        (
            "SF: normal establishment and termination",
            with(
                with(handshake(), &data),
                &[
                    (true, F | A, O + 101, RS + 301, 0, 501),
                    (false, F | A, RS + 301, O + 102, 0, 509),
                    (true, A, O + 102, RS + 302, 0, 501),
                ],
            ),
            ConnState::SF,
            "ShADadFf",
        ),
        (
            "REJ: connection attempt rejected",
            vec![(true, S, O, 0, 0, 64240), (false, R | A, 0, O + 1, 0, 0)],
            ConnState::REJ,
            "Sr",
        ),
        (
            "S2: established, close attempt by the originator, no reply",
            with(handshake(), &[(true, F | A, O + 1, RS + 1, 0, 502)]),
            ConnState::S2,
            "ShAF",
        ),
        (
            "S3: established, close attempt by the responder, no reply",
            with(handshake(), &[(false, F | A, RS + 1, O + 1, 0, 509)]),
            ConnState::S3,
            "ShAf",
        ),
        (
            "RSTO: established, the originator aborted",
            with(
                with(handshake(), &data),
                &[(true, R | A, O + 101, RS + 301, 0, 0)],
            ),
            ConnState::RSTO,
            "ShADadR",
        ),
        (
            "RSTR: the responder sent a RST",
            with(with(handshake(), &data), &[(false, R, RS + 301, 0, 0, 0)]),
            ConnState::RSTR,
            "ShADadr",
        ),
        (
            "RSTOS0: the originator's SYN then its RST, no SYN-ACK",
            vec![(true, S, O, 0, 0, 64240), (true, R, O + 1, 0, 0, 0)],
            ConnState::RSTOS0,
            "SR",
        ),
        (
            "RSTRH: the responder's SYN-ACK then its RST, no SYN",
            vec![
                (true, S | A, RS, O + 1, 0, 65160),
                (true, R, RS + 1, 0, 0, 0),
            ],
            ConnState::RSTRH,
            "hr",
        ),
        (
            "SH: the originator's SYN then its FIN, no SYN-ACK",
            vec![(true, S, O, 0, 0, 64240), (true, F, O + 1, 0, 0, 64240)],
            ConnState::SH,
            "SF",
        ),
        (
            "SHR: the responder's SYN-ACK then its FIN, no SYN",
            vec![
                (true, S | A, RS, O + 1, 0, 65160),
                (true, F | A, RS + 1, O + 1, 0, 509),
            ],
            ConnState::SHR,
            "hf",
        ),
        (
            "OTH: no SYN, midstream traffic",
            vec![
                (true, P | A, O, RS, 100, 502),
                (false, A, RS, O + 100, 0, 509),
            ],
            ConnState::OTH,
            "Da",
        ),
    ]
}

#[test]
fn every_state_from_its_definition() {
    let cases = cases();
    let mut states: Vec<ConnState> = cases.iter().map(|c| c.2).collect();
    states.sort_by_key(|s| s.name());
    states.dedup();
    assert_eq!(states.len(), ConnState::ALL.len(), "a case per state");
    for (what, segs, state, history) in cases {
        let t = run(&segs);
        assert_eq!((t.conn_state(), t.history()), (state, history), "{what}");
        assert_eq!(state.name().parse::<ConnState>(), Ok(state));
    }
    assert!("S4".parse::<ConnState>().is_err());
    assert_eq!(TcpState::new().conn_state(), ConnState::OTH);
    assert_eq!(TcpState::new().history(), "");
}

#[test]
fn history_letters_follow_zeeks_repetition_rules() {
    let data = |seq: u32| (true, P | A, seq, RS + 1, 100, 502);
    // a, d once a direction, however many.
    let t = run(&with(
        handshake(),
        &[
            data(O + 1),
            data(O + 101),
            data(O + 201),
            (false, A, RS + 1, O + 301, 0, 509),
            (false, A, RS + 1, O + 301, 0, 509),
        ],
    ));
    assert_eq!(t.history(), "ShADa");
    // t: a payload at or below the last sequence number, at the 1st, 10th and 100th.
    for (n, want) in [
        (1, "ShADT"),
        (9, "ShADT"),
        (10, "ShADTT"),
        (99, "ShADTT"),
        (100, "ShADTTT"),
    ] {
        let mut segs = with(handshake(), &[data(O + 1)]);
        segs.extend(std::iter::repeat_n(data(O + 1), n));
        assert_eq!(run(&segs).history(), want, "{n} retransmissions");
    }
    // w: a zero window, at the 1st and 10th; not with a RST.
    for (n, want) in [(1, "ShADaw"), (9, "ShADaw"), (10, "ShADaww")] {
        let mut segs = with(handshake(), &[data(O + 1)]);
        segs.extend(std::iter::repeat_n((false, A, RS + 1, O + 101, 0, 0), n));
        assert_eq!(run(&segs).history(), want, "{n} zero windows");
    }
    let t = run(&with(handshake(), &[(false, R, RS + 1, 0, 0, 0)]));
    assert_eq!(t.history(), "ShAr");
    // s, h, f, r: again at a new (relative) sequence number, not at the same one. A SYN
    // retransmitted is one S; so is a new SYN before an answer, which starts the endpoint's
    // sequence space anew (relative sequence 0 again); a SYN after the endpoint closed is
    // another.
    let t = run(&[
        (true, S, O, 0, 0, 64240),
        (true, S, O, 0, 0, 64240),
        (true, S, O + 7777, 0, 0, 64240),
    ]);
    assert_eq!((t.history(), t.conn_state()), ("S", ConnState::S0));
    let t = run(&with(
        handshake(),
        &[
            (true, F | A, O + 1, RS + 1, 0, 502),
            (true, S, O + 7777, 0, 0, 64240),
        ],
    ));
    assert_eq!(t.history(), "ShAFS");
    let t = run(&with(
        handshake(),
        &[
            (false, S | A, RS, O + 1, 0, 65160),
            (true, F | A, O + 1, RS + 1, 0, 502),
            (true, F | A, O + 1, RS + 1, 0, 502),
            (false, R, RS + 1, 0, 0, 0),
            (false, R, RS + 1, 0, 0, 0),
            (false, R, RS + 2, 0, 0, 0),
        ],
    ));
    assert_eq!(t.history(), "ShAFrr");
    // i: FIN+RST; q: SYN+FIN or SYN+RST; once a direction.
    let t = run(&[
        (true, S | F, O, 0, 0, 64240),
        (true, S | R, O, 0, 0, 64240),
        (false, F | R | A, RS, O + 1, 0, 0),
        (false, F | R | A, RS, O + 1, 0, 0),
    ]);
    assert_eq!(t.history(), "Qi");
    // The originator is the first sender: its letters are upper case whichever way the
    // key is.
    let mut t = TcpState::new();
    t.observe(Direction::Reverse, &TcpSegment::new(S, O, 0, 0, 100));
    t.observe(
        Direction::Forward,
        &TcpSegment::new(S | A, RS, O + 1, 0, 100),
    );
    assert_eq!(
        (t.history(), t.originator()),
        ("Sh", Some(Direction::Reverse))
    );
    // The history is bounded: a RST at each of 1000 sequence numbers.
    let mut t = TcpState::new();
    for i in 0..1000u32 {
        t.observe(Direction::Forward, &TcpSegment::new(R, i * 7, 0, 0, 100));
    }
    assert_eq!(t.history(), "R".repeat(HISTORY_MAX));
}

#[test]
fn a_few_bytes_a_flow() {
    assert_eq!(std::mem::size_of::<TcpState>(), 92);
}

/// A TCP/IPv4 frame.
fn frame(fwd: bool, flags: u8, seq: u32, ack: u32, len: u32, win: u16) -> Vec<u8> {
    frame_on(40000, fwd, flags, seq, ack, len, win)
}

/// A TCP/IPv4 frame of the connection from client port `port` to port 80.
fn frame_on(port: u16, fwd: bool, flags: u8, seq: u32, ack: u32, len: u32, win: u16) -> Vec<u8> {
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let (src, dst, sp, dp) = if fwd {
        (a, b, port, 80)
    } else {
        (b, a, 80, port)
    };
    let mut tcp = etherparse::TcpHeader::new(sp, dp, seq, win);
    tcp.acknowledgment_number = ack;
    tcp.fin = flags & F != 0;
    tcp.syn = flags & S != 0;
    tcp.rst = flags & R != 0;
    tcp.psh = flags & P != 0;
    tcp.ack = flags & A != 0;
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64)
        .tcp_header(tcp)
        .write(&mut v, &vec![0x61; len as usize])
        .unwrap();
    v
}

#[test]
fn frames_through_the_table_give_the_same_states() {
    let mut table = FlowTable::with_capacity(1024).unwrap();
    // One state per slot, as a caller keeps them.
    let mut states = vec![TcpState::new(); table.capacity()];
    for (i, (what, segs, state, history)) in cases().into_iter().enumerate() {
        let mut slot = None;
        for (j, &(fwd, flags, seq, ack, len, win)) in segs.iter().enumerate() {
            let f = frame(fwd, flags, seq, ack, len, win);
            // Snapshot length 54: the payload is not in the frame, its length is.
            let cut = &f[..f.len().min(54)];
            let x = extract(LinkType::Ethernet, cut, None).unwrap();
            let seg = TcpSegment::read(cut, &x).expect("a TCP header");
            assert_eq!(seg, TcpSegment::new(flags, seq, ack, len, win), "{what}");
            let t = table.track(x.track_input(x.ip_octets(f.len() as u32), (i * 100 + j) as u64));
            if t.created {
                states[t.id.slot()] = TcpState::new();
            }
            states[t.id.slot()].observe(t.dir, &seg);
            slot = Some(t.id.slot());
        }
        let s = &states[slot.unwrap()];
        assert_eq!((s.conn_state(), s.history()), (state, history), "{what}");
        table.flush().for_each(drop);
    }
}

/// A table that follows TCP states, with a fixed seed.
fn following(capacity: usize) -> FlowTable {
    FlowTable::new(
        FlowTableConfig::with_capacity(capacity)
            .with_seed(Some(5))
            .with_tcp_state(true),
    )
    .unwrap()
}

/// Segment `seg` of the connection from port `port` at `ts`, as the pipeline's stage takes it:
/// extract, track, read the segment, observe it in the table. The frame is cut at 54 bytes
/// (the headers only).
fn feed(table: &mut FlowTable, port: u16, seg: &Seg, ts: u64) -> Tracked {
    let &(fwd, flags, seq, ack, len, win) = seg;
    let f = frame_on(port, fwd, flags, seq, ack, len, win);
    let cut = &f[..f.len().min(54)];
    let x = extract(LinkType::Ethernet, cut, None).unwrap();
    let t = table.track(x.track_input(x.ip_octets(f.len() as u32), ts));
    let seg = TcpSegment::read(cut, &x).expect("a TCP header");
    table.observe_tcp(t.id, t.dir, &seg);
    t
}

/// The canonical key of the connection from port `port`.
fn key_of(port: u16) -> FlowKey {
    let f = frame_on(port, true, S, O, 0, 0, 1000);
    extract(LinkType::Ethernet, &f, None)
        .unwrap()
        .key
        .canonical()
        .0
}

fn summary(t: Option<&TcpState>) -> Option<(ConnState, String)> {
    t.map(|t| (t.conn_state(), t.history().to_string()))
}

/// Every case as a connection of its own, all live at once: each flow's state in the table is
/// the case's, and each leaves with its record at the flush; the table's ids go stale then.
#[test]
fn the_table_holds_a_state_per_flow_and_hands_it_out_at_the_flush() {
    let mut table = following(1024);
    assert!(table.follows_tcp_state());
    let cases = cases();
    let mut ids = Vec::new();
    // Interleaved: one segment of each connection in turn.
    let longest = cases.iter().map(|c| c.1.len()).max().unwrap();
    let mut ts = 0;
    let mut last: Vec<Option<FlowId>> = vec![None; cases.len()];
    for j in 0..longest {
        for (i, (_, segs, _, _)) in cases.iter().enumerate() {
            if let Some(seg) = segs.get(j) {
                ts += 1;
                let t = feed(&mut table, 41000 + i as u16, seg, ts);
                if let Some(id) = last[i] {
                    assert_eq!(id, t.id, "one flow a connection");
                }
                last[i] = Some(t.id);
            }
        }
    }
    for (i, (what, segs, state, history)) in cases.iter().enumerate() {
        let id = last[i].unwrap();
        let t = table.tcp_state(id).expect("a state");
        assert_eq!((t.conn_state(), t.history()), (*state, *history), "{what}");
        assert_eq!(*t, run(segs), "{what}: as a state kept by the caller");
        ids.push(id);
    }
    let ends: Vec<FlowEnd> = table.flush_ends().collect();
    assert_eq!(ends.len(), cases.len());
    for (i, (what, _, state, history)) in cases.iter().enumerate() {
        let e = ends
            .iter()
            .find(|e| e.record.stats.key == key_of(41000 + i as u16))
            .expect("every flow flushed");
        assert_eq!(e.record.end, EndReason::Flush);
        assert_eq!(
            summary(e.tcp.as_ref()),
            Some((*state, history.to_string())),
            "{what}"
        );
    }
    // Stale ids: no state, and a segment for one changes nothing.
    for &id in &ids {
        assert!(table.tcp_state(id).is_none());
        table.observe_tcp(id, Direction::Forward, &TcpSegment::new(S, 1, 0, 0, 1));
        assert!(table.tcp_state(id).is_none());
    }
    assert!(table.is_empty());
}

/// Idle expiry and active-timeout reports: a report carries the state so far and the flow
/// goes on with it; the flow's end, by its idle timeout, carries the whole history. A flow
/// with no TCP segment (UDP) has none.
#[test]
fn states_leave_with_expired_flows_and_active_reports() {
    let mut table = FlowTable::new(
        FlowTableConfig::with_capacity(64)
            .with_seed(Some(9))
            .with_tcp_state(true)
            .with_timeouts({
                let mut t = Timeouts::default();
                t.active = Some(Duration::from_secs(60));
                t.tcp_closed = Duration::from_secs(5);
                t.udp = Duration::from_secs(600);
                t
            }),
    )
    .unwrap();
    let sec = 1_000_000_000u64;
    let sf = &cases()[2];
    assert_eq!(sf.3, "ShADadFf");
    // The handshake and the data in the first minute, the close in the second.
    let (open, close) = sf.1.split_at(7);
    let mut id = None;
    for (j, seg) in open.iter().enumerate() {
        id = Some(feed(&mut table, 42000, seg, j as u64 * sec).id);
    }
    let id = id.unwrap();
    let udp = zcrx_flowcache::testdata::udp4([198, 18, 0, 3], [198, 18, 0, 4], 5000, 53, 20);
    let x = extract(LinkType::Ethernet, &udp, None).unwrap();
    let u = table.track(x.track_input(x.ip_octets(udp.len() as u32), 0));
    assert!(table.tcp_state(u.id).is_none());
    // The active timeout: a report of each flow, the TCP one with its state so far.
    let reports: Vec<FlowEnd> = table.expire_ends(61 * sec).collect();
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert_eq!(r.record.end, EndReason::Active);
    }
    let tcp = reports.iter().find(|r| r.record.stats.key == key_of(42000));
    assert_eq!(
        summary(tcp.and_then(|r| r.tcp.as_ref())),
        Some((ConnState::S1, "ShADad".to_string()))
    );
    let udp_report = reports.iter().find(|r| r.record.stats.key != key_of(42000));
    assert_eq!(udp_report.unwrap().tcp, None);
    assert_eq!(table.tcp_state(id).map(|t| t.history()), Some("ShADad"));
    // The flow goes on and closes; it ends by the closed flows' idle timeout.
    for (j, seg) in close.iter().enumerate() {
        assert_eq!(feed(&mut table, 42000, seg, (62 + j as u64) * sec).id, id);
    }
    let ends: Vec<FlowEnd> = table.expire_ends(70 * sec).collect();
    let end = ends
        .iter()
        .find(|e| e.record.stats.key == key_of(42000))
        .expect("the closed flow expires");
    assert_eq!(end.record.end, EndReason::EndOfFlow);
    assert_eq!(
        end.record.stats.total_packets(),
        3,
        "the packets since the report"
    );
    assert_eq!(
        summary(end.tcp.as_ref()),
        Some((ConnState::SF, "ShADadFf".to_string()))
    );
    assert!(table.tcp_state(id).is_none());
    // The same result through `expire`, which yields the records alone.
    let mut plain = following(64);
    for (j, seg) in sf.1.iter().enumerate() {
        feed(&mut plain, 42000, seg, j as u64 * sec);
    }
    let records: Vec<_> = plain.expire(3600 * sec).collect();
    assert_eq!(records.len(), 1);
}

/// A full table (one set of 16 ways): each new connection evicts the least recently seen,
/// whose state waits beside its record until taken; the new flow in the evicted flow's slot
/// starts a fresh state. With the queue full, records and states are dropped together and
/// the queue stays in step; `drain_evicted` takes the states with the records.
#[test]
fn states_leave_with_evicted_flows_and_slots_start_afresh() {
    let mut table = following(16);
    assert_eq!(table.capacity(), 16);
    let hs = handshake();
    let mut ts = 0;
    let mut id_of = std::collections::HashMap::new();
    // 16 connections, each at a stage of its handshake: the first three segments, one, two.
    let segs = |i: u16| 1 + usize::from((i + 2) % 3);
    for i in 0..16u16 {
        for seg in &hs[..segs(i)] {
            ts += 1;
            let t = feed(&mut table, 43000 + i, seg, ts);
            assert!(!t.evicted);
            id_of.insert(43000 + i, t.id);
        }
    }
    let expected = |i: u16| {
        let t = run(&hs[..segs(i)]);
        Some((t.conn_state(), t.history().to_string()))
    };
    for i in 0..16u16 {
        assert_eq!(summary(table.tcp_state(id_of[&(43000 + i)])), expected(i));
    }
    // A new connection's SYN evicts the oldest (port 43000), whose state comes out with it.
    ts += 1;
    let t = feed(&mut table, 44000, &hs[0], ts);
    assert!(t.created && t.evicted);
    let victim = id_of[&43000];
    assert_eq!(
        t.id.slot(),
        victim.slot(),
        "the new flow takes the victim's slot"
    );
    let e = table.pop_evicted_end().expect("the evicted flow's end");
    assert_eq!(e.record.end, EndReason::Evicted);
    assert_eq!(e.record.stats.key, key_of(43000));
    assert_eq!(summary(e.tcp.as_ref()), expected(0));
    assert_eq!(expected(0).unwrap().1, "ShA");
    assert!(table.pop_evicted_end().is_none());
    // The slot's new flow has its own state, begun at its SYN: not the victim's.
    assert!(table.tcp_state(victim).is_none());
    let mut fresh = TcpState::new();
    fresh.observe(t.dir, &TcpSegment::new(S, O, 0, 0, 64240));
    assert_eq!(table.tcp_state(t.id), Some(&fresh));
    // A UDP flow evicting a TCP one: the TCP flow's state comes out; the UDP flow has none.
    let udp = zcrx_flowcache::testdata::udp4([198, 18, 0, 9], [198, 18, 0, 10], 9, 53, 20);
    let x = extract(LinkType::Ethernet, &udp, None).unwrap();
    ts += 1;
    let u = table.track(x.track_input(x.ip_octets(udp.len() as u32), ts));
    assert!(u.evicted);
    let e = table.pop_evicted_end().unwrap();
    assert_eq!(e.record.stats.key, key_of(43001));
    assert_eq!(summary(e.tcp.as_ref()), expected(1));
    assert_eq!(expected(1).unwrap().1, "S");
    assert!(table.tcp_state(u.id).is_none());

    // A queue of room 1: the second eviction before a take is lost with its state, and the
    // queue's record and state still belong together.
    let mut small = FlowTable::new(
        FlowTableConfig::with_capacity(16)
            .with_seed(Some(5))
            .with_tcp_state(true)
            .with_evicted_room(1),
    )
    .unwrap();
    let mut ts = 0;
    for i in 0..18u16 {
        for seg in &hs[..1 + usize::from(i % 3)] {
            ts += 1;
            feed(&mut small, 45000 + i, seg, ts);
        }
    }
    assert_eq!(small.counters().evicted, 2);
    assert_eq!(small.counters().lost, 1);
    let e = small.pop_evicted_end().unwrap();
    assert_eq!(e.record.stats.key, key_of(45000));
    assert_eq!(
        summary(e.tcp.as_ref()),
        Some((ConnState::S0, "S".to_string()))
    );
    // drain_evicted takes the states too: the next eviction's state is its own.
    ts += 1;
    feed(&mut small, 45100, &hs[0], ts);
    assert_eq!(small.drain_evicted().count(), 1);
    ts += 1;
    feed(&mut small, 45101, &hs[0], ts);
    let e = small.pop_evicted_end().unwrap();
    assert_eq!(e.record.stats.key, key_of(45003));
    assert_eq!(
        summary(e.tcp.as_ref()),
        Some((ConnState::S0, "S".to_string()))
    );
    // A clone keeps the queue and the states.
    ts += 1;
    feed(&mut small, 45102, &hs[0], ts);
    let mut copy = small.clone();
    assert_eq!(copy.pop_evicted_end(), small.pop_evicted_end());
}

/// A table that does not follow TCP states: `observe_tcp` does nothing, no state comes out,
/// and the states cost `TCP_STATE_BYTES` a slot in the tables that do.
#[test]
fn off_by_default_and_what_it_costs() {
    assert_eq!(TCP_STATE_BYTES, 92, "a TcpState a slot");
    let mut table = FlowTable::new(FlowTableConfig::with_capacity(64).with_seed(Some(5))).unwrap();
    assert!(!table.follows_tcp_state());
    let mut id = None;
    for (j, seg) in handshake().iter().enumerate() {
        id = Some(feed(&mut table, 46000, seg, j as u64).id);
    }
    assert!(table.tcp_state(id.unwrap()).is_none());
    let ends: Vec<FlowEnd> = table.flush_ends().collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].tcp, None);
    assert_eq!(ends[0].record.stats.total_packets(), 3);
    let c = FlowTableConfig::with_capacity(65_536);
    assert_eq!(
        c.with_tcp_state(true).memory_bytes() - c.memory_bytes(),
        65_536 * TCP_STATE_BYTES
    );
}
