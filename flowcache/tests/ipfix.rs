//! The IPFIX encoder: every record read back as written (proptest over IPv4/IPv6, ICMP,
//! VLAN, message sizes), sequence numbers, template refresh, size limits, hostile input to
//! the decoder, and no allocation per record (counting allocator).

zcrx_ring::counting_allocator!();

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use zcrx_flowcache::ipfix::decode::{
    messages, DecodeError, Decoder, ExportedFlow, Message, MAX_RECORDS_PER_MESSAGE, MAX_TEMPLATES,
};
use zcrx_flowcache::ipfix::{self, ConfigError, Encoder, EncoderConfig};
use zcrx_flowcache::{Direction, EndReason, FlowKey, FlowRecord, FlowStats, TcpSegment, TcpState};

/// A TCP state from arbitrary segments (both ways, every flag, sequence numbers near each
/// other so that histories grow).
fn arb_tcp() -> impl Strategy<Value = Option<TcpState>> {
    proptest::option::of(proptest::collection::vec(
        (
            any::<bool>(),
            any::<u8>(),
            0u32..6,
            0u32..6,
            0u32..3,
            0u16..2,
        ),
        0..40,
    ))
    .prop_map(|segs| {
        segs.map(|segs| {
            let mut t = TcpState::new();
            for (fwd, flags, seq, ack, len, win) in segs {
                let dir = if fwd {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
                t.observe(
                    dir,
                    &TcpSegment::new(flags, seq * 100, ack * 100, len * 50, win),
                );
            }
            t
        })
    })
}

fn arb_record() -> impl Strategy<Value = FlowRecord> {
    (
        any::<bool>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        prop_oneof![
            Just(6u8),
            Just(17),
            Just(1),
            Just(58),
            Just(47),
            any::<u8>()
        ],
        any::<(u16, u16)>(),
        proptest::option::of(0u16..4096),
        any::<[u32; 4]>(),
        (0u64..1 << 50, 0u64..1 << 40),
        any::<[u8; 2]>(),
        any::<bool>(),
        0usize..5,
    )
        .prop_map(
            |(v6, a, b, proto, (sp, dp), vlan, c, (t0, dt), flags, rev, end)| {
                let icmp = proto == if v6 { 58 } else { 1 };
                let (sp, dp) = if icmp {
                    (sp & 0xff, dp & 0xff)
                } else {
                    (sp, dp)
                };
                let mut key = if v6 {
                    FlowKey::v6(Ipv6Addr::from(a), Ipv6Addr::from(b), proto, sp, dp)
                } else {
                    let v4 = |x: [u8; 16]| Ipv4Addr::new(x[0], x[1], x[2], x[3]);
                    FlowKey::v4(v4(a), v4(b), proto, sp, dp)
                };
                if let Some(v) = vlan {
                    key = key.with_vlan(v);
                }
                let stats = {
                    let mut stats = FlowStats::default();
                    stats.key = key;
                    stats.packets = [u64::from(c[0]), u64::from(c[1])];
                    stats.bytes = [u64::from(c[2]) * 7, u64::from(c[3]) * 3];
                    stats.first_ns = t0;
                    stats.last_ns = t0 + dt;
                    stats.tcp_flags = flags;
                    stats.initiator = if rev {
                        Direction::Reverse
                    } else {
                        Direction::Forward
                    };
                    stats.closed = false;
                    stats
                };
                let end = [
                    EndReason::Idle,
                    EndReason::Active,
                    EndReason::EndOfFlow,
                    EndReason::Evicted,
                    EndReason::Flush,
                ][end];
                FlowRecord { stats, end }
            },
        )
}

/// What the decoder must read back for `r`.
fn expected(r: &FlowRecord) -> ExportedFlow {
    let s = r.stats.oriented();
    let k = s.key;
    let icmp = k.proto() == if k.is_ipv6() { 58 } else { 1 };
    ExportedFlow {
        template: 0,
        src: Some(k.src()),
        dst: Some(k.dst()),
        sport: if icmp { 0 } else { k.sport() },
        dport: if icmp { 0 } else { k.dport() },
        icmp_type_code: icmp.then(|| k.sport() << 8 | k.dport()),
        proto: k.proto(),
        start_ms: s.first_ns / 1_000_000,
        end_ms: s.last_ns / 1_000_000,
        packets: s.packets,
        octets: s.bytes,
        tcp_flags: [u16::from(s.tcp_flags[0]), u16::from(s.tcp_flags[1])],
        end_reason: r.end.ipfix_code(),
        vlan: k.vlan(),
    }
}

fn encode_all(records: &[FlowRecord], config: EncoderConfig) -> (Vec<Vec<u8>>, Encoder) {
    encode_seeded(records, config, 0)
}

fn encode_seeded(
    records: &[FlowRecord],
    config: EncoderConfig,
    seed: u16,
) -> (Vec<Vec<u8>>, Encoder) {
    encode_tcp(records, &[], config, seed)
}

/// The records with the TCP states of `tcp` (by index; none past its end).
fn encode_tcp(
    records: &[FlowRecord],
    tcp: &[Option<TcpState>],
    config: EncoderConfig,
    seed: u16,
) -> (Vec<Vec<u8>>, Encoder) {
    let mut enc = Encoder::new(config).expect("valid config");
    enc.set_community_id_seed(seed);
    assert_eq!(enc.community_id_seed(), seed);
    let mut msgs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let now = 1_700_000_000_000 + i as u64;
        match tcp.get(i).copied().flatten() {
            Some(t) => enc.encode_with_tcp(r, Some(&t), now, &mut |m| msgs.push(m.to_vec())),
            None => enc.encode(r, now, &mut |m| msgs.push(m.to_vec())),
        }
    }
    enc.flush(1_800_000_000_000, &mut |m| msgs.push(m.to_vec()));
    (msgs, enc)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Every record comes back as written, in order, oriented from its initiator, with its
    /// Community ID (zcrx's element); no message exceeds the size limit; each header's
    /// sequence number counts the records before it.
    #[test]
    fn records_read_back_as_written(
        records in proptest::collection::vec(arb_record(), 0..300),
        max in ipfix::min_message()..=4000usize,
        every in 1u32..10,
        seed in prop_oneof![Just(0u16), any::<u16>()],
        tcp in proptest::collection::vec(arb_tcp(), 0..300),
    ) {
        let config = EncoderConfig { observation_domain: 77, max_message: max, template_refresh_ms: None, template_every: Some(every) };
        let (msgs, enc) = encode_tcp(&records, &tcp, config, seed);
        let mut dec = Decoder::new();
        let mut got = Vec::new();
        let mut ids = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            prop_assert!(m.len() <= max);
            let (d, zcrx) = dec.message_with_zcrx(m).expect("our own message decodes");
            prop_assert_eq!(zcrx.len(), d.flows.len());
            ids.extend(zcrx.into_iter().map(|z| (z.community_id, z.conn_state, z.history)));
            prop_assert_eq!(d.header.domain, 77);
            prop_assert_eq!(d.header.sequence as usize, got.len());
            prop_assert_eq!(d.unknown_sets, 0);
            prop_assert_eq!(d.templates > 0, i as u32 % every == 0, "templates in message {} with every={}", i, every);
            got.extend(d.flows.into_iter().map(|f| ExportedFlow { template: 0, ..f }));
        }
        let want: Vec<_> = records.iter().map(expected).collect();
        prop_assert_eq!(got, want);
        let want_ids: Vec<_> = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                // Only a TCP flow's state is exported.
                let t = tcp.get(i).copied().flatten().filter(|_| r.stats.key.proto() == 6);
                (
                    Some(r.stats.community_id(seed)),
                    t.map(|t| t.conn_state()),
                    t.map(|t| t.history().to_string()),
                )
            })
            .collect();
        prop_assert_eq!(ids, want_ids);
        prop_assert_eq!(enc.stats().records, records.len() as u64);
        prop_assert_eq!(enc.stats().messages, msgs.len() as u64);
    }

    /// Arbitrary bytes (as they come, and behind a valid header so that the sets are read),
    /// and a valid message with bytes flipped: the decoder never panics, refuses what is not
    /// a message, bounds what it reads by the bytes given, and afterwards still decodes a
    /// valid message exactly as a fresh decoder does.
    #[test]
    fn decoder_survives_hostile_input(bytes in proptest::collection::vec(any::<u8>(), 0..2000), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8)) {
        let mut dec = Decoder::new();
        let r = dec.message(&bytes);
        assert_bounded(&bytes, &r, &dec)?;
        let mut given = 0;
        for m in messages(&bytes) {
            let Ok(m) = m else { continue };
            prop_assert!(m.len() >= ipfix::HEADER_LEN, "a message shorter than its header");
            given += m.len();
            let r = dec.message(m);
            assert_bounded(m, &r, &dec)?;
        }
        prop_assert!(given <= bytes.len(), "messages() handed out {} of {} bytes", given, bytes.len());
        let mut framed = bytes.clone();
        if framed.len() >= ipfix::HEADER_LEN {
            let len = framed.len() as u16;
            framed[..4].copy_from_slice(&[0, 10, (len >> 8) as u8, len as u8]);
            let r = dec.message(&framed);
            prop_assert!(!matches!(r, Err(DecodeError::Version(_) | DecodeError::Length { .. })), "{:?}", r);
            assert_bounded(&framed, &r, &dec)?;
        }
        let r = arb_record().new_tree(&mut proptest::test_runner::TestRunner::deterministic()).unwrap().current();
        let (msgs, _) = encode_all(&[r, r], EncoderConfig::default());
        let mut m = msgs[0].clone();
        for (at, x) in flips { let n = m.len(); m[at % n] ^= x; }
        let mut fresh = Decoder::new();
        let r = fresh.message(&m);
        assert_bounded(&m, &r, &fresh)?;
        let good = dec.message(&msgs[0]);
        prop_assert!(good.as_ref().is_ok_and(|g| g.flows.len() == 2), "{:?}", good);
        prop_assert_eq!(good, Decoder::new().message(&msgs[0]));
    }
}

