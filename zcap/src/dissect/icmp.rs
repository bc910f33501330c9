//! ICMP summaries, as `tcpdump -q` prints them after the addresses.

use std::fmt::Write as _;

use zcrx_flowcache::ipproto;
use zcrx_flowcache::wire::IcmpPacket;

use super::field::{be16, checksum, should_be, v4};
use super::layout;

/// An ICMP summary as `tcpdump -q` prints it after the addresses ("ICMP echo request, id 9,
/// seq 1, length 16"), `len` being the ICMP message's length; with `verbose`, a wrong
/// checksum is noted.
pub fn icmp(d: &[u8], l4: usize, len: usize, verbose: bool) -> String {
    let Ok(p) = IcmpPacket::new_checked(d.get(l4..).unwrap_or_default()) else {
        return format!("ICMP, length {len}");
    };
    let (t, code) = (p.msg_type(), p.msg_code());
    // An error's quoted datagram: its IPv4 header, and the ports after it, as far as the
    // capture holds them.
    let inner = p.payload();
    let inner_dst =
        || v4(inner, layout::ipv4::DST_ADDR.start).map_or_else(String::new, |a| a.to_string());
    let inner_proto = || inner.get(layout::ipv4::PROTOCOL).copied().unwrap_or(0);
    let what = match t {
        0 | 8 => format!(
            "echo {}, id {}, seq {}",
            if t == 8 { "request" } else { "reply" },
            p.echo_ident(),
            p.echo_seq_no()
        ),
        3 => match code {
            0 => format!("net {} unreachable", inner_dst()),
            1 => format!("host {} unreachable", inner_dst()),
            2 => format!("{} protocol {} unreachable", inner_dst(), inner_proto()),
            3 => {
                let first = inner.get(layout::ipv4::VER_IHL).copied().unwrap_or(0x45);
                let ihl = usize::from(first & 0x0f) * 4;
                // TCP's and UDP's destination port share their place.
                let dport = be16(inner, ihl + layout::ports::DST_PORT.start).unwrap_or(0);
                match inner_proto() {
                    ipproto::TCP => format!("{} tcp port {dport} unreachable", inner_dst()),
                    ipproto::UDP => format!("{} udp port {dport} unreachable", inner_dst()),
                    p => format!("{} protocol {p} port {dport} unreachable", inner_dst()),
                }
            }
            4 => match be16(p.as_bytes(), layout::icmp::NEXT_HOP_MTU.start).unwrap_or(0) {
                0 => format!("{} unreachable - need to frag", inner_dst()),
                mtu => format!("{} unreachable - need to frag (mtu {mtu})", inner_dst()),
            },
            c => format!("{} unreachable - code {c}", inner_dst()),
        },
        11 => match code {
            0 => "time exceeded in-transit".into(),
            1 => "ip reassembly time exceeded".into(),
            c => format!("time exceeded-#{c}"),
        },
        4 => "source quench".into(),
        10 => "router solicitation".into(),
        13 => "time stamp request".into(),
        14 => "time stamp reply".into(),
        15 => "information request".into(),
        16 => "information reply".into(),
        17 => "address mask request".into(),
        t => format!("type-#{t}"),
    };
    let mut s = format!("ICMP {what}, length {len}");
    if verbose {
        if let Some(msg) = p.as_bytes().get(..len) {
            let sum = checksum(&[msg]);
            if sum != 0 {
                let field = p.checksum();
                let _ = write!(
                    s,
                    " (wrong icmp cksum {field:x} (->{:x})!)",
                    should_be(field, sum)
                );
            }
        }
    }
    s
}
