#!/usr/bin/env python3
"""Writes a pcap (argv[1]) of link layers and tunnels as tcpdump users meet them: 802.1Q,
QinQ, MPLS, PPPoE discovery and session, LLC/SNAP, STP, LLDP, ARP/RARP, GRE (keys,
sequence numbers, PPTP), IP in IP, 6in4, VXLAN and Geneve with inner frames, IPv6
extension headers and neighbour discovery, SCTP chunks; and each cut short."""
import sys
from scapy.all import (Ether, Dot1Q, Dot1AD, IP, IPv6, TCP, UDP, ICMP, ARP, Raw, GRE, LLC,
                       SNAP, STP, Dot3, PPPoE, PPPoED, PPP, wrpcap)
from scapy.contrib.mpls import MPLS
from scapy.layers.vxlan import VXLAN
from scapy.contrib.geneve import GENEVE
from scapy.contrib.lldp import (LLDPDUChassisID, LLDPDUPortID, LLDPDUTimeToLive,
                                LLDPDUSystemName, LLDPDUEndOfLLDPDU)
from scapy.layers.inet6 import (IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, IPv6ExtHdrRouting,
                                IPv6ExtHdrFragment, ICMPv6EchoRequest, ICMPv6ND_NS,
                                ICMPv6ND_NA, ICMPv6ND_RS, ICMPv6ND_RA, ICMPv6NDOptSrcLLAddr,
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptPrefixInfo, ICMPv6NDOptMTU)
from scapy.layers.sctp import SCTP, SCTPChunkInit, SCTPChunkData, SCTPChunkSACK, SCTPChunkAbort
from scapy.packet import Packet

A, B = "198.18.0.1", "198.18.0.2"
A6, B6 = "2001:db8::1", "2001:db8::2"
MA, MB = "02:00:00:00:00:01", "02:00:00:00:00:02"
E = lambda **k: Ether(src=MA, dst=MB, **k)
tcp = lambda: TCP(sport=40000, dport=80, flags="S", seq=1000, window=512, options=[("MSS", 1460)])
inner4 = lambda: IP(src="198.19.0.1", dst="198.19.0.2", id=7) / ICMP(id=1, seq=1) / b"ping"

