//! zcap's integration tests, one binary (one link, shared helpers in `common`): each module
//! tests one face of the real `zcap` binary, most of them against the tool a user would
//! compare it with (tcpdump, tshark, nfdump, promtool, systemd-analyze). The privileged ones
//! (AF_PACKET, network namespaces) need root: elsewhere they print `SKIPPED … why`, and with
//! `CI=true` a skip is a failure.

mod common;

mod boundaries;
mod collectors;
mod community_id;
mod compress;
mod conn_state;
mod dns_lines;
mod end_to_end;
mod endpoints;
mod icmp6_lines;
mod ipfix;
mod json;
#[cfg(feature = "kafka")]
mod kafka;
#[cfg(feature = "kafka")]
mod kafka_faults;
mod kernel_flows;
mod l2_lines;
mod links_lines;
mod live_flags;
mod long_runs;
mod man_completions;
mod metrics;
mod mutants;
mod names;
mod pcap_over_ip;
mod print_flags;
mod privileges;
mod privsep;
mod rotate;
mod scale_out;
mod scale_out_clickhouse;
mod service_unit;
mod soak;
mod tcp_lines;
mod tcpdump_flags;
mod tcpdump_lines;
mod top;
mod udp_apps_lines;
