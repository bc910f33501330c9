#!/usr/bin/env python3
"""JA4 of every ClientHello in a capture, by the ja4plus package (FoxIO's JA4 in Python):
one line per ClientHello, `SRC SRCPORT DST DSTPORT JA4`. Usage: PCAP."""
import sys

from scapy.all import rdpcap

from ja4plus import JA4Fingerprinter

fp = JA4Fingerprinter()
for pkt in rdpcap(sys.argv[1]):
    fp.process_packet(pkt)
for e in fp.get_fingerprints():
    print(e["src"], e["srcport"], e["dst"], e["dstport"], e["fingerprint"])