frames = [
    E() / Dot1Q(vlan=10, prio=3) / IP(src=A, dst=B) / tcp(),
    E() / Dot1Q(vlan=10) / ARP(psrc=A, pdst=B, hwsrc=MA),
    E() / Dot1AD(vlan=100) / Dot1Q(vlan=20) / IP(src=A, dst=B) / UDP(sport=1000, dport=2000) / (b"x" * 8),
    E() / Dot1Q(vlan=5, id=1) / IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(),
    E(type=0x8847) / MPLS(label=100, s=0, ttl=64) / MPLS(label=200, s=1, ttl=63) / IP(src=A, dst=B) / tcp(),
    E() / MPLS(label=16, s=1, ttl=1) / IPv6(src=A6, dst=B6) / UDP(sport=53, dport=53) / (b"\x00" * 12),
    E() / PPPoED(code=0x09, sessionid=0) / b"\x01\x01\x00\x00",
    E() / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) / IP(src=A, dst=B) / tcp(),
    E() / PPPoE(sessionid=0x1) / PPP(proto=0xc021) / b"\x01\x01\x00\x04",
    Dot3(src=MA, dst="01:80:c2:00:00:00") / LLC() / STP(rootid=32768, rootmac=MA, bridgeid=32768, bridgemac=MA),
    Dot3(src=MA, dst=MB) / LLC(dsap=0xaa, ssap=0xaa, ctrl=3) / SNAP(OUI=0, code=0x0800) / IP(src=A, dst=B) / ICMP(),
    Ether(src=MA, dst="01:80:c2:00:00:0e") / LLDPDUChassisID(subtype=4, id=MA) / LLDPDUPortID(subtype=5, id=b"eth0") / LLDPDUTimeToLive(ttl=120) / LLDPDUSystemName(system_name=b"lab") / LLDPDUEndOfLLDPDU(),
    E() / ARP(op=1, psrc=A, pdst=B, hwsrc=MA),
    E() / ARP(op=2, psrc=B, pdst=A, hwsrc=MB, hwdst=MA),
    E(type=0x8035) / ARP(op=3, psrc=A, pdst=B, hwsrc=MA, hwdst=MA),
    E() / IP(src=A, dst=B) / GRE(key_present=1, key=0x1234, seqnum_present=1, seqence_number=5) / inner4(),
    E() / IP(src=A, dst=B) / GRE(proto=0x86dd) / IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(),
    E() / IP(src=A, dst=B) / GRE(proto=0x6558) / Ether(src=MA, dst=MB) / inner4(),
    E() / IP(src=A, dst=B) / GRE(chksum_present=1) / inner4(),
    E() / IP(src=A, dst=B, proto=4) / inner4(),
    E() / IP(src=A, dst=B) / IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(),
    E() / IPv6(src=A6, dst=B6) / IP(src=A, dst=B) / ICMP(),
    E() / IP(src=A, dst=B) / UDP(sport=50000, dport=4789) / VXLAN(vni=42) / Ether(src=MA, dst=MB) / IP(src="198.19.0.1", dst="198.19.0.2") / TCP(sport=1, dport=22, flags="S"),
    E() / IP(src=A, dst=B) / UDP(sport=50000, dport=6081) / GENEVE(vni=7, proto=0x6558) / Ether(src=MA, dst=MB) / inner4(),
    E() / IP(src=A, dst=B) / UDP(sport=50000, dport=6081) / GENEVE(vni=7, proto=0x0800) / inner4(),
    E() / IPv6(src=A6, dst=B6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / UDP(sport=1, dport=2) / b"abc",
    E() / IPv6(src=A6, dst=B6) / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=1) / TCP(sport=1, dport=2, flags="S"),
    E() / IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(id=9, m=1) / UDP(sport=1, dport=2) / b"frag",
    E() / IPv6(src="fe80::1", dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt="fe80::2") / ICMPv6NDOptSrcLLAddr(lladdr=MA),
    E() / IPv6(src="fe80::2", dst="fe80::1", hlim=255) / ICMPv6ND_NA(tgt="fe80::2", R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=MB),
    E() / IPv6(src="fe80::1", dst="ff02::2", hlim=255) / ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr=MA),
    E() / IPv6(src="fe80::2", dst="ff02::1", hlim=255) / ICMPv6ND_RA() / ICMPv6NDOptPrefixInfo(prefix="2001:db8::", prefixlen=64) / ICMPv6NDOptMTU(mtu=1500) / ICMPv6NDOptSrcLLAddr(lladdr=MB),
    E() / IP(src=A, dst=B) / SCTP(sport=5000, dport=5001, tag=0) / SCTPChunkInit(init_tag=1, a_rwnd=65535, n_out_streams=1, n_in_streams=1, init_tsn=1),
    E() / IP(src=A, dst=B) / SCTP(sport=5000, dport=5001, tag=1) / SCTPChunkData(tsn=1, stream_id=0, stream_seq=0, data=b"hello") / SCTPChunkSACK(cumul_tsn_ack=1, a_rwnd=1000),
    E() / IP(src=A, dst=B) / SCTP(sport=5000, dport=5001, tag=1) / SCTPChunkAbort(),
]
cut = []
for f in frames:
    raw = bytes(f)
    for n in (len(raw) - 3, len(raw) // 2, 20):
        if 14 <= n < len(raw):
            cut.append((raw[:n], len(raw)))
from scapy.utils import PcapWriter
w = PcapWriter(sys.argv[1], linktype=1, sync=True)
t = 1_700_000_000
for i, f in enumerate(frames):
    p = Ether(bytes(f)) if not isinstance(f, Dot3) else f
    p.time = t + i
    w.write(p)
# Frames cut by a snapshot length: captured bytes shorter than the wire length.
for j, (raw, wire) in enumerate(cut):
    w.write_packet(raw, sec=t + 1000 + j, usec=0, caplen=len(raw), wirelen=wire)
w.close()

# With a second file: a few frames as `-i any` captures them (LINUX_SLL2), both directions.
if len(sys.argv) > 2:
    from scapy.layers.l2 import CookedLinuxV2
    w = PcapWriter(sys.argv[2], linktype=276, sync=True)
    for i, (ptype, inner) in enumerate([
        (0, IP(src=A, dst=B) / tcp()),
        (4, IP(src=B, dst=A) / ICMP(type=0)),
        (0, IPv6(src=A6, dst=B6) / UDP(sport=5353, dport=5353) / (b"\x00" * 12)),
        (1, ARP(op=1, psrc=A, pdst=B, hwsrc=MA)),
    ]):
        proto = 0x0806 if isinstance(inner, ARP) else (0x86dd if isinstance(inner, IPv6) else 0x0800)
        hdr = CookedLinuxV2(proto=proto, ifindex=1, lladdrtype=1, pkttype=ptype, lladdrlen=6, src=MA)
        p = hdr / inner
        p.time = t + 2000 + i
        w.write(p)
    w.close()
