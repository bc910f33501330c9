#!/usr/bin/env python3
"""Hostile clients against zcap's endpoints, for the soak (scripts/soak.sh).

Every --every seconds, against each TARGET (HOST:PORT): --idle connections that send
nothing, --slow senders that trickle a request a byte a second, one request with a header
larger than any server should take, one connection of random bytes, one that starts a TLS
handshake and stops; all held for --hold seconds, then closed. Prints one line per round
(what connected, what the server closed) and, on SIGTERM, the rounds done.

    hostile-clients.py --every 60 --hold 20 --idle 500 --slow 10 127.0.0.1:9128 127.0.0.1:57012
"""
import argparse
import os
import resource
import signal
import socket
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("targets", nargs="+", help="HOST:PORT")
parser.add_argument("--every", type=float, default=60)
parser.add_argument("--hold", type=float, default=20)
parser.add_argument("--idle", type=int, default=500)
parser.add_argument("--slow", type=int, default=10)
parser.add_argument("--rounds", type=int, default=0, help="0: until SIGTERM")
parser.add_argument("--source", default=None, help="the address to connect from")
args = parser.parse_args()

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
need = len(args.targets) * (args.idle + args.slow + 8) + 64
if soft < need:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, soft), hard), hard))

rounds = 0


def done(*_):
    print(f"hostile: {rounds} rounds", flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, done)

# A TLS 1.2 ClientHello's record header and the start of its handshake, then nothing.
HALF_HELLO = bytes.fromhex("160301012c010001280303") + os.urandom(32)


def connect(host, port):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(2)
    try:
        if args.source:
            s.bind((args.source, 0))
        s.connect((host, port))
        s.setblocking(False)
        return s
    except OSError:
        s.close()
        return None


def send(s, data):
    try:
        s.send(data)
        return True
    except OSError:
        return False


def closed_by_server(s):
    """Whether the server closed (or reset) the connection."""
    try:
        data = s.recv(65536)
        return data == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def one_round():
    held = []
    for target in args.targets:
        host, port = target.rsplit(":", 1)
        host, port = host.strip("[]"), int(port)
        conns = {"idle": [], "slow": [], "big": [], "garbage": [], "half-tls": []}
        for _ in range(args.idle):
            s = connect(host, port)
            if s:
                conns["idle"].append(s)
        for _ in range(args.slow):
            s = connect(host, port)
            if s and send(s, b"GET /metrics HTTP/1.1\r\nHost: x\r\n"):
                conns["slow"].append(s)
        s = connect(host, port)
        if s and send(s, b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20)):
            conns["big"].append(s)
        s = connect(host, port)
        if s and send(s, os.urandom(1 << 16)):
            conns["garbage"].append(s)
        s = connect(host, port)
        if s and send(s, HALF_HELLO):
            conns["half-tls"].append(s)
        held.append((target, conns))
    t0 = time.monotonic()
    while time.monotonic() - t0 < args.hold:
        for _, conns in held:
            for s in conns["slow"]:
                send(s, b"X")
        time.sleep(1)
    for target, conns in held:
        said = []
        for kind, socks in conns.items():
            shut = sum(closed_by_server(s) for s in socks)
            said.append(f"{kind} {len(socks)} (closed by zcap {shut})")
            for s in socks:
                s.close()
        print(f"hostile: {target}: " + ", ".join(said), flush=True)


while True:
    start = time.monotonic()
    one_round()
    rounds += 1
    if args.rounds and rounds >= args.rounds:
        done()
    time.sleep(max(0.0, args.every - (time.monotonic() - start)))
