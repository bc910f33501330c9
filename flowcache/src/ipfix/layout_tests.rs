//! The layouts for collectors that read no biflow, need interfaces or scale sampled counts:
//! one-direction records, the interface elements, the sampling announcement, and what
//! goflow2, akvorado, pmacct's nfacctd and nfdump's nfcapd read of them.

use std::net::Ipv4Addr;

use super::decode::{Decoder, ExportedFlow, ZcrxElements};
use super::template::{template_fields, IFACES, MAX_FIELDS, UNI, VARIANTS};
use super::*;
use crate::{EndReason, FlowKey, FlowRecord, FlowStats};

fn record(key: FlowKey, packets: [u64; 2]) -> FlowRecord {
    let mut stats = FlowStats::default();
    stats.key = key;
    stats.packets = packets;
    stats.bytes = [packets[0] * 100, packets[1] * 60];
    stats.first_ns = 1_700_000_000_000_000_000;
    stats.last_ns = stats.first_ns + 5_000_000;
    stats.tcp_flags = [0x1b, 0x12];
    FlowRecord {
        stats,
        end: EndReason::Idle,
    }
}

fn tcp() -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
        50000,
        443,
    )
}

fn config() -> EncoderConfig {
    EncoderConfig {
        observation_domain: 7,
        ..EncoderConfig::default()
    }
}

/// Encodes `records` (one message, flushed) and decodes it back with `decoder`.
fn round_trip(
    enc: &mut Encoder,
    decoder: &mut Decoder,
    records: &[FlowRecord],
) -> Vec<(ExportedFlow, ZcrxElements)> {
    let mut messages = Vec::new();
    for r in records {
        enc.encode(r, 1_700_000_000_000, &mut |m| messages.push(m.to_vec()));
    }
    enc.flush(1_700_000_000_000, &mut |m| messages.push(m.to_vec()));
    let mut out = Vec::new();
    for m in &messages {
        let (msg, zcrx) = decoder.message_with_zcrx(m).unwrap();
        assert_eq!(msg.unknown_sets, 0);
        out.extend(msg.flows.into_iter().zip(zcrx));
    }
    out
}

#[test]
fn one_direction_records_carry_each_direction_from_its_own_sender() {
    let mut enc = Encoder::new(config()).unwrap();
    enc.set_uniflow(true).unwrap();
    let icmp = FlowKey::v4(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 9),
        1,
        8,
        0,
    );
    let got = round_trip(
        &mut enc,
        &mut Decoder::new(),
        &[
            record(tcp(), [3, 2]),
            record(tcp(), [4, 0]),
            record(icmp, [5, 5]),
        ],
    );
    assert_eq!(got.len(), 5, "two, one and two records");
    let (fwd, fz) = &got[0];
    let (rev, rz) = &got[1];
    assert_eq!((fwd.src, fwd.dst), (Some(tcp().src()), Some(tcp().dst())));
    assert_eq!((fwd.sport, fwd.dport), (50000, 443));
    assert_eq!((fwd.packets, fwd.octets), ([3, 0], [300, 0]));
    assert_eq!(fwd.tcp_flags, [0x1b, 0]);
    assert_eq!((rev.src, rev.dst), (Some(tcp().dst()), Some(tcp().src())));
    assert_eq!((rev.sport, rev.dport), (443, 50000));
    assert_eq!((rev.packets, rev.octets), ([2, 0], [120, 0]));
    assert_eq!(rev.tcp_flags, [0x12, 0]);
    // One flow: the same Community ID both ways, no interfaces unless set.
    assert_eq!(fz.community_id, rz.community_id);
    assert_eq!(fz.ingress_interface, None);
    // A flow with no answer: its initiator's record alone.
    assert_eq!(got[2].0.packets, [4, 0]);
    // ICMP: the addresses swap, the type and code stay the flow's.
    let (ping, pong) = (&got[3].0, &got[4].0);
    assert_eq!(ping.icmp_type_code, Some(8 << 8));
    assert_eq!(pong.icmp_type_code, Some(8 << 8));
    assert_eq!(pong.src, ping.dst);
    // The sequence number counts records: five.
    assert_eq!(enc.stats().records, 5);
}

