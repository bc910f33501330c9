#!/usr/bin/env python3
"""Publishes lines of standard input to a Kafka topic, one message a line: `KEY<TAB>VALUE`
(a line without a tab: the value alone, no key), with headers and compression; waits until
the broker acknowledged every message and says how many it did. Exits 1 if any was not.

usage: kafka-publish.py --brokers HOST:PORT --topic T [--header NAME=VALUE ...]
                        [--compression none|gzip|snappy|lz4|zstd]
"""

import argparse
import sys

from confluent_kafka import Producer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--brokers", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--compression", default="lz4")
    a = p.parse_args()
    headers = [tuple(h.split("=", 1)) for h in a.header]
    producer = Producer(
        {
            "bootstrap.servers": a.brokers,
            "compression.type": a.compression,
            "linger.ms": 20,
            "acks": "all",
        }
    )
    failed = []
    acked = [0]

    def delivered(err, _msg):
        if err is not None:
            failed.append(str(err))
        else:
            acked[0] += 1

    sent = 0
    for line in sys.stdin:
        line = line.rstrip("\n")
        key, _, value = line.rpartition("\t") if "\t" in line else (None, "", line)
        producer.produce(a.topic, value=value, key=key, headers=headers, on_delivery=delivered)
        producer.poll(0)
        sent += 1
    left = producer.flush(30)
    print(f"kafka-publish: {acked[0]} of {sent} acknowledged", file=sys.stderr)
    if failed or left or acked[0] != sent:
        print(f"kafka-publish: failed: {failed[:3]} ({left} still queued)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
