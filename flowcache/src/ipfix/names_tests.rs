//! The names templates: every element read back as written (empty, long, non-ASCII),
//! strings cut to fit a message, the templates in messages of their own, hostile lengths.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::decode::{DecodeError, Decoder, Message, NameElements, ZcrxElements};
use super::message::FIRST_TEMPLATE;
use super::template::{NAMES, NAMES_TEXTS, NAMES_VARIANTS, VARIABLE, VARIANTS};
use super::*;
use crate::names::{
    ClientHello, DnsMessage, DnsQuestion, Hello, HttpRequest, HttpResponse, Names, ServerHello,
};
use crate::{Direction, EndReason, FlowKey, FlowRecord, FlowStats, TcpSegment, TcpState};

fn record(key: FlowKey) -> FlowRecord {
    let mut stats = FlowStats::default();
    stats.key = key;
    stats.packets = [3, 2];
    stats.bytes = [300, 200];
    stats.first_ns = 1_700_000_000_000_000_000;
    stats.last_ns = stats.first_ns + 5_000_000;
    stats.tcp_flags = [0x1b, 0x12];
    FlowRecord {
        stats,
        end: EndReason::Idle,
    }
}

fn tcp_key() -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
        50000,
        443,
    )
}

fn dns_key() -> FlowKey {
    FlowKey::v6(
        "2001:db8::1".parse::<Ipv6Addr>().unwrap(),
        "2001:db8::53".parse().unwrap(),
        17,
        40000,
        53,
    )
    .with_vlan(7)
}

fn hello(server_name: Option<&str>, alpn: &[&str], ja4: &str) -> ClientHello {
    ClientHello {
        server_name: server_name.map(String::from),
        alpn: alpn.iter().map(|s| s.to_string()).collect(),
        versions: vec![0x0303, 0x0304],
        legacy_version: 0x0303,
        ja4: ja4.into(),
    }
}

/// Every field found: a TLS client and server, a DNS query and response, an HTTP request and
/// response (no flow has all of them; the encoder does not care).
fn full() -> Names {
    let question = |name: &str| {
        Some(DnsQuestion {
            name: name.into(),
            qtype: 28,
            qclass: 1,
        })
    };
    Names {
        client_hello: Some(Hello {
            hello: hello(
                Some("bücher.example"),
                &["h2", "http/1.1"],
                "t13d1516h2_8daaf6152771_e5627efa2ab1",
            ),
            quic_version: Some(0x6b33_43cf),
            dir: Direction::Forward,
        }),
        server_hello: Some(ServerHello {
            version: 0x0304,
            cipher_suite: 0x1301,
        }),
        dns_query: Some(DnsMessage {
            id: 1,
            response: false,
            opcode: 0,
            rcode: 0,
            answers: 0,
            question: question("ünïcode.example.net"),
        }),
        dns_response: Some(DnsMessage {
            id: 1,
            response: true,
            opcode: 0,
            rcode: 3,
            answers: 2,
            question: question("other.example"),
        }),
        http_request: Some(HttpRequest {
            method: "GET".into(),
            path: "/ä?q=1".into(),
            host: Some("www.example.net".into()),
            minor_version: 1,
        }),
        http_response: Some(HttpResponse {
            status: 404,
            minor_version: 1,
        }),
    }
}

/// Encodes `(record, tcp, names)` in order, then flushes; the messages.
fn encode(
    config: EncoderConfig,
    items: &[(FlowRecord, Option<TcpState>, Option<Names>)],
) -> (Vec<Vec<u8>>, Encoder) {
    let mut enc = Encoder::new(config).unwrap();
    let mut out = Vec::new();
    for (i, (r, t, n)) in items.iter().enumerate() {
        enc.encode_with_names(r, t.as_ref(), n.as_ref(), 1000 + i as u64, &mut |m| {
            out.push(m.to_vec())
        });
    }
    enc.flush(9999, &mut |m| out.push(m.to_vec()));
    (out, enc)
}

/// Every message decoded: the records' zcrx elements in order, and the messages.
fn decode(msgs: &[Vec<u8>]) -> (Vec<ZcrxElements>, Vec<Message>) {
    let mut dec = Decoder::new();
    let mut all = Vec::new();
    let mut messages = Vec::new();
    for m in msgs {
        let (message, z) = dec.message_with_zcrx(m).unwrap();
        assert_eq!(message.unknown_sets, 0);
        all.extend(z);
        messages.push(message);
    }
    (all, messages)
}