#[test]
fn interfaces_go_in_every_record_of_either_layout() {
    for uni in [false, true] {
        let mut enc = Encoder::new(config()).unwrap();
        enc.set_uniflow(uni).unwrap();
        enc.set_interfaces(Some((3, 0))).unwrap();
        let got = round_trip(
            &mut enc,
            &mut Decoder::new(),
            &[record(tcp(), [3, 2]), record(tcp().with_vlan(9), [1, 1])],
        );
        assert_eq!(got.len(), if uni { 4 } else { 2 });
        for (f, z) in &got {
            assert_eq!(z.ingress_interface, Some(3), "{f:?}");
            assert_eq!(z.egress_interface, Some(0));
            assert_eq!(z.flow_direction, Some(0));
        }
        assert_eq!(got.last().unwrap().0.vlan, Some(9));
        if !uni {
            assert_eq!(got[0].0.packets, [3, 2]);
        }
    }
}

#[test]
fn the_sampling_interval_is_announced_with_every_template_refresh() {
    let mut enc = Encoder::new(EncoderConfig {
        template_every: Some(2),
        ..config()
    })
    .unwrap();
    enc.set_sampling_interval(Some(10)).unwrap();
    assert_eq!(enc.sampling_interval(), Some(10));
    let mut decoder = Decoder::new();
    round_trip(&mut enc, &mut decoder, &[record(tcp(), [3, 2])]);
    assert_eq!(decoder.sampling_interval(7), Some(10));
    assert_eq!(decoder.sampling_interval(8), None);
    // A collector that starts later learns it at the next refresh.
    let mut late = Decoder::new();
    let mut announced = 0;
    for _ in 0..4 {
        let mut m = Vec::new();
        enc.encode(&record(tcp(), [1, 1]), 1_700_000_000_000, &mut |_| {});
        enc.flush(1_700_000_000_000, &mut |b| m.push(b.to_vec()));
        for b in &m {
            late.message(b).unwrap();
            announced += usize::from(late.sampling_interval(7) == Some(10));
        }
    }
    assert!(announced >= 2, "{announced}");
    // Interval 1 is no sampling: nothing announced.
    let mut plain = Encoder::new(config()).unwrap();
    plain.set_sampling_interval(Some(1)).unwrap();
    assert_eq!(plain.sampling_interval(), None);
    let mut d = Decoder::new();
    round_trip(&mut plain, &mut d, &[record(tcp(), [1, 1])]);
    assert_eq!(d.sampling_interval(7), None);
}

#[test]
fn a_layout_changed_midway_applies_from_the_next_message_with_its_templates() {
    let mut enc = Encoder::new(config()).unwrap();
    let mut decoder = Decoder::new();
    let mut messages = Vec::new();
    enc.encode(&record(tcp(), [3, 2]), 1, &mut |m| {
        messages.push(m.to_vec())
    });
    enc.set_uniflow(true).unwrap();
    enc.set_interfaces(Some((4, 5))).unwrap();
    enc.encode(&record(tcp(), [3, 2]), 2, &mut |m| {
        messages.push(m.to_vec())
    });
    enc.flush(3, &mut |m| messages.push(m.to_vec()));
    assert_eq!(messages.len(), 2, "the open message went out first");
    let mut flows = Vec::new();
    for m in &messages {
        let (msg, z) = decoder.message_with_zcrx(m).unwrap();
        assert_eq!(msg.unknown_sets, 0);
        flows.extend(msg.flows.into_iter().zip(z));
    }
    assert_eq!(flows.len(), 3);
    assert_eq!(flows[0].0.packets, [3, 2]);
    assert_eq!(flows[0].1.ingress_interface, None);
    assert_eq!(flows[1].0.packets, [3, 0]);
    assert_eq!(flows[2].1.egress_interface, Some(5));
}