/// What any message the decoder accepts satisfies, however hostile its bytes: it is an IPFIX
/// message of exactly the bytes given, and what was read from it is bounded by them (a
/// template or a set takes at least 4 bytes, a record at least 1 or a set of its own) and
/// by the decoder's limits.
fn assert_bounded(
    m: &[u8],
    r: &Result<Message, DecodeError>,
    dec: &Decoder,
) -> Result<(), TestCaseError> {
    prop_assert!(dec.templates() <= MAX_TEMPLATES);
    let Ok(msg) = r else { return Ok(()) };
    prop_assert_eq!(&m[..2], &[0u8, 10][..], "accepted without version 10");
    prop_assert_eq!(usize::from(msg.header.length), m.len());
    prop_assert!(msg.flows.len() <= MAX_RECORDS_PER_MESSAGE);
    prop_assert!(
        msg.templates + msg.unknown_sets <= (m.len() - ipfix::HEADER_LEN) / 4,
        "{} templates and {} unknown sets from {} bytes",
        msg.templates,
        msg.unknown_sets,
        m.len()
    );
    prop_assert!(
        msg.flows.len() + msg.records_over_limit <= m.len(),
        "{} records from {} bytes",
        msg.flows.len() + msg.records_over_limit,
        m.len()
    );
    Ok(())
}

