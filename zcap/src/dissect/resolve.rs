//! Names without `-n`, as tcpdump gives them: ports from the system's services database,
//! addresses from the hosts file, a MAC address's maker (its OUI) from tcpdump's table.
//!
//! zcap reads `/etc/services` and `/etc/hosts` once, on the first line that needs them, and
//! never asks DNS: a sensor that sent a query for every address it saw would leak what it
//! watches and stall on every unanswered one. tcpdump asks the system's resolver, DNS
//! included, so an address that only DNS names prints as a name there and as a number here.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::OnceLock;

/// The services database.
const SERVICES: &str = "/etc/services";
/// The hosts file.
const HOSTS: &str = "/etc/hosts";
/// Lines read at most from either file (both are a few thousand lines).
const MAX_LINES: usize = 100_000;

/// Reads both files now (before a sandbox takes them out of reach).
pub fn preload() {
    services();
    hosts();
}

/// Port names by (port, is TCP).
fn services() -> &'static HashMap<(u16, bool), Box<str>> {
    static S: OnceLock<HashMap<(u16, bool), Box<str>>> = OnceLock::new();
    S.get_or_init(|| parse_services(&std::fs::read_to_string(SERVICES).unwrap_or_default()))
}

/// Host names by address.
fn hosts() -> &'static HashMap<IpAddr, Box<str>> {
    static H: OnceLock<HashMap<IpAddr, Box<str>>> = OnceLock::new();
    H.get_or_init(|| parse_hosts(&std::fs::read_to_string(HOSTS).unwrap_or_default()))
}

/// `name port/proto aliases...` lines; the first name a port has wins, as in tcpdump.
fn parse_services(text: &str) -> HashMap<(u16, bool), Box<str>> {
    let mut m = HashMap::new();
    for line in text.lines().take(MAX_LINES) {
        let line = line.split('#').next().unwrap_or_default();
        let mut words = line.split_whitespace();
        let (Some(name), Some(port)) = (words.next(), words.next()) else {
            continue;
        };
        let Some((port, proto)) = port.split_once('/') else {
            continue;
        };
        let (Ok(port), tcp) = (port.parse::<u16>(), proto == "tcp") else {
            continue;
        };
        if tcp || proto == "udp" {
            m.entry((port, tcp)).or_insert_with(|| name.into());
        }
    }
    m
}

/// `address name aliases...` lines; an address's first line wins, as the C library's
/// `gethostbyaddr` reads the file.
fn parse_hosts(text: &str) -> HashMap<IpAddr, Box<str>> {
    let mut m = HashMap::new();
    for line in text.lines().take(MAX_LINES) {
        let line = line.split('#').next().unwrap_or_default();
        let mut words = line.split_whitespace();
        let (Some(addr), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        if let Ok(addr) = addr.parse::<IpAddr>() {
            m.entry(addr).or_insert_with(|| name.into());
        }
    }
    m
}

/// A port: its service name with `names`, else its number.
pub fn port(out: &mut String, port: u16, tcp: bool, names: bool) {
    match names.then(|| services().get(&(port, tcp))).flatten() {
        Some(name) => out.push_str(name),
        None => super::num::dec(out, port),
    }
}

/// How addresses are named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Naming {
    /// Without `-n`: named from the hosts file.
    pub names: bool,
    /// `-N`: names without their domain.
    pub short: bool,
    /// `-f`: the capture interface's IPv4 network (address, mask); addresses outside it
    /// ("foreign") print as numbers.
    pub local_v4: Option<(u32, u32)>,
}

/// An address: its name in the hosts file as `how` says, else as a number.
pub fn host(out: &mut String, addr: IpAddr, how: Naming) {
    let foreign = match (addr, how.local_v4) {
        (IpAddr::V4(a), Some((net, mask))) => u32::from(a) & mask != net,
        _ => false,
    };
    match (how.names && !foreign)
        .then(|| hosts().get(&addr))
        .flatten()
    {
        Some(name) if how.short => out.push_str(name.split('.').next().unwrap_or(name)),
        Some(name) => out.push_str(name),
        None => super::num::ip(out, addr),
    }
}