#[test]
fn every_name_reads_back_as_written() {
    let names = full();
    let want = NameElements {
        server_name: "bücher.example".into(),
        alpn: "h2,http/1.1".into(),
        ja4: "t13d1516h2_8daaf6152771_e5627efa2ab1".into(),
        tls_client_version: 0x0304,
        tls_version: 0x0304,
        tls_cipher: 0x1301,
        quic_version: 0x6b33_43cf,
        dns_query_name: "ünïcode.example.net".into(),
        dns_query_type: 28,
        dns_response_code: 3,
        dns_answer_count: 2,
        http_method: "GET".into(),
        http_host: "www.example.net".into(),
        http_target: "/ä?q=1".into(),
        http_status: 404,
    };
    assert_eq!(NameElements::from(&names), want);
    let mut tcp = TcpState::new();
    tcp.observe(Direction::Forward, &TcpSegment::new(0x02, 1, 0, 0, 100));
    let items = [
        (record(tcp_key()), Some(tcp), Some(names.clone())),
        (record(tcp_key().with_vlan(9)), None, Some(names.clone())),
        (record(dns_key()), None, Some(names.clone())),
        (record(dns_key()), None, Some(Names::default())),
        (record(tcp_key()), Some(tcp), None),
        (record(dns_key()), None, None),
    ];
    let (msgs, enc) = encode(EncoderConfig::default(), &items);
    let (z, messages) = decode(&msgs);
    assert_eq!(z.len(), 6);
    for (i, z) in z.iter().enumerate() {
        let (r, t, n) = &items[i];
        assert_eq!(
            z.names,
            n.as_ref().map(NameElements::from),
            "record {i}: names"
        );
        assert_eq!(z.conn_state, t.map(|t| t.conn_state()), "record {i}");
        assert_eq!(
            z.community_id,
            Some(r.stats.oriented().key.community_id(0)),
            "record {i}"
        );
    }
    assert_eq!(z[3].names, Some(NameElements::default()), "empty names");
    let flows: Vec<_> = messages.iter().flat_map(|m| m.flows.clone()).collect();
    let templates: Vec<u16> = flows.iter().map(|f| f.template - FIRST_TEMPLATE).collect();
    assert_eq!(
        templates,
        [NAMES | 8, NAMES | 4, NAMES | 5, NAMES | 5, 8, 5]
    );
    assert_eq!(flows[2].vlan, Some(7));
    assert_eq!((flows[1].sport, flows[1].dport), (50000, 443));
    // The templates came in messages of their own: 12 + 8 templates, 1452 bytes a message.
    let template_only: Vec<&Message> = messages.iter().filter(|m| m.flows.is_empty()).collect();
    assert_eq!(
        template_only.iter().map(|m| m.templates).sum::<usize>(),
        VARIANTS.len() + NAMES_VARIANTS.len()
    );
    assert_eq!(enc.stats().template_messages, template_only.len() as u64);
    assert!(template_only.len() >= 2, "{}", template_only.len());
    assert!(msgs.iter().all(|m| m.len() <= DEFAULT_MESSAGE));
}

#[test]
fn records_before_the_first_names_keep_their_bytes() {
    // Records without names, then one with: the messages before the names are those of an
    // encoder never given names.
    let plain: Vec<_> = (0..30u16)
        .map(|i| {
            let key = FlowKey::v4(
                Ipv4Addr::new(198, 18, 1, i as u8),
                Ipv4Addr::new(198, 18, 0, 2),
                17,
                1000 + i,
                53,
            );
            (record(key), None, None)
        })
        .collect();
    let (without, _) = encode(EncoderConfig::default(), &plain);
    let mut mixed = plain.clone();
    mixed.push((record(dns_key()), None, Some(full())));
    let (with, _) = encode(EncoderConfig::default(), &mixed);
    // The same messages; the last one was handed out when the names came rather than at
    // the end, so its export time differs.
    let last = without.len() - 1;
    assert_eq!(with[..last], without[..last]);
    let time = 4..8;
    assert_eq!(with[last][..time.start], without[last][..time.start]);
    assert_eq!(with[last][time.end..], without[last][time.end..]);
    assert_ne!(with[last][time.clone()], without[last][time]);
    let mut old = Encoder::new(EncoderConfig::default()).unwrap();
    let mut old_msgs = Vec::new();
    for (i, (r, _, _)) in plain.iter().enumerate() {
        old.encode(r, 1000 + i as u64, &mut |m| old_msgs.push(m.to_vec()));
    }
    old.flush(9999, &mut |m| old_msgs.push(m.to_vec()));
    assert_eq!(old_msgs, without);
}

