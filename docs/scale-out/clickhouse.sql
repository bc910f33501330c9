-- zcap's flows in ClickHouse, from Kafka: one `zcap --flows --json` object a message (the
-- record as zcap prints it), the sensor's name in the message header `sensor`, keyed by the
-- flow's Community ID (a flow's records share a partition). Written for ClickHouse 25.8;
-- docs/scale-out/clickhouse-setup.sh applies it to a server, zcap/tests/scale_out_clickhouse.rs
-- to chDB (ClickHouse embedded). {brokers}, {topic} and {group} are replaced by the script.
--
-- Tables, as akvorado keeps its flows: every record for 30 days (`flows`), per-minute
-- sums for 7 days (`flows_1m`) and per-hour sums for a year (`flows_1h`). Counts are scaled
-- by the record's sampling interval (`--sample N`: the record counts the packets kept).

CREATE DATABASE IF NOT EXISTS zcap;

-- The topic as a table: reading it consumes (the materialized view below does).
CREATE TABLE IF NOT EXISTS zcap.flows_queue
(
    src String,
    sport UInt16,
    dst String,
    dport UInt16,
    proto UInt8,
    vlan Nullable(UInt16),
    packets Array(UInt64),
    bytes Array(UInt64),
    first_ns UInt64,
    last_ns UInt64,
    tcp_flags Array(UInt8),
    `end` String,
    community_id String,
    conn_state Nullable(String),
    history Nullable(String),
    -- Absent without --sample (0 here): one packet in one.
    sampling UInt32,
    -- Absent without --names, or when not found.
    server_name String,
    dns_query String,
    http_host String
)
ENGINE = Kafka
SETTINGS
    kafka_broker_list = '{brokers}',
    kafka_topic_list = '{topic}',
    kafka_group_name = '{group}',
    kafka_format = 'JSONEachRow',
    -- A message that is not a flow object is skipped (counted in system.kafka_consumers),
    -- not a stop of the whole topic.
    kafka_skip_broken_messages = 1000;

-- Every record, its counts scaled back, for 30 days.
CREATE TABLE IF NOT EXISTS zcap.flows
(
    sensor LowCardinality(String),
    first DateTime64(3),
    last DateTime64(3),
    src IPv6,
    dst IPv6,
    sport UInt16,
    dport UInt16,
    proto UInt8,
    vlan UInt16,
    -- Initiator to responder, and back.
    packets_out UInt64,
    bytes_out UInt64,
    packets_in UInt64,
    bytes_in UInt64,
    sampling UInt32,
    end_reason LowCardinality(String),
    community_id String,
    conn_state LowCardinality(String),
    history String,
    server_name String,
    dns_query String,
    http_host String
)
ENGINE = MergeTree
PARTITION BY toDate(last)
ORDER BY (sensor, last, src, dst)
TTL toDateTime(last) + INTERVAL 30 DAY;

-- The queue's columns renamed first (q_*): an alias never names the column it is made of.
CREATE MATERIALIZED VIEW IF NOT EXISTS zcap.flows_from_kafka TO zcap.flows AS
SELECT
    sensor,
    fromUnixTimestamp64Nano(toInt64(q_first)) AS first,
    fromUnixTimestamp64Nano(toInt64(q_last)) AS last,
    toIPv6(q_src) AS src,
    toIPv6(q_dst) AS dst,
    q_sport AS sport,
    q_dport AS dport,
    q_proto AS proto,
    ifNull(q_vlan, 0) AS vlan,
    scale AS sampling,
    q_packets[1] * scale AS packets_out,
    q_bytes[1] * scale AS bytes_out,
    q_packets[2] * scale AS packets_in,
    q_bytes[2] * scale AS bytes_in,
    q_end AS end_reason,
    q_community_id AS community_id,
    ifNull(q_conn_state, '') AS conn_state,
    ifNull(q_history, '') AS history,
    q_server_name AS server_name,
    q_dns_query AS dns_query,
    q_http_host AS http_host
FROM
(
    SELECT
        arrayElement(_headers.value, indexOf(_headers.name, 'sensor')) AS sensor,
        greatest(sampling, 1) AS scale,
        first_ns AS q_first,
        last_ns AS q_last,
        src AS q_src,
        dst AS q_dst,
        sport AS q_sport,
        dport AS q_dport,
        proto AS q_proto,
        vlan AS q_vlan,
        packets AS q_packets,
        bytes AS q_bytes,
        `end` AS q_end,
        community_id AS q_community_id,
        conn_state AS q_conn_state,
        history AS q_history,
        server_name AS q_server_name,
        dns_query AS q_dns_query,
        http_host AS q_http_host
    FROM zcap.flows_queue
);

-- Per minute and per hour: traffic by sensor, hosts, protocol, server port and name.
CREATE TABLE IF NOT EXISTS zcap.flows_1m
(
    sensor LowCardinality(String),
    minute DateTime,
    src IPv6,
    dst IPv6,
    proto UInt8,
    dport UInt16,
    server_name String,
    packets UInt64,
    bytes UInt64,
    records UInt64
)
ENGINE = SummingMergeTree((packets, bytes, records))
PARTITION BY toDate(minute)
ORDER BY (sensor, minute, src, dst, proto, dport, server_name)
TTL minute + INTERVAL 7 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS zcap.flows_1m_from_flows TO zcap.flows_1m AS
SELECT
    sensor,
    toStartOfMinute(last) AS minute,
    src,
    dst,
    proto,
    dport,
    server_name,
    packets_out + packets_in AS packets,
    bytes_out + bytes_in AS bytes,
    1 AS records
FROM zcap.flows;

CREATE TABLE IF NOT EXISTS zcap.flows_1h
(
    sensor LowCardinality(String),
    hour DateTime,
    src IPv6,
    dst IPv6,
    proto UInt8,
    dport UInt16,
    server_name String,
    packets UInt64,
    bytes UInt64,
    records UInt64
)
ENGINE = SummingMergeTree((packets, bytes, records))
PARTITION BY toYYYYMM(hour)
ORDER BY (sensor, hour, src, dst, proto, dport, server_name)
TTL hour + INTERVAL 365 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS zcap.flows_1h_from_flows TO zcap.flows_1h AS
SELECT
    sensor,
    toStartOfHour(last) AS hour,
    src,
    dst,
    proto,
    dport,
    server_name,
    packets_out + packets_in AS packets,
    bytes_out + bytes_in AS bytes,
    1 AS records
FROM zcap.flows;