/// The IPv4 network (address and mask, host order) of `iface`'s first IPv4 address, as
/// tcpdump's `-f` takes it from libpcap (`pcap_lookupnet`).
pub fn local_network(iface: &str) -> Option<(u32, u32)> {
    nix::ifaddrs::getifaddrs()
        .ok()?
        .filter(|a| a.interface_name == iface)
        .find_map(|a| {
            let ip = u32::from(a.address?.as_sockaddr_in()?.ip());
            let mask = u32::from(a.netmask?.as_sockaddr_in()?.ip());
            Some((ip & mask, mask))
        })
}

/// A MAC address; with `names`, its maker after it (`(oui Unknown)` when tcpdump's table has
/// none), as tcpdump prints one that `/etc/ethers` does not name.
pub fn mac(out: &mut String, m: &[u8], names: bool) {
    // tcpdump's own name for the broadcast address.
    if names && m == [0xff; 6] {
        out.push_str("Broadcast");
        return;
    }
    for (i, &b) in m.iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        super::num::hex2(out, b);
    }
    if names && m.len() >= 3 {
        let oui = u32::from_be_bytes([0, m[0], m[1], m[2]]);
        let name = OUI
            .iter()
            .find(|(o, _)| *o == oui)
            .map_or("Unknown", |(_, n)| n);
        let _ = write!(out, " (oui {name})");
    }
}

/// tcpdump's table of organisations by OUI.
const OUI: &[(u32, &str)] = &[
    (0x000000, "Ethernet"),
    (0x00000c, "Cisco"),
    (0x00005e, "IANA"),
    (0x000081, "Nortel Networks SONMP"),
    (0x0000f8, "Cisco bridged"),
    (0x0080c2, "Ethernet bridged"),
    (0x00a03e, "ATM Forum"),
    (0x00e02f, "DOCSIS Spanning Tree"),
    (0x080007, "Appletalk"),
    (0x009069, "Juniper"),
    (0x080009, "Hewlett-Packard"),
    (0x0080c2, "IEEE 802.1 Private"),
    (0x00120f, "IEEE 802.3 Private"),
    (0x0012bb, "ANSI/TIA"),
    (0x001b21, "DCBX"),
    (0x002320, "Nicira Networks"),
    (0x5c16c7, "Big Switch Networks"),
    (0xb0d2f5, "Vello Systems"),
    (0x002481, "HP"),
    (0x0004ea, "HP-Labs"),
    (0x748771, "Infoblox Inc"),
    (0xa42305, "Open Networking Lab"),
    (0x00049f, "Freescale"),
    (0x0015ad, "Netronome"),
    (0x001018, "Broadcom"),
    (0x00e004, "PMC-Sierra"),
    (0xd0f0db, "Ericsson"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_name_of_a_port_or_an_address_wins() {
        let s = parse_services("http 80/tcp www # web\nhttp 80/udp\nwww-alt 80/tcp\nbad x/tcp\n");
        assert_eq!(s.get(&(80, true)).map(|n| &**n), Some("http"));
        assert_eq!(s.get(&(80, false)).map(|n| &**n), Some("http"));
        assert_eq!(s.len(), 2);
        let h = parse_hosts("127.0.0.1 localhost\n127.0.0.1 other\n::1 ip6-localhost # v6\nx y\n");
        assert_eq!(
            h.get(&"127.0.0.1".parse().unwrap()).map(|n| &**n),
            Some("localhost")
        );
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn macs_with_and_without_their_maker() {
        let mut s = String::new();
        mac(&mut s, &[0, 0, 0x0c, 1, 2, 3], true);
        assert_eq!(s, "00:00:0c:01:02:03 (oui Cisco)");
        s.clear();
        mac(&mut s, &[2, 0, 0, 1, 2, 3], false);
        assert_eq!(s, "02:00:00:01:02:03");
    }
}