#[test]
fn records_are_oriented_from_the_initiator() {
    let client = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 9),
        Ipv4Addr::new(198, 18, 0, 1),
        6,
        40_000,
        443,
    );
    // The canonical key starts at the server; the client sent first.
    let (canon, dir) = client.canonical();
    assert_eq!(dir, Direction::Reverse);
    let r = FlowRecord {
        stats: {
            let mut stats = FlowStats::default();
            stats.key = canon;
            stats.packets = [5, 7];
            stats.bytes = [5000, 700];
            stats.first_ns = 1_000_000_000;
            stats.last_ns = 2_500_000_000;
            stats.tcp_flags = [0x12, 0x02 | 0x10];
            stats.initiator = Direction::Reverse;
            stats.closed = false;
            stats
        },
        end: EndReason::Idle,
    };
    let (msgs, _) = encode_all(&[r], EncoderConfig::default());
    let f = Decoder::new().message(&msgs[0]).unwrap().flows[0];
    assert_eq!(f.src, Some(IpAddr::V4(Ipv4Addr::new(198, 18, 0, 9))));
    assert_eq!((f.sport, f.dport), (40_000, 443));
    assert_eq!(f.packets, [7, 5]);
    assert_eq!(f.octets, [700, 5000]);
    assert_eq!(f.tcp_flags, [0x12, 0x12]);
    assert_eq!((f.start_ms, f.end_ms), (1000, 2500));
    assert_eq!(f.end_reason, 1);
}

#[test]
fn templates_are_resent_on_time() {
    let config = EncoderConfig {
        template_refresh_ms: Some(10_000),
        template_every: None,
        ..Default::default()
    };
    let mut enc = Encoder::new(config).unwrap();
    let r = FlowRecord {
        stats: {
            let mut stats = FlowStats::default();
            stats.key = FlowKey::v4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 17, 1, 2);
            stats.packets = [1, 0];
            stats
        },
        end: EndReason::Flush,
    };
    let mut with_templates = Vec::new();
    for t in [0u64, 5_000, 9_999, 10_000, 15_000, 20_500] {
        enc.encode(&r, t, &mut |_| {});
        enc.flush(t, &mut |m| {
            with_templates.push(Decoder::new().message(m).unwrap().templates > 0)
        });
    }
    assert_eq!(with_templates, [true, false, false, true, false, true]);
}