#[test]
fn a_message_size_too_small_for_a_layout_is_refused() {
    let mut enc = Encoder::new(EncoderConfig {
        max_message: min_message(),
        ..config()
    })
    .unwrap();
    // Biflow templates with three more elements each, and the announcement: too large.
    let e = enc.set_interfaces(Some((1, 0))).unwrap_err();
    assert!(matches!(e, ConfigError::MessageSize { .. }), "{e}");
    let e = enc.set_sampling_interval(Some(10)).unwrap_err();
    assert!(matches!(e, ConfigError::MessageSize { .. }), "{e}");
    // One-direction templates are smaller: they fit.
    enc.set_uniflow(true).unwrap();
    // Refused: the layout stays as it was.
    let got = round_trip(&mut enc, &mut Decoder::new(), &[record(tcp(), [1, 1])]);
    assert_eq!(got[0].1.ingress_interface, None);
    assert_eq!(got.len(), 2);
}

/// What each collector reads of a record, from its source (the elements it maps to its
/// own fields; every other element it skips):
///
/// - goflow2 2.2 (`producer/proto/producer_nf.go`, `ConvertNetFlowDataSet`): elements
///   with an enterprise number are skipped; 1/2 bytes and packets, 4, 6, 7, 11, 8/27 and
///   12/28 the addresses, 10/14 in_if/out_if, 152/153 the times, 58 the VLAN, 32/139 ICMP.
///   Sampling: options records only, 305, then 50, then 34, read as exactly 4 bytes, keyed
///   by exporter address and observation domain (`SearchNetFlowOptionDataSets`).
/// - akvorado (`outlet/flow/decoder/netflow/decode.go`): the same counters, addresses and
///   ports, 10/14 (a flow with both 0 is dropped, `enrichFlow`), 61 its FlowDirection;
///   sampling from options records, 34 or 50, under selector 0 when the options carry no
///   48/302.
/// - nfacctd 1.7.7 (`src/nfacctd.c`, `process_v9_packet`): forward elements only; an
///   options record is sampling if 34 is exactly 4 bytes, applied to every record of the
///   exporter and domain that carries no sampler id.
/// - nfcapd 1.7.1 (`src/netflow/ipfix.c`, `Process_ipfix_option_templates`): scope fields
///   skipped; 34 without 35 counts as sampling (with 35, or 302/304 as options, 1.7.1
///   drops the template); the sampler id 0 matches records that carry none.
const FORWARD_READ: [u16; 12] = [1, 2, 4, 6, 7, 8, 10, 11, 12, 14, 152, 153];

#[test]
fn the_layout_for_collectors_carries_what_goflow2_akvorado_and_nfacctd_read() {
    for v in VARIANTS {
        let mut f = [(0, 0, 0); MAX_FIELDS];
        let n = template_fields(v | UNI | IFACES, &mut f);
        let fields = &f[..n];
        // No reverse element: each record stands alone.
        assert!(fields.iter().all(|&(_, _, pen)| pen != REVERSE_PEN), "{v}");
        let iana: Vec<u16> = fields.iter().filter(|f| f.2 == 0).map(|f| f.0).collect();
        let v6 = v & 1 != 0;
        let icmp = v & 2 != 0;
        for want in FORWARD_READ {
            let want = match (want, v6) {
                (8, true) => 27,
                (12, true) => 28,
                (w, _) => w,
            };
            if icmp && (want == 7 || want == 11) {
                assert!(iana.contains(&if v6 { 139 } else { 32 }), "{v}");
                continue;
            }
            assert!(iana.contains(&want), "variant {v}: element {want}");
        }
        assert!(iana.contains(&61), "flowDirection");
        // Interfaces as 4 bytes, as unsigned32 is.
        for (id, len, _) in fields.iter().filter(|f| f.0 == 10 || f.0 == 14) {
            assert_eq!(*len, 4, "{id}");
        }
    }
    // The announcement: scope observationDomainId, samplingInterval as 4 bytes, nothing
    // else (no 35 for nfcapd 1.7.1, no 305/306 that goflow2 and akvorado read apart, no
    // selector id that records do not carry).
    let mut enc = Encoder::new(config()).unwrap();
    enc.set_sampling_interval(Some(100)).unwrap();
    let mut m = Vec::new();
    enc.encode(&record(tcp(), [1, 1]), 1, &mut |_| {});
    enc.flush(1, &mut |b| m = b.to_vec());
    let mut at = HEADER_LEN;
    let mut options = None;
    while at < m.len() {
        let id = u16::from_be_bytes([m[at], m[at + 1]]);
        let len = usize::from(u16::from_be_bytes([m[at + 2], m[at + 3]]));
        if id == 3 {
            options = Some(m[at + 4..at + len].to_vec());
        }
        at += len;
    }
    let t = options.expect("an options template set");
    let word = |i: usize| u16::from_be_bytes([t[i], t[i + 1]]);
    assert_eq!((word(2), word(4)), (2, 1), "two fields, one of them scope");
    assert_eq!((word(6), word(8)), (149, 4), "scope observationDomainId");
    assert_eq!((word(10), word(12)), (34, 4), "samplingInterval, 4 bytes");
    assert_eq!(t.len(), 14);
}

