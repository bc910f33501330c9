#!/usr/bin/env bash
# Sets up zcap's flow store in a ClickHouse server (25.x; the SQL needs TTL, DateTime64,
# IPv6 columns and Kafka headers, which Debian's clickhouse-server 18.16 lacks): the Kafka
# table that reads the topic, the table of every record, the per-minute and per-hour
# rollups and the views that fill them (docs/scale-out/clickhouse.sql). Then ask it
# docs/scale-out/queries.sql's questions.
#
#   clickhouse-setup.sh BROKERS [TOPIC [GROUP [GOFLOW2_TOPIC]]] [-- clickhouse-client options]
#
#   BROKERS        the Kafka bootstrap servers, HOST:PORT[,HOST:PORT...]
#   TOPIC          where the sensors publish JSON records (default zcap-flows)
#   GROUP          ClickHouse's consumer group (default zcap-clickhouse)
#   GOFLOW2_TOPIC  also read this topic of goflow2 messages (`zcap --kafka-format goflow2`)
#                  into the same tables (goflow2.sql; copy flow.proto into the server's
#                  format_schemas directory first)
#
# Example: clickhouse-setup.sh kafka1:9092,kafka2:9092 zcap-flows -- --host ch1 --user admin
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
brokers=$1; shift
topic=zcap-flows; group=zcap-clickhouse; goflow2=
if [ $# -gt 0 ] && [ "$1" != "--" ]; then topic=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then group=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then goflow2=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
for v in "$brokers" "$topic" "$group" "$goflow2"; do
    case $v in *"'"*|*'\'*|*'|'*|*'&'*) echo "clickhouse-setup.sh: no quote, backslash, | or & in $v" >&2; exit 2;; esac
done
sed -e "s|{brokers}|$brokers|g" -e "s|{topic}|$topic|g" -e "s|{group}|$group|g" \
    "$here/clickhouse.sql" | clickhouse-client --multiquery "$@"
echo "clickhouse-setup.sh: zcap's tables read $topic from $brokers (group $group)" >&2
if [ -n "$goflow2" ]; then
    sed -e "s|{brokers}|$brokers|g" -e "s|{topic}|$goflow2|g" -e "s|{group}|$group-goflow2|g" \
        "$here/goflow2.sql" | clickhouse-client --multiquery "$@"
    echo "clickhouse-setup.sh: and goflow2 messages from $goflow2 (group $group-goflow2)" >&2
fi