#[test]
fn absurd_settings_are_refused_with_the_range() {
    let min = ipfix::min_message();
    for asked in [0, min - 1, 65_536, usize::MAX] {
        let e = Encoder::new(EncoderConfig {
            max_message: asked,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            e,
            ConfigError::MessageSize {
                asked,
                min,
                max: 65_535
            }
        );
        assert!(e.to_string().contains(&format!("{min}..=65535")), "{e}");
    }
    assert!(
        min <= ipfix::DEFAULT_MESSAGE,
        "the templates fit a 1500-byte MTU"
    );
    let zero = Encoder::new(EncoderConfig {
        template_every: Some(0),
        ..Default::default()
    });
    assert_eq!(zero.unwrap_err(), ConfigError::ZeroRefresh);
}

#[test]
fn file_of_messages_splits_back() {
    let recs: Vec<_> = (0..100u16)
        .map(|i| FlowRecord {
            stats: {
                let mut stats = FlowStats::default();
                stats.key = FlowKey::v4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 17, i, 53);
                stats.packets = [1, 1];
                stats
            },
            end: EndReason::Flush,
        })
        .collect();
    let (msgs, _) = encode_all(&recs, EncoderConfig::default());
    assert!(msgs.len() > 1);
    let file: Vec<u8> = msgs.concat();
    let mut dec = Decoder::new();
    let n: usize = messages(&file)
        .map(|m| dec.message(m.unwrap()).unwrap().flows.len())
        .sum();
    assert_eq!(n, 100);
    assert!(messages(&file[..file.len() - 1]).any(|m| m.is_err()));
}

#[test]
fn no_allocation_per_record() {
    let mut enc = Encoder::new(EncoderConfig::default()).unwrap();
    let r = FlowRecord {
        stats: {
            let mut stats = FlowStats::default();
            stats.key = FlowKey::v6(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST, 6, 1, 2).with_vlan(5);
            stats.packets = [3, 4];
            stats
        },
        end: EndReason::Idle,
    };
    let mut bytes = 0usize;
    let before = counting::thread_allocs();
    for i in 0..100_000u64 {
        enc.encode(&r, i, &mut |m| bytes += m.len());
    }
    enc.flush(100_000, &mut |m| bytes += m.len());
    assert_eq!(counting::thread_allocs() - before, 0, "encode allocated");
    assert_eq!(enc.stats().records, 100_000);
    assert!(bytes > 100_000 * 90);
}

/// An IPFIX message of domain `domain` holding `sets` (each: set id, body), header included.
fn message(domain: u32, sets: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let body_len: usize = sets.iter().map(|(_, b)| 4 + b.len()).sum();
    let len = 16 + body_len;
    assert!(len <= 65_535);
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&10u16.to_be_bytes());
    m.extend_from_slice(&(len as u16).to_be_bytes());
    m.extend_from_slice(&[0; 8]); // export time, sequence
    m.extend_from_slice(&domain.to_be_bytes());
    for (id, b) in sets {
        m.extend_from_slice(&id.to_be_bytes());
        m.extend_from_slice(&((4 + b.len()) as u16).to_be_bytes());
        m.extend_from_slice(b);
    }
    m
}

/// A template set body: each (id, fields), every field protocolIdentifier of `len` bytes.
fn templates(defs: &[(u16, usize)], len: u16) -> Vec<u8> {
    let mut b = Vec::new();
    for &(id, n) in defs {
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&(n as u16).to_be_bytes());
        for _ in 0..n {
            b.extend_from_slice(&4u16.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
        }
    }
    b
}

