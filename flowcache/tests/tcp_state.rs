//! `TcpState` against Zeek's documented definitions (conn.log's `conn_state` and `history`,
//! scripts/base/protocols/conn/main.zeek): a crafted segment sequence for every state, and for
//! every history rule (upper case for the originator; a, d, i, q once a direction; s, h, f, r
//! again at a new sequence number; t and w at the 1st, 10th, 100th occurrence). Then the same
//! connections as frames, through `extract`, `FlowTable::track` and `TcpSegment::read`, the
//! state kept per flow slot.

use zcrx_flowcache::tcp_state::HISTORY_MAX;
use zcrx_flowcache::{extract, ConnState, Direction, FlowTable, LinkType, TcpSegment, TcpState};

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
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let (src, dst, sp, dp) = if fwd {
        (a, b, 40000, 80)
    } else {
        (b, a, 80, 40000)
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
