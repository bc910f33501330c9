"""Community ID v1 by the specification's reference implementation (the communityid
package), one line in, one line out: "SEED PROTO SADDR DADDR SPORT DPORT", the ports "-"
for a tuple without them. Ports go to the reference only for the protocols its own pcap
tool (community-id-pcap) reads ports of: TCP, UDP, SCTP, ICMP, ICMPv6."""
import sys

import communityid

PORTED = {1, 6, 17, 58, 132}
engines = {}
out = []
for line in sys.stdin:
    seed, proto, saddr, daddr, sport, dport = line.split()
    seed, proto = int(seed), int(proto)
    if proto in PORTED:
        tpl = communityid.FlowTuple(proto, saddr, daddr, int(sport), int(dport))
    else:
        tpl = communityid.FlowTuple(proto, saddr, daddr)
    engine = engines.setdefault(seed, communityid.CommunityID(seed))
    out.append(engine.calc(tpl))
sys.stdout.write("\n".join(out) + ("\n" if out else ""))
