#!/usr/bin/env python3
"""Sends a QUIC client's first Initial datagrams (aioquic) to ADDR PORT and stops: nothing
answers, the ClientHello is what the test reads. Usage: ADDR PORT VERSION(1|2) SNI ALPN[,ALPN..]
[PAD]: PAD extra ALPN entries make the ClientHello span several Initial packets."""
import socket
import sys

from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet import QuicProtocolVersion

addr, port, version, sni, alpn = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
pad = int(sys.argv[6]) if len(sys.argv) > 6 else 0
alpns = alpn.split(",") + [f"x-padding-protocol-{i:03d}-" + "p" * 40 for i in range(pad)]
v = QuicProtocolVersion.VERSION_2 if version == "2" else QuicProtocolVersion.VERSION_1
config = QuicConfiguration(is_client=True, alpn_protocols=alpns, server_name=sni,
                           supported_versions=[v])
conn = QuicConnection(configuration=config)
conn.connect((addr, port), now=0.0)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
for data, _ in conn.datagrams_to_send(now=0.0):
    sock.sendto(data, (addr, port))
    n += 1
print(n, flush=True)
