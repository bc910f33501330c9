-- The questions operators ask first, over docs/scale-out/clickhouse.sql's tables. Each
-- query is named by the comment line before it (`-- name: ...`); {host} and {minutes} are
-- replaced by the caller (zcap/tests/scale_out_clickhouse.rs runs every one). Addresses are
-- IPv6 columns; an IPv4 one is shown without its ::ffff: prefix.

-- name: top_talkers
-- The ten hosts that sent the most bytes in the last {minutes} minutes, every sensor.
SELECT replaceRegexpOne(toString(src), '^::ffff:', '') AS host, sum(bytes) AS bytes, sum(packets) AS packets
FROM zcap.flows_1m
WHERE minute >= toStartOfMinute(now()) - INTERVAL {minutes} MINUTE
GROUP BY host
ORDER BY bytes DESC, host
LIMIT 10;

-- name: bytes_per_minute_by_server_name
-- Bytes a minute per server name (TLS SNI, QUIC), or per server port where none was read.
SELECT minute,
       if(server_name != '', server_name, concat('port ', toString(dport))) AS server,
       sum(bytes) AS bytes
FROM zcap.flows_1m
WHERE minute >= toStartOfMinute(now()) - INTERVAL {minutes} MINUTE
GROUP BY minute, server
ORDER BY minute, bytes DESC, server;

-- name: conversations_of_host
-- A host's conversations: whom it talked to, on which protocol and port, how much, from
-- which sensors.
SELECT replaceRegexpOne(toString(if(src = toIPv6('{host}'), dst, src)), '^::ffff:', '') AS peer,
       proto,
       if(src = toIPv6('{host}'), dport, sport) AS port,
       sum(packets_out + packets_in) AS packets,
       sum(bytes_out + bytes_in) AS bytes,
       groupUniqArray(sensor) AS sensors
FROM zcap.flows
WHERE src = toIPv6('{host}') OR dst = toIPv6('{host}')
GROUP BY peer, proto, port
ORDER BY bytes DESC, peer, port;

-- name: per_sensor
-- What each sensor sent in: records, flows, packets and bytes (scaled).
SELECT sensor,
       count() AS records,
       uniqExact(community_id) AS flows,
       sum(packets_out + packets_in) AS packets,
       sum(bytes_out + bytes_in) AS bytes
FROM zcap.flows
GROUP BY sensor
ORDER BY sensor;
