-- zcap's flows in ClickHouse from a topic of goflow2 messages (`zcap --kafka-format
-- goflow2`: one direction of a flow a message, goflow2's length-prefixed FlowMessage), into
-- the same tables as the JSON records (docs/scale-out/clickhouse.sql, applied first): each
-- direction a row, its packets and bytes counted out (from its sender), none in. The
-- schema file docs/scale-out/flow.proto goes in the server's format_schemas directory.
-- {brokers}, {topic} and {group} are replaced by the script.

CREATE TABLE IF NOT EXISTS zcap.goflow2_queue
(
    type Int32,
    sampling_rate UInt64,
    sequence_num UInt32,
    src_addr String,
    dst_addr String,
    bytes UInt64,
    packets UInt64,
    sampler_address String,
    in_if UInt32,
    out_if UInt32,
    proto UInt32,
    src_port UInt32,
    dst_port UInt32,
    tcp_flags UInt32,
    vlan_id UInt32,
    etype UInt32,
    icmp_type UInt32,
    icmp_code UInt32,
    observation_domain_id UInt32,
    time_received_ns UInt64,
    time_flow_start_ns UInt64,
    time_flow_end_ns UInt64
)
ENGINE = Kafka
SETTINGS
    kafka_broker_list = '{brokers}',
    kafka_topic_list = '{topic}',
    kafka_group_name = '{group}',
    kafka_format = 'Protobuf',
    kafka_schema = 'flow.proto:FlowMessage',
    kafka_skip_broken_messages = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS zcap.flows_from_goflow2 TO zcap.flows AS
SELECT
    sensor,
    fromUnixTimestamp64Nano(toInt64(q_start)) AS first,
    fromUnixTimestamp64Nano(toInt64(q_end)) AS last,
    -- IPv4 as IPv4-mapped IPv6, as the JSON records' addresses are stored; an address of
    -- any other length (not zcap's) as ::, not an error that would stop the topic.
    multiIf(length(q_src) = 4, toIPv6(IPv4NumToString(reinterpretAsUInt32(reverse(q_src)))),
            length(q_src) = 16, toIPv6(IPv6NumToString(toFixedString(q_src, 16))),
            toIPv6('::')) AS src,
    multiIf(length(q_dst) = 4, toIPv6(IPv4NumToString(reinterpretAsUInt32(reverse(q_dst)))),
            length(q_dst) = 16, toIPv6(IPv6NumToString(toFixedString(q_dst, 16))),
            toIPv6('::')) AS dst,
    -- ICMP: its type and code where the JSON records have them.
    toUInt16(if(q_proto IN (1, 58), q_icmp_type, q_sport)) AS sport,
    toUInt16(if(q_proto IN (1, 58), q_icmp_code, q_dport)) AS dport,
    toUInt8(q_proto) AS proto,
    toUInt16(q_vlan) AS vlan,
    toUInt32(scale) AS sampling,
    q_packets * scale AS packets_out,
    q_bytes * scale AS bytes_out,
    0 AS packets_in,
    0 AS bytes_in,
    '' AS end_reason,
    -- The message's key: the flow's Community ID, both directions alike.
    q_key AS community_id,
    '' AS conn_state,
    '' AS history,
    '' AS server_name,
    '' AS dns_query,
    '' AS http_host
FROM
(
    SELECT
        arrayElement(_headers.value, indexOf(_headers.name, 'sensor')) AS sensor,
        -- 0 is goflow2's "not known": counted as one in one.
        greatest(sampling_rate, 1) AS scale,
        time_flow_start_ns AS q_start,
        time_flow_end_ns AS q_end,
        src_addr AS q_src,
        dst_addr AS q_dst,
        src_port AS q_sport,
        dst_port AS q_dport,
        icmp_type AS q_icmp_type,
        icmp_code AS q_icmp_code,
        proto AS q_proto,
        vlan_id AS q_vlan,
        packets AS q_packets,
        bytes AS q_bytes,
        _key AS q_key
    FROM zcap.goflow2_queue
);
