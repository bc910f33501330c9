#!/usr/bin/env python3
"""zcap's flows stored from Kafka in chDB (ClickHouse embedded), with the tables of
docs/scale-out/clickhouse.sql, until a number of records is there; then the answers to
docs/scale-out/queries.sql, printed as one JSON object on standard output:

    {"records": N, "rollup_records": [N_1m, N_1h], "queries": {"name": [rows...], ...}}

It consumes the topic while it waits (the Kafka engine's consumer runs in the session).

With --format goflow2 the topic holds goflow2 messages (`zcap --kafka-format goflow2`), read
with docs/scale-out/goflow2.sql (and flow.proto) in place of clickhouse.sql's JSON queue:
N counts messages (one a direction of a flow).

usage: chdb-store.py --brokers HOST:PORT --topic T --records N [--group G] [--timeout S]
                     [--host ADDR] [--minutes M] [--dir DIR] [--format json|goflow2]
                     [--rows]

--rows adds "rows": every row of zcap.flows (sensor, src, dst, sport, dport, proto, the
counts, sampling, community_id), for a test to compare record by record.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import chdb.session

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "scale-out")


def statements(text):
    """The SQL statements of `text`, comments dropped."""
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def named_queries(text):
    """(name, statement) for each `-- name: X` comment and the statement after it."""
    out, name, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("-- name:"):
            name, lines = line.split(":", 1)[1].strip(), []
        elif name and not line.lstrip().startswith("--"):
            lines.append(line)
            if line.rstrip().endswith(";"):
                out.append((name, "\n".join(lines).rstrip().rstrip(";")))
                name = None
    return out


def scalar(session, sql):
    return int(session.query(sql, "CSV").bytes().decode().strip() or 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--brokers", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--group", default="zcap-clickhouse")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--host", default="198.18.0.1")
    p.add_argument("--minutes", type=int, default=60)
    p.add_argument("--dir")
    p.add_argument("--format", choices=["json", "goflow2"], default="json")
    p.add_argument("--rows", action="store_true")
    a = p.parse_args()
    path = os.path.abspath(a.dir or tempfile.mkdtemp(prefix="zcrx-chdb-"))
    # The schema of goflow2's messages where chDB looks for format schemas: its working
    # directory (a server: its format_schemas directory).
    os.makedirs(path, exist_ok=True)
    shutil.copy(os.path.join(DOCS, "flow.proto"), path)
    os.chdir(path)
    session = chdb.session.Session(path)
    with open(os.path.join(DOCS, "clickhouse.sql")) as f:
        sql = f.read()
    if a.format == "goflow2":
        with open(os.path.join(DOCS, "goflow2.sql")) as f:
            sql += f.read()
    for key, value in (("{brokers}", a.brokers), ("{topic}", a.topic), ("{group}", a.group)):
        sql = sql.replace(key, value)
    for statement in statements(sql):
        # One reader of the topic: goflow2's queue in place of the JSON one.
        if a.format == "goflow2" and ("zcap.flows_queue" in statement):
            continue
        session.query(statement)
    deadline = time.monotonic() + a.timeout
    counts = lambda: [
        scalar(session, "SELECT count() FROM zcap.flows"),
        scalar(session, "SELECT sum(records) FROM zcap.flows_1m"),
        scalar(session, "SELECT sum(records) FROM zcap.flows_1h"),
    ]
    seen = counts()
    while min(seen) < a.records and time.monotonic() < deadline:
        time.sleep(1)
        seen = counts()
    with open(os.path.join(DOCS, "queries.sql")) as f:
        queries = f.read().replace("{host}", a.host).replace("{minutes}", str(a.minutes))
    answers = {}
    for name, q in named_queries(queries):
        text = session.query(q, "JSON").bytes().decode()
        answers[name] = json.loads(text)["data"] if text.strip() else []
    out = {"records": seen[0], "rollup_records": seen[1:], "queries": answers}
    if a.rows:
        text = session.query(
            "SELECT sensor, toString(src) AS src, toString(dst) AS dst, sport, dport, proto,"
            " packets_out, bytes_out, packets_in, bytes_in, sampling, community_id"
            " FROM zcap.flows ORDER BY src, dst, sport, dport",
            "JSON",
        ).bytes().decode()
        out["rows"] = json.loads(text)["data"] if text.strip() else []
    json.dump(out, sys.stdout)
    print()
    session.close()


if __name__ == "__main__":
    main()
