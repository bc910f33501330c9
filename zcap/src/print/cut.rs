//! Packets the flow extractor refuses — a TCP, UDP, ICMP, ICMPv6 or SCTP header cut by the
//! snapshot length, or one whose lengths are wrong — printed as tcpdump prints them.

use std::fmt::Write as _;

use zcrx_flowcache::ipproto;

use super::ctx::Ctx;
use crate::dissect;
use crate::dissect::resolve;
use crate::dissect::tcp;

/// The packet at `ip`, if its protocol is one of those; `false` leaves it to the caller.
pub(super) fn cut_ip(
    s: &mut String,
    ip: &dissect::net::Ip,
    data: &[u8],
    ctx: &mut Ctx<'_>,
    ether: bool,
) -> bool {
    let detail = ctx.detail;
    let sctp_bytes = data.get(ip.l4..).unwrap_or_default();
    let sctp_bytes = sctp_bytes.get(..ip.len).unwrap_or(sctp_bytes);
    let sctp_fault = (ip.proto == ipproto::SCTP)
        .then(|| dissect::sctp::header_fault(sctp_bytes, ip.len))
        .flatten();
    let handled = matches!(
        ip.proto,
        ipproto::TCP | ipproto::UDP | ipproto::ICMP | ipproto::ICMPV6
    );
    if ip.later || !(handled || sctp_fault.is_some()) {
        return false;
    }
    if !ether {
        s.push_str(if ip.v6 { "IP6 " } else { "IP " });
    }
    if detail.verbose > 0 {
        if ip.v6 {
            s.push_str(&dissect::ipv6_verbose(data, ip.l3).unwrap_or_default());
        } else {
            dissect::ipv4_verbose(s, data, ip.l3, !detail.no_checksums);
        }
    }
    if ip.missing > 0 && !ip.v6 {
        let _ = write!(s, "truncated-ip - {} bytes missing! ", ip.missing);
    }
    match sctp_fault {
        Some(fault) => s.push_str(&fault),
        None => transport(s, ip, data, ctx),
    }
    true
}

/// The addresses, then what the cut transport header still says.
fn transport(s: &mut String, ip: &dissect::net::Ip, data: &[u8], ctx: &mut Ctx<'_>) {
    let detail = ctx.detail;
    let host = |s: &mut String, a| resolve::host(s, a, detail.naming());
    let addresses = |s: &mut String, sep: &str| {
        host(s, ip.src);
        s.push_str(" > ");
        host(s, ip.dst);
        s.push_str(sep);
    };
    match ip.proto {
        ipproto::ICMP => {
            // The ICMP header is cut (else the extractor would have taken it).
            addresses(s, ":  [|icmp]");
            ctx.jumped = true;
            return;
        }
        ipproto::ICMPV6 => {
            addresses(s, ": ");
            let style = dissect::Icmp6Style {
                verbose: detail.verbose,
                names: detail.names,
                fragmented: ip.fragmented,
            };
            let (text, jumped) = dissect::icmp6(data, ip.l3, ip.l4, ip.len, style);
            s.push_str(&text);
            ctx.jumped |= jumped;
            return;
        }
        _ => {}
    }
    let tcp = ip.proto == ipproto::TCP;
    let ports = (
        zcrx_flowcache::wire::read_be16(data, ip.l4),
        zcrx_flowcache::wire::read_be16(data, ip.l4 + 2),
    );
    let (Some(sp), Some(dp)) = ports else {
        addresses(s, if tcp { ":" } else { ": " });
        s.push_str(if tcp { " [|tcp]" } else { " [|udp]" });
        return;
    };
    host(s, ip.src);
    s.push('.');
    resolve::port(s, sp, tcp, detail.names);
    s.push_str(" > ");
    host(s, ip.dst);
    s.push('.');
    resolve::port(s, dp, tcp, detail.names);
    s.push_str(": ");
    if !tcp {
        s.push_str(" [|udp]");
        return;
    }
    let seg = tcp::Segment {
        data,
        l3: ip.l3,
        l4: ip.l4,
        len: ip.len,
        v6: ip.v6,
        fragmented: ip.fragmented,
    };
    ctx.jumped |= tcp::tcp(s, &seg, detail.tcp_style(), ctx.seqs);
}