#[test]
fn hostile_options_templates_and_records_are_errors() {
    use super::decode::DecodeError;
    // A message of one set: `id`, `body`.
    let message = |sets: &[(u16, Vec<u8>)]| {
        let mut m = vec![0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
        for (id, body) in sets {
            m.extend_from_slice(&id.to_be_bytes());
            m.extend_from_slice(&((body.len() + 4) as u16).to_be_bytes());
            m.extend_from_slice(body);
        }
        let len = m.len() as u16;
        m[2..4].copy_from_slice(&len.to_be_bytes());
        m
    };
    // Template 300: two fields, `scope` of them scope.
    let template = |scope: u16| {
        let mut t = vec![1, 44, 0, 2];
        t.extend_from_slice(&scope.to_be_bytes());
        t.extend_from_slice(&[0, 149, 0, 4, 0, 34, 0, 4]);
        t
    };
    for scope in [0, 3] {
        let m = message(&[(3, template(scope))]);
        assert_eq!(
            Decoder::new().message(&m),
            Err(DecodeError::Template),
            "{scope}"
        );
    }
    // A record shorter than its template says.
    let m = message(&[(3, template(1)), (300, vec![0, 0, 0, 7, 0, 0])]);
    assert_eq!(Decoder::new().message(&m), Err(DecodeError::Truncated));
    // A whole one: read; a data template of the same id later replaces it.
    let mut d = Decoder::new();
    let m = message(&[(3, template(1)), (300, vec![0, 0, 0, 7, 0, 0, 0, 50])]);
    d.message(&m).unwrap();
    assert_eq!(d.sampling_interval(7), Some(50));
    let m = message(&[(2, vec![1, 44, 0, 1, 0, 2, 0, 8]), (300, vec![0; 8])]);
    let msg = d.message(&m).unwrap();
    assert_eq!(msg.flows.len(), 1);
    assert_eq!(msg.flows[0].packets, [0, 0]);
}

#[test]
fn the_announcement_counts_in_the_sequence_and_a_withdrawal_is_read() {
    let mut enc = Encoder::new(EncoderConfig {
        template_every: Some(1),
        ..config()
    })
    .unwrap();
    enc.set_sampling_interval(Some(4)).unwrap();
    let mut messages = Vec::new();
    for _ in 0..3 {
        enc.encode(&record(tcp(), [1, 1]), 1, &mut |_| {});
        enc.flush(1, &mut |m| messages.push(m.to_vec()));
    }
    let sequence = |m: &[u8]| u32::from_be_bytes(m[8..12].try_into().unwrap());
    // Each message: one flow record and the announcement's options record.
    let seqs: Vec<u32> = messages.iter().map(|m| sequence(m)).collect();
    assert_eq!(seqs, [0, 2, 4]);
    assert_eq!(enc.stats().records, 3, "flow records only");
    // An options template withdrawn (field count 0) among others: read, not refused.
    let mut d = Decoder::new();
    d.message(&messages[0]).unwrap();
    let mut m = vec![0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
    m.extend_from_slice(&[0, 3, 0, 12, 1, 128, 0, 0, 1, 129, 0, 0]);
    let len = m.len() as u16;
    m[2..4].copy_from_slice(&len.to_be_bytes());
    d.message(&m).unwrap();
    assert_eq!(d.templates(), 12, "the announcement's template withdrawn");
}