/// Two hostile inputs: one 65 535-byte message of one-byte records, and messages of ever new
/// template ids: the decoder's memory stays bounded in both, the excess counted or refused.
#[test]
fn decoder_memory_is_bounded_whatever_the_input() {
    use zcrx_flowcache::ipfix::decode::{
        DecodeError, MAX_RECORDS_PER_MESSAGE, MAX_TEMPLATES, MAX_TEMPLATES_PER_DOMAIN,
    };
    let mut d = Decoder::new();
    d.message(&message(1, &[(2, templates(&[(256, 1)], 1))]))
        .unwrap();
    let records = 65_535 - 16 - 4 - 4 - 16; // room left beside a small template set
    let m = message(
        1,
        &[(2, templates(&[(257, 1)], 1)), (256, vec![6u8; records])],
    );
    let out = d.message(&m).unwrap();
    assert_eq!(out.flows.len(), MAX_RECORDS_PER_MESSAGE);
    assert_eq!(out.records_over_limit, records - MAX_RECORDS_PER_MESSAGE);
    assert!(out.flows.iter().all(|f| f.proto == 6));

    // Fresh template ids, message after message, in one domain: refused past the limit.
    let mut d = Decoder::new();
    let mut next = 256u32;
    let mut refused = 0;
    for _ in 0..200 {
        let defs: Vec<(u16, usize)> = (0..1000)
            .map(|i| ((256 + (next + i - 256) % 65_280) as u16, 0))
            .collect();
        next += 1000;
        match d.message(&message(7, &[(2, templates(&defs, 1))])) {
            Ok(_) => {}
            Err(DecodeError::TemplateLimit) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        d.templates() <= MAX_TEMPLATES_PER_DOMAIN,
        "{}",
        d.templates()
    );
    assert!(refused > 0);
    // Many domains: the total is bounded too.
    let mut d = Decoder::new();
    for domain in 0..40u32 {
        let defs: Vec<(u16, usize)> = (0..4000).map(|i| (256 + i as u16, 0)).collect();
        let _ = d.message(&message(domain, &[(2, templates(&defs, 1))]));
    }
    assert!(d.templates() <= MAX_TEMPLATES, "{}", d.templates());
    // A redefinition replaces: it never counts twice.
    let mut d = Decoder::new();
    for _ in 0..10 {
        d.message(&message(3, &[(2, templates(&[(300, 3)], 1))]))
            .unwrap();
    }
    assert_eq!(d.templates(), 1);
}

/// The bytes of records without names are those of the encoder before names were exported
/// (commit 1295741): 400 records of every kind (with and without TCP states), in messages of
/// three sizes, hash to the SHA-1 digests that encoder gave for them.
#[test]
fn records_without_names_keep_their_bytes() {
    use sha1::{Digest, Sha1};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (records, tcp): (Vec<FlowRecord>, Vec<Option<TcpState>>) = (0..400)
        .map(|_| {
            let r = arb_record().new_tree(&mut runner).unwrap().current();
            let t = arb_tcp().new_tree(&mut runner).unwrap().current();
            (r, t)
        })
        .unzip();
    let mut digests = Vec::new();
    for max_message in [ipfix::min_message(), 1452, 9000] {
        let config = EncoderConfig {
            max_message,
            template_every: Some(7),
            ..EncoderConfig::default()
        };
        let (msgs, _) = encode_tcp(&records, &tcp, config, 9);
        let mut h = Sha1::new();
        for m in &msgs {
            h.update(m);
        }
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        digests.push(format!("{max_message} {} {hex}", msgs.len()));
    }
    assert_eq!(
        digests,
        [
            "1192 42 c6dc95586d11dfa330fe369956b5314b141cc4db",
            "1452 34 8cc3ea067035d851353416de465239ce2431ea5f",
            "9000 5 801c4266ca93c85bf1afb5c634ea4da05e538a1d",
        ]
    );
}

/// Records with names allocate nothing either (the names read by [`FlowNames`] from a DNS
/// query, a long name).
#[cfg(feature = "names")]
#[test]
fn no_allocation_per_record_with_names() {
    use zcrx_flowcache::names::FlowNames;
    let mut query = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    for _ in 0..4 {
        query.push(60);
        query.extend([b'a'; 60]);
    }
    query.extend([0, 0, 28, 0, 1]);
    let mut f = FlowNames::new();
    f.udp(Direction::Forward, &query, (40000, 53));
    let names = f.names();
    assert!(names.dns_query.is_some());
    let mut enc = Encoder::new(EncoderConfig::default()).unwrap();
    let r = FlowRecord {
        stats: {
            let mut stats = FlowStats::default();
            stats.key = FlowKey::v4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 17, 40000, 53);
            stats.packets = [1, 1];
            stats
        },
        end: EndReason::Idle,
    };
    let (mut bytes, mut messages) = (0usize, Vec::new());
    enc.encode_with_names(&r, None, Some(names), 0, &mut |m| messages.push(m.to_vec()));
    let before = counting::thread_allocs();
    for i in 1..100_000u64 {
        enc.encode_with_names(&r, None, Some(names), i, &mut |m| bytes += m.len());
    }
    enc.flush(100_000, &mut |m| bytes += m.len());
    assert_eq!(counting::thread_allocs() - before, 0, "encode allocated");
    assert_eq!(enc.stats().records, 100_000);
    // Each record carries the 244-byte name.
    assert!(bytes > 99_999 * (120 + 244), "{bytes}");
    let mut dec = Decoder::new();
    let (_, z) = dec.message_with_zcrx(&messages[0]).unwrap();
    assert!(z.is_empty(), "the first message holds the templates");
}
