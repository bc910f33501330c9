#!/usr/bin/env python3
"""A DNS responder for the names oracle test, on UDP and TCP: A queries get one answer,
names under nx.example get NXDOMAIN, other types an empty NOERROR. Usage: ADDR PORT."""
import sys
import time

from dnslib import QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver, DNSServer


class Resolver(BaseResolver):
    def resolve(self, request, handler):
        reply = request.reply()
        name = str(request.q.qname)
        if name.rstrip(".").endswith("nx.example"):
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.A:
            reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A("198.18.0.9"), ttl=60))
        return reply


addr, port = sys.argv[1], int(sys.argv[2])
servers = [DNSServer(Resolver(), address=addr, port=port, tcp=tcp) for tcp in (False, True)]
for s in servers:
    s.start_thread()
print("ready", flush=True)
deadline = time.time() + 120  # the test stops it; this bounds a forgotten one
while time.time() < deadline:
    time.sleep(0.2)
