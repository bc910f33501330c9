//! `--kafka-format goflow2`: each flow record as goflow2's `FlowMessage` (protobuf, one a
//! direction, each prefixed by its varint length), the message goflow2 itself writes to
//! Kafka with `-format=bin`, so that what reads goflow2's topic (its ClickHouse Kafka table
//! with `kafka_format = 'Protobuf'`, akvorado's and others' consumers) reads zcap's.
//!
//! The fields are goflow2's (its `pb/flow.proto`: names, numbers and types), filled as
//! goflow2 fills them from zcap's one-direction IPFIX record of the same flow (an address
//! of 4 bytes for IPv4 and 16 for IPv6, `etype` 0x800 or 0x86dd, ICMP's type and code in
//! their own fields and no ports), with two deliberate differences: `sampling_rate` is
//! always stated (1 when every packet was kept, where goflow2 writes 0 for "unknown",
//! which downstream sums multiply by), and `time_received_ns` is the sensor's export time.
//! `docs/scale-out/flow.proto` declares the fields zcap fills, for ClickHouse.

use std::net::IpAddr;

use zcrx_flowcache::FlowStats;

/// goflow2's `FlowMessage`: the fields zcap fills, at goflow2's field numbers. Proto3:
/// a field at its default (0, empty) is not written.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FlowMessage {
    /// `FlowType`: 4 (IPFIX), as goflow2 gives for the same record over IPFIX.
    #[prost(int32, tag = "1")]
    pub(crate) r#type: i32,
    #[prost(uint64, tag = "3")]
    pub(crate) sampling_rate: u64,
    #[prost(uint32, tag = "4")]
    pub(crate) sequence_num: u32,
    #[prost(bytes = "vec", tag = "6")]
    pub(crate) src_addr: Vec<u8>,
    #[prost(bytes = "vec", tag = "7")]
    pub(crate) dst_addr: Vec<u8>,
    #[prost(uint64, tag = "9")]
    pub(crate) bytes: u64,
    #[prost(uint64, tag = "10")]
    pub(crate) packets: u64,
    #[prost(bytes = "vec", tag = "11")]
    pub(crate) sampler_address: Vec<u8>,
    #[prost(uint32, tag = "18")]
    pub(crate) in_if: u32,
    #[prost(uint32, tag = "19")]
    pub(crate) out_if: u32,
    #[prost(uint32, tag = "20")]
    pub(crate) proto: u32,
    #[prost(uint32, tag = "21")]
    pub(crate) src_port: u32,
    #[prost(uint32, tag = "22")]
    pub(crate) dst_port: u32,
    #[prost(uint32, tag = "26")]
    pub(crate) tcp_flags: u32,
    #[prost(uint32, tag = "29")]
    pub(crate) vlan_id: u32,
    #[prost(uint32, tag = "30")]
    pub(crate) etype: u32,
    #[prost(uint32, tag = "31")]
    pub(crate) icmp_type: u32,
    #[prost(uint32, tag = "32")]
    pub(crate) icmp_code: u32,
    #[prost(uint32, tag = "70")]
    pub(crate) observation_domain_id: u32,
    #[prost(uint64, tag = "110")]
    pub(crate) time_received_ns: u64,
    #[prost(uint64, tag = "111")]
    pub(crate) time_flow_start_ns: u64,
    #[prost(uint64, tag = "112")]
    pub(crate) time_flow_end_ns: u64,
}

/// goflow2's `FlowType` for IPFIX.
const IPFIX: i32 = 4;

/// What every message of a sensor states beside its flow: the IPFIX export's settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Goflow2 {
    /// `--ipfix-domain`.
    pub(crate) domain: u32,
    /// ingressInterface and egressInterface (`--ipfix-ifindex`, or the capture's).
    pub(crate) interfaces: (u32, u32),
    /// `--sample`: one packet in this many (1: all).
    pub(crate) sampling: u32,
    /// `--ipfix-source`: the exporter's address (goflow2's sampler_address).
    pub(crate) sampler: Option<IpAddr>,
    /// Messages made so far (the next one's `sequence_num`, wrapping).
    made: u32,
}

