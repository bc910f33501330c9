//! tcpdump 4.99.3's names for DNS numbers: opcodes, response codes, types, classes, EDNS
//! options and the algorithm numbers EDNS options list.

use std::fmt::Write;

/// Opcode suffixes (`ns_ops`).
pub(super) const OPS: [&str; 16] = [
    "",
    " inv_q",
    " stat",
    " op3",
    " notify",
    " update",
    " op6",
    " op7",
    " op8",
    " updateA",
    " updateD",
    " updateDA",
    " updateM",
    " updateMA",
    " zoneInit",
    " zoneRef",
];

/// Response code suffixes (`ns_resp`, its two entries without a space kept).
const RESP: [&str; 24] = [
    "",
    " FormErr",
    " ServFail",
    " NXDomain",
    " NotImp",
    " Refused",
    " YXDomain",
    " YXRRSet",
    " NXRRSet",
    " NotAuth",
    " NotZone",
    " Resp11",
    " Resp12",
    " Resp13",
    " Resp14",
    " NoChange",
    " BadVers",
    "Resp17",
    " Resp18",
    " Resp19",
    " Resp20",
    "Resp21",
    " Resp22",
    " BadCookie",
];

/// Appends a response code's suffix (`ns_rcode`).
pub(super) fn rcode(out: &mut String, rcode: u16) {
    match RESP.get(usize::from(rcode)) {
        Some(s) => out.push_str(s),
        None => {
            let _ = write!(out, " Resp{}", rcode & 0xfff);
        }
    }
}

/// A type's name (`ns_type2str`), if tcpdump 4.99.3 has one.
fn type_name(t: u16) -> Option<&'static str> {
    const LOW: [&str; 49] = [
        "", "A", "NS", "MD", "MF", "CNAME", "SOA", "MB", "MG", "MR", "NULL", "WKS", "PTR", "HINFO",
        "MINFO", "MX", "TXT", "RP", "AFSDB", "X25", "ISDN", "RT", "NSAP", "NSAP_PTR", "SIG", "KEY",
        "PX", "GPOS", "AAAA", "LOC", "NXT", "EID", "NIMLOC", "SRV", "ATMA", "NAPTR", "KX", "CERT",
        "A6", "DNAME", "SINK", "OPT", "APL", "DS", "SSHFP", "IPSECKEY", "RRSIG", "NSEC", "DNSKEY",
    ];
    Some(match t {
        1..=48 => LOW.get(usize::from(t))?,
        99 => "SPF",
        100 => "UINFO",
        101 => "UID",
        102 => "GID",
        103 => "UNSPEC",
        104 => "UNSPECA",
        249 => "TKEY",
        250 => "TSIG",
        251 => "IXFR",
        252 => "AXFR",
        253 => "MAILB",
        254 => "MAILA",
        255 => "ANY",
        256 => "URI",
        _ => return None,
    })
}

/// Appends a type's name, or `Type<n>`.
pub(super) fn rr_type(out: &mut String, t: u16) {
    match type_name(t) {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "Type{t}");
        }
    }
}

/// Appends a class's name, or `(Class <n>)` (`ns_class2str`).
pub(super) fn class(out: &mut String, c: u32) {
    match c {
        1 => out.push_str("IN"),
        3 => out.push_str("CHAOS"),
        4 => out.push_str("HS"),
        255 => out.push_str("ANY"),
        _ => {
            let _ = write!(out, "(Class {c})");
        }
    }
}

/// Appends an EDNS option's name, or `Opt<n>` (`edns_opt2str`).
pub(super) fn edns_opt(out: &mut String, o: u16) {
    let name = match o {
        1 => "LLQ",
        2 => "UL",
        3 => "NSID",
        5 => "DAU",
        6 => "DHU",
        7 => "N3U",
        8 => "ECS",
        9 => "EXPIRE",
        10 => "COOKIE",
        11 => "KEEPALIVE",
        12 => "PADDING",
        13 => "CHAIN",
        14 => "KEY-TAG",
        16 => "CLIENT-TAG",
        17 => "SERVER-TAG",
        _ => {
            let _ = write!(out, "Opt{o}");
            return;
        }
    };
    out.push_str(name);
}