/// Names whose strings are each `n` bytes long (server name, ALPN, JA4, DNS name, HTTP
/// method, host and target), with multi-byte characters where `wide`.
fn long(n: usize, wide: bool) -> Names {
    let s = |c: char| -> String {
        if wide {
            // 'é' is two bytes: n/2 of them, and one ASCII byte if n is odd.
            let mut t: String = std::iter::repeat_n('é', n / 2).collect();
            if n % 2 == 1 {
                t.push(c);
            }
            t
        } else {
            std::iter::repeat_n(c, n).collect()
        }
    };
    let mut names = full();
    let h = &mut names.client_hello.as_mut().unwrap().hello;
    h.server_name = Some(s('s'));
    h.ja4 = s('j');
    // Two ALPN entries of n/2 bytes with the comma between: n bytes when n is odd.
    h.alpn = vec![s('a')];
    names
        .dns_query
        .as_mut()
        .unwrap()
        .question
        .as_mut()
        .unwrap()
        .name = s('d');
    let r = names.http_request.as_mut().unwrap();
    r.method = s('m');
    r.host = Some(s('h'));
    r.path = s('p');
    names
}

#[test]
fn long_strings_read_back_whole_when_they_fit() {
    let config = EncoderConfig {
        max_message: MAX_MESSAGE,
        ..EncoderConfig::default()
    };
    for n in [0, 1, 254, 255, 256, 1000, 4096] {
        for wide in [false, true] {
            let names = long(n, wide);
            let (msgs, _) = encode(config, &[(record(tcp_key()), None, Some(names.clone()))]);
            let (z, _) = decode(&msgs);
            let got = z[0].names.clone().unwrap();
            assert_eq!(got, NameElements::from(&names), "{n} bytes, wide {wide}");
            assert_eq!(got.server_name.len(), n);
        }
    }
}

#[test]
fn strings_too_long_for_a_message_are_cut_longest_first() {
    for max_message in [min_message(), DEFAULT_MESSAGE, 4000] {
        let config = EncoderConfig {
            max_message,
            ..EncoderConfig::default()
        };
        for wide in [false, true] {
            // Four long strings and three short ones (the defaults of `full`).
            let mut names = full();
            let big = |c: &str| c.repeat(3000);
            let fill = if wide { "é" } else { "x" };
            let h = &mut names.client_hello.as_mut().unwrap().hello;
            h.server_name = Some(big(fill));
            h.alpn = vec!["h2".into(), big(fill)];
            let r = names.http_request.as_mut().unwrap();
            r.path = big(fill);
            r.host = Some(big(fill));
            let whole = NameElements::from(&names);
            let (msgs, enc) = encode(config, &[(record(tcp_key()), None, Some(names.clone()))]);
            assert!(msgs.iter().all(|m| m.len() <= max_message));
            assert_eq!(enc.stats().records, 1);
            let (z, messages) = decode(&msgs);
            let got = z[0].names.clone().unwrap();
            let data = messages.iter().find(|m| !m.flows.is_empty()).unwrap();
            // The short strings are whole, the long ones cut to one length (a character
            // boundary less at most), all prefixes of what they were.
            assert_eq!(got.ja4, whole.ja4);
            assert_eq!(got.dns_query_name, whole.dns_query_name);
            assert_eq!(got.http_method, whole.http_method);
            let cut = [
                &got.server_name,
                &got.alpn,
                &got.http_host,
                &got.http_target,
            ];
            let from = [
                &whole.server_name,
                &whole.alpn,
                &whole.http_host,
                &whole.http_target,
            ];
            for (c, w) in cut.iter().zip(from) {
                assert!(w.starts_with(c.as_str()), "a prefix");
                assert!(c.len() < w.len(), "cut");
                assert!(!c.contains('\u{fffd}'), "on a character boundary");
            }
            let lens: Vec<usize> = cut.iter().map(|c| c.len()).collect();
            let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
            assert!(hi - lo <= 3, "one level: {lens:?}");
            // And the message is nearly full: the level is the highest that fits.
            let spare = max_message - usize::from(data.header.length);
            assert!(
                spare <= 4 * 3 + 3 * NAMES_TEXTS,
                "{spare} bytes spare, {lens:?}"
            );
            assert_eq!(got.tls_cipher, 0x1301);
        }
    }
}

