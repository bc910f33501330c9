#!/usr/bin/env python3
"""Reads a Kafka topic from its beginning (a fresh consumer group) and prints each message
as `SENSOR<TAB>KEY<TAB>VALUE` (the `sensor` header; the value as text: JSON records; a
binary one may hold newlines), each offset once, until no message
came for --idle seconds after the first one, or --timeout seconds passed. Prints how many it
read on standard error.

usage: kafka-consume.py --brokers HOST:PORT --topic T [--idle S] [--timeout S]
"""

import argparse
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaError


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--brokers", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--idle", type=float, default=3)
    p.add_argument("--timeout", type=float, default=60)
    a = p.parse_args()
    c = Consumer(
        {
            "bootstrap.servers": a.brokers,
            "group.id": "kafka-consume-" + uuid.uuid4().hex,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    c.subscribe([a.topic])
    start = time.monotonic()
    last = None
    n = 0
    seen = set()
    while time.monotonic() - start < a.timeout:
        if last is not None and time.monotonic() - last > a.idle:
            break
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() != KafkaError._PARTITION_EOF:
                print(f"kafka-consume: {m.error()}", file=sys.stderr)
            continue
        # A rebalance may hand a partition back from its start: each offset once.
        where = (m.partition(), m.offset())
        if where in seen:
            continue
        seen.add(where)
        sensor = dict(m.headers() or []).get("sensor", b"").decode()
        key = (m.key() or b"").decode(errors="replace")
        value = m.value().decode(errors="replace")
        print(f"{sensor}\t{key}\t{value}")
        n += 1
        last = time.monotonic()
    c.close()
    print(f"kafka-consume: {n} messages read", file=sys.stderr)


if __name__ == "__main__":
    main()