/// Which algorithm list an EDNS option names.
#[derive(Clone, Copy)]
pub(super) enum Algs {
    /// DNSSEC algorithms understood (`dau_alg2str`).
    Dau,
    /// DS hashes understood (`dhu_alg2str`).
    Dhu,
    /// NSEC3 hashes understood (`n3u_alg2str`).
    N3u,
}

/// Appends an algorithm's name from `list`, or `Alg_<n>`.
pub(super) fn alg(out: &mut String, list: Algs, a: u8) {
    let name = match (list, a) {
        (Algs::Dau, 0) => "DELETE",
        (Algs::Dau, 1) => "RSAMD5",
        (Algs::Dau, 2) => "DH",
        (Algs::Dau, 3) => "DS",
        (Algs::Dau, 5) => "RSASHA1",
        (Algs::Dau, 6) => "DSA-NSEC3-SHA1",
        (Algs::Dau, 7) => "RSASHA1-NSEC3-SHA1",
        (Algs::Dau, 8) => "RSASHA256",
        (Algs::Dau, 10) => "RSASHA512",
        (Algs::Dau, 12) => "ECC-GOST",
        (Algs::Dau, 13) => "ECDSAP256SHA256",
        (Algs::Dau, 14) => "ECDSAP384SHA384",
        (Algs::Dau, 15) => "ED25519",
        (Algs::Dau, 16) => "ED448",
        (Algs::Dau, 252) => "INDIRECT",
        (Algs::Dau, 253) => "PRIVATEDNS",
        (Algs::Dau, 254) => "PRIVATEOID",
        (Algs::Dhu | Algs::N3u, 1) => "SHA-1",
        (Algs::Dhu, 2) => "SHA-256",
        (Algs::Dhu, 3) => "GOST_R_34.11-94",
        (Algs::Dhu, 4) => "SHA-384",
        _ => {
            let _ = write!(out, "Alg_{a}");
            return;
        }
    };
    out.push_str(name);
}

/// Appends a time span as tcpdump's `unsigned_relts_print` does (`1h2m3s`, `0s`).
pub(super) fn relts(out: &mut String, secs: u32) {
    const UNITS: [(u32, char); 6] = [
        (31_536_000, 'y'),
        (604_800, 'w'),
        (86_400, 'd'),
        (3_600, 'h'),
        (60, 'm'),
        (1, 's'),
    ];
    if secs == 0 {
        out.push_str("0s");
        return;
    }
    let mut left = secs;
    for (unit, name) in UNITS {
        if left >= unit {
            let _ = write!(out, "{}{name}", left / unit);
            left %= unit;
        }
    }
}

/// Appends an IPv6 address as tcpdump's `addrtostr6` writes it: the longest run of two or
/// more zero words as `::` (the first of equal runs), and an IPv4 tail after a leading run of
/// six zero words or of five and `ffff`.
pub(super) fn ipv6(out: &mut String, a: [u8; 16]) {
    let mut w = [0u16; 8];
    for (x, b) in w.iter_mut().zip(a.chunks_exact(2)) {
        *x = u16::from_be_bytes([b[0], b[1]]);
    }
    // The longest zero run as (start, length); a later run must be longer to win.
    let (mut best, mut cur) = ((0usize, 0usize), (0usize, 0usize));
    for (i, &x) in w.iter().enumerate() {
        cur = if x != 0 {
            (i + 1, 0)
        } else {
            (cur.0, cur.1 + 1)
        };
        if cur.1 > best.1 {
            best = cur;
        }
    }
    let run = |i: usize| best.1 >= 2 && (best.0..best.0 + best.1).contains(&i);
    let v4_tail = best.0 == 0 && (best.1 == 6 || (best.1 == 5 && w[5] == 0xffff));
    for (i, &x) in w.iter().enumerate() {
        if run(i) {
            if i == best.0 {
                out.push(':');
            }
            continue;
        }
        if i != 0 {
            out.push(':');
        }
        if i == 6 && v4_tail {
            let _ = write!(out, "{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
            return;
        }
        let _ = write!(out, "{x:x}");
    }
    if best.1 >= 2 && best.0 + best.1 == 8 {
        out.push(':');
    }
}