#[test]
fn templates_fit_every_message_size_and_are_refreshed() {
    for max_message in [min_message(), 1300, DEFAULT_MESSAGE, 3000, MAX_MESSAGE] {
        let config = EncoderConfig {
            max_message,
            template_every: Some(3),
            ..EncoderConfig::default()
        };
        let items: Vec<_> = (0..200u16)
            .map(|i| {
                let key = FlowKey::v4(
                    Ipv4Addr::new(198, 18, 2, i as u8),
                    Ipv4Addr::new(198, 18, 0, 2),
                    if i % 3 == 1 { 1 } else { 6 },
                    2000 + i,
                    443,
                );
                let names = (i % 2 == 0).then(full);
                (record(key), None, names)
            })
            .collect();
        let (msgs, enc) = encode(config, &items);
        assert!(msgs.iter().all(|m| m.len() <= max_message), "{max_message}");
        let (z, messages) = decode(&msgs);
        assert_eq!(z.len(), 200);
        for (i, z) in z.iter().enumerate() {
            // ICMP flows (every third) carry no names, whatever was given.
            let icmp = i % 3 == 1;
            let want = (i % 2 == 0 && !icmp).then(|| NameElements::from(&full()));
            assert_eq!(z.names, want, "record {i} at {max_message}");
        }
        let defined: usize = messages.iter().map(|m| m.templates).sum();
        // Every 3 messages (template messages count too), all 20 templates again.
        let all = VARIANTS.len() + NAMES_VARIANTS.len();
        let data = messages.iter().filter(|m| !m.flows.is_empty()).count();
        assert_eq!(defined % all, 0);
        assert_eq!(
            defined > all,
            data > 2,
            "{data} data messages at {max_message}"
        );
        assert_eq!(enc.stats().records, 200);
        // A message that defines templates holds no records (names were given from the
        // first record on).
        assert!(messages
            .iter()
            .all(|m| m.templates == 0 || m.flows.is_empty()));
    }
}

/// A message of one names template (`fields`, each (id, length, pen)) and a data set of
/// `data` with it.
fn hostile(fields: &[(u16, u16, u32)], data: &[u8]) -> Vec<u8> {
    let mut t = vec![1, 44];
    t.extend((fields.len() as u16).to_be_bytes());
    for &(id, len, pen) in fields {
        let id = if pen != 0 { id | 0x8000 } else { id };
        t.extend(id.to_be_bytes());
        t.extend(len.to_be_bytes());
        if pen != 0 {
            t.extend(pen.to_be_bytes());
        }
    }
    let mut m = vec![0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for (id, body) in [(2u16, t), (300, data.to_vec())] {
        m.extend(id.to_be_bytes());
        m.extend(((body.len() + 4) as u16).to_be_bytes());
        m.extend(body);
    }
    let len = m.len() as u16;
    m[2..4].copy_from_slice(&len.to_be_bytes());
    m
}

#[test]
fn hostile_lengths_are_errors() {
    let names = [
        (zcrx_ie::SERVER_NAME, VARIABLE, ZCRX_PEN),
        (zcrx_ie::DNS_QUERY_TYPE, 2, ZCRX_PEN),
    ];
    let read = |data: &[u8]| Decoder::new().message_with_zcrx(&hostile(&names, data));
    // Well formed: "ab" and qtype 28.
    let (_, z) = read(&[2, b'a', b'b', 0, 28]).unwrap();
    let n = z[0].names.clone().unwrap();
    assert_eq!((n.server_name.as_str(), n.dns_query_type), ("ab", 28));
    // Three bytes or more that are not a record: a length past the set.
    for bad in [
        &[200, b'a', b'b', 0, 28][..],
        &[3, b'a', b'b', 0],
        &[255, 0xff, 0xff, b'a', b'b'],
        &[255, 0x01, 0x00, b'a', b'b', 0, 28],
        &[255, 0, 5],
        &[2, b'a', b'b', 0, 28, 9, 1, 2],
    ] {
        assert_eq!(read(bad).unwrap_err(), DecodeError::Truncated, "{bad:?}");
    }
    // Fewer bytes than the shortest record (one length byte and the qtype): padding.
    let (m, z) = read(&[2, b'a', b'b', 0, 28, 0, 0]).unwrap();
    assert_eq!((m.flows.len(), z.len()), (1, 1));
    let (m, _) = read(&[255, 0]).unwrap();
    assert_eq!(m.flows.len(), 0);
    // A long length, read whole; bytes that are not UTF-8 read as U+FFFD.
    let mut long = vec![255, 1, 0];
    long.extend([0xff; 256]);
    long.extend([0, 1]);
    let (_, z) = read(&long).unwrap();
    assert_eq!(
        z[0].names.as_ref().unwrap().server_name,
        "\u{fffd}".repeat(256)
    );
}

#[test]
fn a_names_message_survives_every_flip() {
    let (msgs, _) = encode(
        EncoderConfig::default(),
        &[
            (record(tcp_key()), None, Some(long(300, true))),
            (record(dns_key()), None, Some(full())),
        ],
    );
    // Every byte of every message, set to each of a few values: an error or records, never
    // a panic.
    let mut dec = Decoder::new();
    for m in &msgs {
        dec.message(m).unwrap();
    }
    for m in &msgs {
        for at in 0..m.len() {
            for v in [0, 1, 0x7f, 0xfe, 0xff] {
                let mut bad = m.clone();
                bad[at] = v;
                let _ = dec.clone().message_with_zcrx(&bad);
                let _ = Decoder::new().message_with_zcrx(&bad[..at]);
            }
        }
    }
}
