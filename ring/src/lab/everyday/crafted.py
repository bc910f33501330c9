#!/usr/bin/env python3
"""The everyday lab's hand-made packets (scapy), sent on IFACE from the lab's side a to side b
(DST_MAC): an IPv6 router solicitation; IPv6 UDP behind a hop-by-hop options header (router
alert) and behind a destination-options header; and, for the tunnels this kernel may not
build, an 802.1Q-tagged ICMP echo and ICMP and UDP inside GRE (inner 198.19.x.x).
Usage: IFACE DST_MAC WHAT... (WHAT: rs, ext6, vlan, gre)."""
import sys

from scapy.all import (
    GRE, ICMP, IP, UDP, Dot1Q, Ether, ICMPv6ND_RS, ICMPv6NDOptSrcLLAddr, IPv6,
    IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, RouterAlert, get_if_hwaddr, sendp,
)

iface, dst = sys.argv[1], sys.argv[2]
src = get_if_hwaddr(iface)
eth = Ether(src=src, dst=dst)
out = []
for what in sys.argv[3:]:
    if what == "rs":
        out.append(Ether(src=src, dst="33:33:00:00:00:02")
                   / IPv6(src="fe80::1", dst="ff02::2", hlim=255)
                   / ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr=src))
    elif what == "ext6":
        out.append(eth / IPv6(src="fd00:5a::1", dst="fd00:5a::2")
                   / IPv6ExtHdrHopByHop(options=[RouterAlert()])
                   / UDP(sport=40000, dport=9999) / b"hop-by-hop")
        out.append(eth / IPv6(src="fd00:5a::1", dst="fd00:5a::2")
                   / IPv6ExtHdrDestOpt() / UDP(sport=40001, dport=9999) / b"dest-opts")
    elif what == "vlan":
        out.append(eth / Dot1Q(vlan=10, prio=3) / IP(src="198.19.3.1", dst="198.19.3.2")
                   / ICMP(id=0x10, seq=1) / b"vlan ten")
    elif what == "gre":
        outer = eth / IP(src="198.18.0.1", dst="198.18.0.2") / GRE()
        out.append(outer / IP(src="198.19.1.1", dst="198.19.1.2") / ICMP(id=0x47, seq=1))
        out.append(outer / IP(src="198.19.1.1", dst="198.19.1.2")
                   / UDP(sport=40002, dport=9999) / b"inside GRE")
    else:
        sys.exit(f"unknown packet kind {what}")
sendp(out, iface=iface, verbose=False)
print(len(out))
