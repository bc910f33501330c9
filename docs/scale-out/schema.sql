-- The table nfacctd.conf writes: one row per flow record from each sensor.
-- psql -d zcap -f schema.sql
CREATE TABLE flows (
    peer_ip_src inet NOT NULL DEFAULT '0.0.0.0',       -- the sensor's address
    export_proto_sysid bigint NOT NULL DEFAULT 0,      -- its observation domain (--ipfix-domain)
    ip_src inet NOT NULL DEFAULT '0.0.0.0',            -- the initiator (first packet's sender)
    ip_dst inet NOT NULL DEFAULT '0.0.0.0',
    port_src integer NOT NULL DEFAULT 0,
    port_dst integer NOT NULL DEFAULT 0,
    ip_proto smallint NOT NULL DEFAULT 0,
    timestamp_end timestamp without time zone NOT NULL DEFAULT '0001-01-01 00:00:00',
    timestamp_end_residual integer NOT NULL DEFAULT 0,
    rev_packets bigint NOT NULL DEFAULT 0,             -- responder -> initiator
    rev_bytes bigint NOT NULL DEFAULT 0,
    server_name text NOT NULL DEFAULT '',              -- TLS/QUIC server name (zcap --names)
    ja4 text NOT NULL DEFAULT '',                      -- the ClientHello's JA4
    dns_query_name text NOT NULL DEFAULT '',           -- the DNS question's name
    http_host text NOT NULL DEFAULT '',                -- the HTTP request's Host
    packets bigint NOT NULL,                           -- initiator -> responder
    bytes bigint NOT NULL,
    flows bigint NOT NULL DEFAULT 0,
    stamp_inserted timestamp without time zone NOT NULL DEFAULT '0001-01-01 00:00:00',
    stamp_updated timestamp without time zone,
    PRIMARY KEY (peer_ip_src, export_proto_sysid, ip_src, ip_dst, port_src, port_dst, ip_proto,
                 timestamp_end, timestamp_end_residual, rev_packets, rev_bytes, stamp_inserted)
);

-- Per flow and sensor, both directions:
--   SELECT host(peer_ip_src) AS sensor, export_proto_sysid AS domain,
--          host(ip_src), port_src, host(ip_dst), port_dst, ip_proto,
--          sum(packets) AS packets, sum(bytes) AS bytes,
--          sum(rev_packets) AS rev_packets, sum(rev_bytes) AS rev_bytes
--   FROM flows GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- The flows' names (zcap --names; empty strings where a flow has none):
--   SELECT host(ip_src), port_src, host(ip_dst), port_dst, ip_proto, server_name, ja4,
--          dns_query_name, http_host
--   FROM flows WHERE server_name <> '' OR dns_query_name <> '' OR http_host <> '';
--
-- nfacctd writes strings into its SQL unescaped (see nfacctd.conf): the role it uses needs
-- no more than
--   GRANT INSERT, UPDATE, SELECT ON flows TO pmacct;