fn octets(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

impl Goflow2 {
    pub(crate) fn new(
        domain: u32,
        interfaces: (u32, u32),
        sampling: u32,
        sampler: Option<IpAddr>,
    ) -> Goflow2 {
        Goflow2 {
            domain,
            interfaces,
            sampling: sampling.max(1),
            sampler,
            made: 0,
        }
    }

    /// The messages of `s` at `now_ns` (ns since the Unix epoch): the initiator's packets,
    /// then the responder's, each if it has any (seen from the initiator whatever order
    /// the table keeps the key in); each length-prefixed, handed to `out`.
    pub(crate) fn messages(&mut self, s: &FlowStats, now_ns: u64, out: &mut impl FnMut(&[u8])) {
        // The table's key may be the other end's first (a symmetric table's canonical
        // order, which also swaps ICMP's type and code): seen from the initiator.
        let s = &s.oriented();
        for half in 0..2 {
            if s.packets[half] == 0 {
                continue;
            }
            let m = self.message(s, half, now_ns);
            self.made = self.made.wrapping_add(1);
            out(&prost::Message::encode_length_delimited_to_vec(&m));
        }
    }

    /// The message of one direction of `s`: `half` 0 the initiator's (its source the
    /// initiator), 1 the responder's.
    fn message(&self, s: &FlowStats, half: usize, now_ns: u64) -> FlowMessage {
        let k = &s.key;
        let (src, dst) = match half {
            0 => (k.src(), k.dst()),
            _ => (k.dst(), k.src()),
        };
        let icmp = matches!(k.proto(), 1 | 58);
        let (sport, dport) = match (icmp, half) {
            (true, _) => (0, 0),
            (false, 0) => (k.sport(), k.dport()),
            (false, _) => (k.dport(), k.sport()),
        };
        FlowMessage {
            r#type: IPFIX,
            sampling_rate: u64::from(self.sampling),
            sequence_num: self.made,
            etype: if src.is_ipv4() { 0x800 } else { 0x86dd },
            src_addr: octets(src),
            dst_addr: octets(dst),
            bytes: s.bytes[half],
            packets: s.packets[half],
            sampler_address: self.sampler.map(octets).unwrap_or_default(),
            in_if: self.interfaces.0,
            out_if: self.interfaces.1,
            proto: u32::from(k.proto()),
            src_port: u32::from(sport),
            dst_port: u32::from(dport),
            tcp_flags: u32::from(s.tcp_flags[half]),
            vlan_id: k.vlan().map_or(0, u32::from),
            // A flow's ICMP type and code, whichever direction reports (as in IPFIX).
            icmp_type: if icmp { u32::from(k.sport()) } else { 0 },
            icmp_code: if icmp { u32::from(k.dport()) } else { 0 },
            observation_domain_id: self.domain,
            time_received_ns: now_ns,
            time_flow_start_ns: s.first_ns,
            time_flow_end_ns: s.last_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use zcrx_flowcache::FlowKey;

    fn stats(key: FlowKey, packets: [u64; 2]) -> FlowStats {
        let mut s = FlowStats::default();
        s.key = key;
        s.packets = packets;
        s.bytes = [packets[0] * 100, packets[1] * 60];
        s.first_ns = 1_700_000_000_123_456_789;
        s.last_ns = s.first_ns + 5_000_000;
        s.tcp_flags = [0x1b, 0x12];
        s
    }

    fn decoded(g: &mut Goflow2, s: &FlowStats) -> Vec<FlowMessage> {
        let mut out = Vec::new();
        g.messages(s, 1_700_000_001_000_000_000, &mut |m| {
            let mut b = m;
            out.push(FlowMessage::decode_length_delimited(&mut b).unwrap());
            assert!(b.is_empty(), "one message, its length first");
        });
        out
    }

    #[test]
    fn a_flow_is_a_message_a_direction_each_from_its_own_sender() {
        let key = FlowKey::v4(
            [198, 18, 0, 1].into(),
            [198, 18, 0, 2].into(),
            6,
            50000,
            443,
        );
        let mut g = Goflow2::new(7, (3, 0), 1, Some([198, 18, 0, 9].into()));
        let m = decoded(&mut g, &stats(key, [10, 8]));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].src_addr, [198, 18, 0, 1]);
        assert_eq!(m[0].dst_addr, [198, 18, 0, 2]);
        assert_eq!((m[0].src_port, m[0].dst_port), (50000, 443));
        assert_eq!((m[0].packets, m[0].bytes, m[0].tcp_flags), (10, 1000, 0x1b));
        assert_eq!(m[1].src_addr, [198, 18, 0, 2]);
        assert_eq!((m[1].src_port, m[1].dst_port), (443, 50000));
        assert_eq!((m[1].packets, m[1].bytes, m[1].tcp_flags), (8, 480, 0x12));
        for (i, x) in m.iter().enumerate() {
            assert_eq!(x.r#type, 4);
            assert_eq!(x.etype, 0x800);
            assert_eq!(x.proto, 6);
            assert_eq!(x.sampling_rate, 1, "stated, never 0");
            assert_eq!(x.sequence_num, i as u32);
            assert_eq!((x.in_if, x.out_if, x.observation_domain_id), (3, 0, 7));
            assert_eq!(x.sampler_address, [198, 18, 0, 9]);
            assert_eq!(x.time_flow_start_ns, 1_700_000_000_123_456_789);
            assert_eq!(x.time_flow_end_ns, 1_700_000_000_128_456_789);
            assert_eq!(x.time_received_ns, 1_700_000_001_000_000_000);
        }
        // A direction without packets has no message.
        let m = decoded(&mut g, &stats(key, [3, 0]));
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].sequence_num, 2);
    }

    /// A flow the table keeps from its responder's end (a symmetric table's canonical
    /// order): the messages are still the initiator's first, ICMP's type and code its
    /// first packet's.
    #[test]
    fn a_flow_kept_from_the_responders_end_is_told_from_its_initiator() {
        // An echo request (type 8, code 0) from 198.18.0.2 to 198.18.0.1, keyed from .1.
        let key = FlowKey::v4([198, 18, 0, 1].into(), [198, 18, 0, 2].into(), 1, 0, 8);
        let mut s = stats(key, [4, 5]);
        s.initiator = zcrx_flowcache::Direction::Reverse;
        let mut g = Goflow2::new(0, (0, 0), 1, None);
        let m = decoded(&mut g, &s);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].src_addr, [198, 18, 0, 2], "the initiator's first");
        assert_eq!((m[0].packets, m[1].packets), (5, 4));
        for x in &m {
            assert_eq!((x.icmp_type, x.icmp_code), (8, 0));
        }
    }

    #[test]
    fn icmp_and_ipv6_read_as_goflow2_reads_them() {
        let a: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
        let b: std::net::Ipv6Addr = "2001:db8::2".parse().unwrap();
        let key = FlowKey::v6(a, b, 58, 128, 0);
        let mut g = Goflow2::new(0, (0, 0), 10, None);
        let m = decoded(&mut g, &stats(key, [1, 1]));
        assert_eq!(m.len(), 2);
        for x in &m {
            assert_eq!(x.etype, 0x86dd);
            assert_eq!(x.src_addr.len(), 16);
            assert_eq!((x.icmp_type, x.icmp_code), (128, 0));
            assert_eq!((x.src_port, x.dst_port), (0, 0));
            assert_eq!(x.sampling_rate, 10);
            assert!(x.sampler_address.is_empty());
        }
        assert_eq!(m[1].src_addr, b.octets());
    }
}
