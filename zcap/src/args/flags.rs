//! zcap's command line as clap parses it (tcpdump's flags where they exist): the low-level
//! arguments, private to `args`, which validates them into a [`super::Config`].

use std::ops::RangeInclusive;
use std::path::PathBuf;

use clap::builder::{RangedU64ValueParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{value_parser, CommandFactory, FromArgMatches, Parser};
use zcrx_flowcache::names::{FLOW_NAMES_HEAP_BOUND, FLOW_NAMES_INLINE_BOUND};
use zcrx_flowcache::FlowTableConfig;

/// Longest IPFIX template refresh interval accepted (a day), in seconds and messages.
pub(super) const MAX_REFRESH_S: u64 = 86_400;
pub(super) const MAX_REFRESH_MESSAGES: u32 = 1_000_000;

/// zcap: a tcpdump-compatible sniffer that writes pcap/pcapng straight from a zero-copy
/// TPACKET_V3 ring, tracks flows and exports them as IPFIX.
#[derive(Parser, Debug)]
#[command(
    name = "zcap",
    about = "a tcpdump-compatible zero-copy sniffer (TPACKET_V3 ring, pcap/pcapng, flows, IPFIX)",
    long_about = "zcap: a tcpdump-compatible zero-copy sniffer (TPACKET_V3 ring, pcap/pcapng, flows, IPFIX)\n\nzcap captures packets from a network interface (-i) through an mmap'd TPACKET_V3 \
ring and writes them to pcap or pcapng (-w) straight from the ring, or prints them as tcpdump \
does; it reads capture files (-r), rotates output files (-C, -G, -W, -z), compiles tcpdump \
filter expressions with libpcap, tracks flows (--flows) and exports them as IPFIX (--ipfix). \
Live capture needs CAP_NET_RAW (run it as root; -Z drops privileges after the rings are \
open). The manual with examples: docs/zcap.md in the zcrx sources.",
    after_long_help = crate::print::DECODES,
    disable_help_flag = true
)]
pub(super) struct Args {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub(super) help: Option<bool>,
    /// Capture live on this interface.
    #[arg(short = 'i', value_name = "IFACE", help_heading = "Capture")]
    pub(super) iface: Option<String>,
    /// Read packets from a pcap or pcapng file (`-`: standard input), plain or compressed
    /// with gzip, zstd or lz4 (known by its first bytes, whatever its name).
    #[arg(short = 'r', value_name = "FILE", help_heading = "Capture")]
    pub(super) read: Option<PathBuf>,
    /// Write packets to FILE (`-` for standard output) instead of printing them.
    #[arg(short = 'w', value_name = "FILE", help_heading = "Output")]
    pub(super) write: Option<String>,
    /// Write pcapng instead of pcap.
    #[arg(long, help_heading = "Output")]
    pub(super) pcapng: bool,
    /// Serve the packets as they are captured to every client that connects to ADDR:PORT
    /// (PORT alone: 127.0.0.1:PORT), as PCAP-over-IP (Arkime, Malcolm and NetworkMiner read
    /// it; or `nc 127.0.0.1 PORT | tcpdump -r -`): a pcap header, then the records, beside
    /// any -w or printing. A client more than 16 MiB behind is cut off and counted; it
    /// never slows the capture. unix:PATH serves it on a UNIX socket only its owner (the
    /// user zcap starts as) may connect to. Over TCP, on loopback too, give it client
    /// certificates (--pcap-over-ip-client-ca, with --pcap-over-ip-cert and
    /// --pcap-over-ip-key): without them zcap warns that anyone who connects gets every
    /// packet.
    #[arg(long, value_name = "[ADDR:]PORT|unix:PATH", help_heading = "Endpoints")]
    pub(super) pcap_over_ip: Option<String>,
    /// Serve PCAP-over-IP over TLS with this certificate chain (PEM, the server's
    /// certificate first); with --pcap-over-ip-key. Read it with `openssl s_client -quiet
    /// -connect ADDR:PORT | tcpdump -r -`.
    #[arg(long, value_name = "FILE", help_heading = "Endpoints")]
    pub(super) pcap_over_ip_cert: Option<PathBuf>,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of --pcap-over-ip-cert.
    #[arg(long, value_name = "FILE", help_heading = "Endpoints")]
    pub(super) pcap_over_ip_key: Option<PathBuf>,
    /// With --pcap-over-ip-cert: mutual TLS, every client must show a certificate that
    /// chains to one of these CA certificates (PEM); a client without one fails the
    /// handshake and is counted.
    #[arg(long, value_name = "FILE", help_heading = "Endpoints")]
    pub(super) pcap_over_ip_client_ca: Option<PathBuf>,
    /// Serve PCAP-over-IP only to clients from these networks (IPv4 or IPv6, a bare address
    /// is one host; repeat the flag or separate with commas): a connection from elsewhere
    /// is closed at accept and counted.
    #[arg(
        long,
        value_name = "CIDR[,CIDR...]",
        value_delimiter = ',',
        help_heading = "Endpoints"
    )]
    pub(super) pcap_over_ip_allow: Vec<String>,
    /// The most PCAP-over-IP connections at once (TLS handshakes under way included); more
    /// are closed at accept and counted. Each client may hold up to 128 MiB of packets.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = "Endpoints")]
    pub(super) pcap_over_ip_max_connections: u32,
    /// Serve the capture's counters at http://ADDR:PORT/metrics (PORT alone: 127.0.0.1:PORT)
    /// for Prometheus (OpenMetrics text): packets received, captured and dropped (kernel
    /// and zcap), ring freezes and blocks held, per shard and in total; flows; IPFIX; bytes
    /// and files written, -z hooks; the endpoints' clients; the start time. A port in use is
    /// tried again every second, the capture going on without metrics meanwhile. Live
    /// captures (-i) in the default mode. Beyond loopback give it --web-config (TLS,
    /// passwords): without TLS zcap warns that anyone who connects reads the counters.
    #[arg(long, value_name = "[ADDR:]PORT", help_heading = "Endpoints")]
    pub(super) metrics: Option<String>,
    /// TLS and basic authentication for --metrics from FILE, in the Prometheus exporter
    /// toolkit's web configuration format (as node_exporter's --web.config.file; `promtool
    /// check web-config FILE` checks it): tls_server_config (cert_file, key_file,
    /// client_auth_type, client_ca_file, min_version, max_version) and basic_auth_users
    /// (user: bcrypt hash). Relative paths are the file's directory's. Read once, at start.
    #[arg(long, value_name = "FILE", help_heading = "Endpoints")]
    pub(super) web_config: Option<PathBuf>,
    /// The most --metrics connections at once (a thread each); more are closed at accept
    /// and counted, unless an older one has not yet shown its certificate, request or
    /// password: that one is closed instead. Each gets 1 s for its first byte, 5 s for its
    /// TLS handshake and request head (8 KiB at most), 10 s for the answer.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Endpoints")]
    pub(super) metrics_max_connections: u32,
    /// Networks --metrics clients may connect from (CIDR, or an address alone: one host;
    /// repeat the flag or separate with commas): a connection from elsewhere is closed at
    /// accept and counted, before any TLS or password.
    #[arg(
        long,
        value_name = "CIDR[,CIDR...]",
        value_delimiter = ',',
        help_heading = "Endpoints"
    )]
    pub(super) metrics_allow: Vec<String>,
    /// Compress the -w files as they are written: gzip, zstd or lz4, with :LEVEL for gzip
    /// (0-9, default 6) and zstd (1-19, default 3). Without it a -w name ending in .gz, .zst
    /// or .lz4 asks for that compressor. A thread of its own compresses each file; the capture
    /// never waits for it, and what it cannot take in time (32 MiB queued) is dropped and
    /// counted. -C counts the bytes before compression: the file's compressed size is known
    /// only once that thread has compressed it, and the capture does not wait for it.
    #[arg(long, value_name = "ALGO[:LEVEL]", help_heading = "Output")]
    pub(super) compress: Option<String>,
    /// With -w: start a new file when the current one is larger than SIZE millions of bytes
    /// (or SIZE with k, m, g: KiB, MiB, GiB): FILE, FILE1, FILE2, ...
    #[arg(short = 'C', value_name = "SIZE", help_heading = "Output")]
    pub(super) file_size: Option<String>,
    /// With -C: keep COUNT files, FILE0 .. FILE{COUNT-1}, overwriting the oldest (a ring).
    /// With -G alone: stop after COUNT files.
    #[arg(short = 'W', value_name = "COUNT", value_parser = within(value_parser!(u32), 1..=u32::MAX, |n| format!("-W {n}: the number of output files must be at least 1")), help_heading = "Output")]
    pub(super) file_count: Option<u32>,
    /// With -w: start a new file every SECONDS (also on an idle link), the -w name run through
    /// strftime(3), e.g. -w 'cap-%Y%m%d-%H%M%S.pcap'.
    #[arg(short = 'G', value_name = "SECONDS", value_parser = within(value_parser!(u64), 1..=u64::MAX, |n| format!("-G {n}: the number of seconds must be at least 1")), help_heading = "Output")]
    pub(super) rotate_seconds: Option<u64>,
    /// Run COMMAND FILE on each file closed by -C or -G (e.g. -z gzip).
    #[arg(short = 'z', value_name = "COMMAND", help_heading = "Output")]
    pub(super) post_rotate: Option<String>,
    /// Stop after N packets.
    #[arg(short = 'c', value_name = "N", value_parser = within(value_parser!(u64), 1..=u64::MAX, |n| format!("-c {n}: the count must be at least 1")), help_heading = "Capture")]
    pub(super) count: Option<u64>,
    /// Bytes kept per packet (0 = 262144, as tcpdump).
    #[arg(
        short = 's',
        value_name = "SNAPLEN",
        default_value_t = 262_144,
        help_heading = "Capture"
    )]
    pub(super) snaplen: u32,
    /// Ring size in KiB (per shard).
    #[arg(short = 'B', value_name = "KiB", help_heading = "Ring and pipeline")]
    pub(super) buffer_kib: Option<u64>,
    /// Block retire timeout in ms: how long packets may wait in a half-filled block.
    /// Default 10 when packets are printed or written packet by packet (-U), 100 when they
    /// go to a file (-w, buffered anyway) or only into flows: a wake-up per block costs more
    /// CPU than the packets of a quiet link.
    #[arg(long, value_name = "MS", help_heading = "Ring and pipeline")]
    pub(super) block_timeout: Option<u64>,
    /// Direction: in (received only: the kernel does not even queue what this host sends),
    /// out (sent only), inout (both, the default).
    #[arg(
        short = 'Q',
        long = "direction",
        value_name = "in|out|inout",
        help_heading = "Capture"
    )]
    pub(super) direction: Option<String>,
    /// Deliver each packet as it arrives (a TPACKET_V2 ring with a wake-up per packet) instead
    /// of when a ring block fills or its timeout retires it. No flow stage: not with
    /// --flows, --ipfix or --shards.
    #[arg(long, help_heading = "Capture")]
    pub(super) immediate_mode: bool,
    /// With --immediate-mode: at the end, print the percentiles of the time from the kernel's
    /// receive time stamp to zcap's handling of each packet (a clock read per packet).
    #[arg(long, help_heading = "Capture")]
    pub(super) handler_latency: bool,
    /// Run zcap's threads under SCHED_FIFO at PRIO (1-99), as netsniff-ng's -H: a woken zcap
    /// then runs at once instead of waiting for the CPU's ordinary tasks (the tail of
    /// --immediate-mode latency). Needs CAP_SYS_NICE; a flood can take a whole CPU.
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99), help_heading = "Capture")]
    pub(super) rt_priority: Option<i32>,
    /// While zcap runs, keep every CPU out of idle states whose exit takes longer than US
    /// microseconds (a PM QoS request on /dev/cpu_dma_latency, as cyclictest holds). 0: idle
    /// CPUs poll instead of halting, so an --immediate-mode wake-up does not wait for a
    /// halted CPU (on a VM, an exit to the hypervisor); costs power on every CPU. Needs root.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(0..=2_000_000_000), help_heading = "Capture")]
    pub(super) cpu_dma_latency: Option<u32>,
    /// Do not put the interface into promiscuous mode.
    #[arg(short = 'p', help_heading = "Capture")]
    pub(super) no_promisc: bool,
    /// Fanout shards: one ring, stage and consumer per shard (PACKET_FANOUT hash).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = within(RangedU64ValueParser::<usize>::new(), 1..=64, |n| format!("--shards {n}: must be 1..=64")),
        help_heading = "Ring and pipeline"
    )]
    pub(super) shards: usize,
    /// zerocopy | copy-libc | copy-erms | copy-avx2 | copy-avx512 | copy-nt | copy-auto
    #[arg(long, default_value = "zerocopy", help_heading = "Ring and pipeline")]
    pub(super) delivery: String,
    /// Drop privileges to USER once the rings are set up. Started as root without -Z,
    /// zcap becomes the user zcap (as Debian's tcpdump becomes tcpdump) if there is one;
    /// -Z root keeps root.
    #[arg(short = 'Z', value_name = "USER", help_heading = "Capture")]
    pub(super) user: Option<String>,
    /// Run without the sandbox zcap enters once set up (Landlock: the file system reduced
    /// to the -w directory; seccomp: only the system calls a running capture makes; no new
    /// privileges). Capabilities are dropped after set-up either way.
    #[arg(long, help_heading = "Capture")]
    pub(super) no_sandbox: bool,
    /// Testing the sandbox: once confined, try to create FILE and say on standard error
    /// whether it could.
    #[arg(long, value_name = "FILE", hide = true)]
    pub(super) sandbox_probe: Option<PathBuf>,
    /// Testing the sandbox: once confined, make the system calls a compromised parser
    /// would make and say on standard error how each ended.
    #[arg(long, hide = true)]
    pub(super) sandbox_attacks: bool,
    /// List interfaces and exit.
    #[arg(short = 'D', help_heading = "Capture")]
    pub(super) list: bool,
    /// Numeric output: no port, host or MAC maker names (without it, names come from
    /// /etc/services, /etc/hosts and tcpdump's OUI table; zcap never asks DNS).
    #[arg(short = 'n', help_heading = "Output")]
    pub(super) numeric: bool,
    /// Quick output, as tcpdump -q: less protocol detail (`tcp N`, `UDP, length N`, no
    /// application layer), and no status line.
    #[arg(short = 'q', help_heading = "Output")]
    pub(super) quiet: bool,
    /// Absolute TCP sequence numbers, not relative to each direction's first (and no
    /// conversation is kept for them).
    #[arg(
        short = 'S',
        long = "absolute-tcp-sequence-numbers",
        help_heading = "Output"
    )]
    pub(super) absolute: bool,
    /// Print only the number of packets captured (that passed the filter), on standard
    /// output, as tcpdump --count.
    #[arg(long = "count", help_heading = "Output")]
    pub(super) count_only: bool,
    /// Time stamps: -t none, -tt seconds since the epoch, -ttt delta since the previous
    /// packet, -tttt date and time, -ttttt delta since the first packet (UTC).
    #[arg(short = 't', action = clap::ArgAction::Count, help_heading = "Output")]
    pub(super) ts_format: u8,
    /// Time stamp precision: micro or nano.
    #[arg(long, value_name = "micro|nano", help_heading = "Output")]
    pub(super) time_stamp_precision: Option<String>,
    /// Same as --time-stamp-precision=micro.
    #[arg(long, help_heading = "Output")]
    pub(super) micro: bool,
    /// Same as --time-stamp-precision=nano.
    #[arg(long, help_heading = "Output")]
    pub(super) nano: bool,
    /// Packet-buffered output: with -w, each packet is written to the file as it is captured
    /// (a write per packet; with --immediate-mode, one write for the packets the ring had
    /// ready together); printed lines are written one by one, as with -l.
    #[arg(short = 'U', long = "packet-buffered", help_heading = "Output")]
    pub(super) packet_buffered: bool,
    /// Line-buffered standard output: each printed line written at once (by default a
    /// block's lines go out together as the block is read, and a file's in 64 KiB writes).
    #[arg(short = 'l', help_heading = "Output")]
    pub(super) line_buffered: bool,
    /// Print the link-level header: MAC addresses, ethertype, VLAN tags.
    #[arg(short = 'e', help_heading = "Output")]
    pub(super) link_header: bool,
    /// More detail: IP header fields (TTL, id, offset, flags, length) and checksum notes.
    #[arg(short = 'v', action = clap::ArgAction::Count, help_heading = "Output")]
    pub(super) verbose: u8,
    /// Hex dump of each packet from the network layer on (-xx: from the link layer).
    #[arg(short = 'x', action = clap::ArgAction::Count, help_heading = "Output")]
    pub(super) hex: u8,
    /// Hex and ASCII dump of each packet from the network layer on (-XX: from the link layer).
    #[arg(short = 'X', action = clap::ArgAction::Count, help_heading = "Output")]
    pub(super) hex_ascii: u8,
    /// Each packet as ASCII text, from the network layer on.
    #[arg(short = 'A', help_heading = "Output")]
    pub(super) ascii: bool,
    /// Put the packet number before each line.
    #[arg(short = '#', long = "number", help_heading = "Output")]
    pub(super) number: bool,
    /// Print the packets even while writing them with -w.
    #[arg(long, help_heading = "Output")]
    pub(super) print: bool,
    /// One JSON object per packet (or per flow with --flows).
    #[arg(long, help_heading = "Output")]
    pub(super) json: bool,
    /// Print a table of the run's flows at the end, sorted by bytes: one line per flow, its
    /// records (active-timeout reports, a flow seen again after a timeout) summed; at most
    /// 4 x --max-flows flows, the records of any further ones counted on standard error.
    #[arg(long, help_heading = "Flows and export")]
    pub(super) flows: bool,
    /// The Community ID seed (0..=65535) of the flows' `community_id` (--flows --json) and
    /// their IPFIX communityId element: the tools whose IDs must match use the same one.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        value_parser = within(value_parser!(u64), 0..=65_535, |n| format!("--community-id-seed {n}: the seed is 16 bits, 0..=65535"))
            // In range: the cast is exact.
            .map(|n| n as u16),
        help_heading = "Flows and export"
    )]
    pub(super) community_id_seed: u16,
    /// With --flows, also print the table every SECS seconds.
    #[arg(long, value_name = "SECS", value_parser = within(value_parser!(u64), 1..=u64::MAX, |n| format!("--flows-every {n}: give a number of seconds >= 1")), help_heading = "Flows and export")]
    pub(super) flows_every: Option<u64>,
    /// With --flows or --ipfix: count the flows in the kernel's receive path (an eBPF
    /// program at the interface's tcx ingress and egress, Linux 6.6+, or at its XDP hook:
    /// --flows-in-kernel-hook) instead of a ring: no packet crosses into user space. No
    /// packets to write or print, no filter, no --names; the flow map holds 2 x --max-flows
    /// entries (a flow's two directions), and packets of new flows it has no room for are
    /// counted, not tracked.
    #[arg(long, help_heading = "Flows and export")]
    pub(super) flows_in_kernel: bool,
    /// With --flows-in-kernel: where the program counts. tcx (the default): the interface's
    /// tcx hooks, on the skb, the directions -Q gives. xdp: its XDP hook, received frames
    /// only (-Q in; without -Q, in), before the kernel builds an skb: in the driver where it
    /// has XDP, else generic XDP. At xdp a VLAN tag the NIC stripped is not seen and only the
    /// first buffer of a multi-buffer frame is parsed; an interface takes one XDP program.
    #[arg(
        long,
        value_name = "tcx|xdp",
        value_parser = ["tcx", "xdp"],
        requires = "flows_in_kernel",
        help_heading = "Flows and export"
    )]
    pub(super) flows_in_kernel_hook: Option<String>,
    /// Read what each flow is from its first bytes (the help, with what a flow read holds at
    /// most, is [`names_help`]'s).
    #[arg(long, help_heading = "Flows and export", help = names_help())]
    pub(super) names: bool,
    /// With --names: DNS names as on the wire (their case can carry meaning: 0x20
    /// randomisation, data encoded in names), or lower-cased as Zeek's dns.log writes them.
    #[arg(
        long,
        value_enum,
        value_name = "CASE",
        default_value_t = NamesCase::Wire,
        help_heading = "Flows and export"
    )]
    pub(super) names_case: NamesCase,
    /// With --names: say on standard error, at the end, the names book's peak entries and
    /// heap bytes (for tests of its bound).
    #[arg(long, hide = true)]
    pub(super) names_stats: bool,
    /// Export flows as IPFIX over UDP to this collector: HOST:PORT, `[IPv6]:PORT`. (The help
    /// text is given apart: rustdoc would read its brackets as a link.)
    #[arg(
        long,
        value_name = "HOST:PORT",
        help_heading = "Flows and export",
        help = "Export flows as IPFIX (RFC 7011, biflows per RFC 5103) over UDP to this collector (e.g. nfcapd, pmacct, GoFlow2): HOST:PORT, [IPv6]:PORT"
    )]
    pub(super) ipfix: Option<String>,
    /// Write the IPFIX messages to FILE (RFC 5655: messages back to back), alone or beside
    /// --ipfix.
    #[arg(long, value_name = "FILE", help_heading = "Flows and export")]
    pub(super) ipfix_file: Option<String>,
    /// Largest IPFIX message, bytes (default: one datagram in a 1500-byte MTU over IPv6).
    #[arg(long, value_name = "BYTES", default_value_t = zcrx_flowcache::ipfix::DEFAULT_MESSAGE, help_heading = "Flows and export")]
    pub(super) ipfix_message_size: usize,
    /// Resend the IPFIX templates every SECS seconds (RFC 7011 §8.4).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60,
        value_parser = within(value_parser!(u64), 1..=MAX_REFRESH_S, |n| format!("--ipfix-template-refresh {n}: seconds must be 1..={MAX_REFRESH_S}")),
        help_heading = "Flows and export"
    )]
    pub(super) ipfix_template_refresh: u64,
    /// ... and every N messages.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        value_parser = within(value_parser!(u32), 1..=MAX_REFRESH_MESSAGES, |n| format!("--ipfix-template-every {n}: messages must be 1..={MAX_REFRESH_MESSAGES}")),
        help_heading = "Flows and export"
    )]
    pub(super) ipfix_template_every: u32,
    /// IPFIX observation domain id.
    #[arg(
        long,
        value_name = "ID",
        default_value_t = 0,
        help_heading = "Flows and export"
    )]
    pub(super) ipfix_domain: u32,
    /// Export a record per direction (RFC 5103's uniflows: the initiator's packets, then
    /// the responder's, each from its sender) instead of biflows, for collectors that read
    /// no reverse elements (GoFlow2, pmacct's nfacctd, akvorado before 2.0.1).
    #[arg(long, help_heading = "Flows and export")]
    pub(super) ipfix_uniflow: bool,
    /// The interface indexes IPFIX records carry (ingressInterface, egressInterface);
    /// default: the capture interface's index and 0 (none for -i any or -r without this
    /// flag).
    #[arg(long, value_name = "IN[:OUT]", help_heading = "Flows and export")]
    pub(super) ipfix_ifindex: Option<String>,
    /// The address IPFIX datagrams are sent from: collectors tell exporters apart by it
    /// (with --ipfix-domain for several on one address).
    #[arg(long, value_name = "ADDR", help_heading = "Flows and export")]
    pub(super) ipfix_source: Option<std::net::IpAddr>,
    /// Publish each flow record to Kafka (the --json object, keyed by Community ID) through
    /// these bootstrap servers: HOST:PORT[,HOST:PORT...].
    #[arg(long, value_name = "BROKERS", help_heading = "Flows and export")]
    pub(super) kafka: Option<String>,
    /// The topic --kafka publishes to.
    #[arg(
        long,
        value_name = "TOPIC",
        default_value = "zcap-flows",
        help_heading = "Flows and export"
    )]
    pub(super) kafka_topic: String,
    /// --kafka's compression: none, gzip, snappy, lz4, zstd.
    #[arg(long, value_name = "CODEC", default_value = "lz4", value_parser = ["none", "gzip", "snappy", "lz4", "zstd"], help_heading = "Flows and export")]
    pub(super) kafka_compression: String,
    /// The name --kafka's records carry in their `sensor` header (default: the host name).
    #[arg(long, value_name = "NAME", help_heading = "Flows and export")]
    pub(super) kafka_sensor: Option<String>,
    /// What each --kafka message holds: json (a flow record, the --json object) or goflow2
    /// (one direction of it, as goflow2's length-prefixed FlowMessage protobuf).
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value = "json",
        help_heading = "Flows and export"
    )]
    pub(super) kafka_format: crate::kafka::Format,
    /// librdkafka properties for --kafka, `key=value` a line: TLS (security.protocol=ssl,
    /// ssl.ca.location) and SASL (sasl.mechanisms, sasl.username, sasl.password).
    #[arg(long, value_name = "FILE", help_heading = "Flows and export")]
    pub(super) kafka_config: Option<std::path::PathBuf>,
    /// Keep one packet in N, chosen at random by the kernel before any is copied (live
    /// captures); files, flows and counts hold the packets kept, and IPFIX announces N so
    /// that collectors scale the counts back.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=(1 << 24)),
        help_heading = "Capture"
    )]
    pub(super) sample: Option<u32>,
    /// Report a flow that lasts longer than SECS every SECS seconds (its counts since the
    /// last report), as NetFlow/IPFIX exporters do; 0: one record per flow, at its end.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60,
        value_parser = within(value_parser!(u64), 0..=86_400, |n| format!("--active-timeout {n}: seconds must be 0 (off) ..= 86400")),
        help_heading = "Flows and export"
    )]
    pub(super) active_timeout: u64,
    /// Flows tracked at once, per shard (the help, with what a slot costs, is
    /// [`max_flows_help`]'s).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 65_536,
        value_parser = clap::value_parser!(u32).range(16..=(1 << 26)),
        help_heading = "Flows and export",
        help = max_flows_help()
    )]
    pub(super) max_flows: u32,
    /// A full-screen live view of the flows (as iftop or bandwhich): rates per direction
    /// over 2, 10 and 40 s, totals, names seen in the traffic, local processes; keys to
    /// sort, aggregate, filter and pause (`?` lists them). Standard output must be a
    /// terminal. With -r, the file's flows at its end. With -w, every packet is written too.
    #[arg(long, help_heading = "Live view")]
    pub(super) top: bool,
    /// --top's initial sort (10s by default): 2s, 10s, 40s (both directions), rx2s, rx10s,
    /// rx40s, tx2s, tx10s, tx40s (one direction: received or sent by the local end, else by
    /// the initiator), total, packets, age or name.
    #[arg(long, value_name = "KEY", help_heading = "Live view")]
    pub(super) top_sort: Option<String>,
    /// --top's initial rows (flow by default): flow, pair (host pair), host (remote host) or
    /// port (the responder's).
    #[arg(long, value_name = "BY", help_heading = "Live view")]
    pub(super) top_by: Option<String>,
    /// --top's refresh interval in seconds, 0.1 to 60 (1 by default).
    #[arg(long, value_name = "SECS", value_parser = within(|s: &str| s.parse::<f64>(), crate::top::INTERVAL_SECS, |n| format!("--top-interval {n}: seconds must be 0.1..=60")), help_heading = "Live view")]
    pub(super) top_interval: Option<f64>,
    /// Read the filter expression from FILE ('#' starts a comment; an expression on the
    /// command line is then ignored, as tcpdump does).
    #[arg(short = 'F', value_name = "FILE", help_heading = "Capture")]
    pub(super) filter_file: Option<PathBuf>,
    /// Filter expression (tcpdump syntax).
    #[arg(trailing_var_arg = true, allow_hyphen_values = false)]
    pub(super) filter: Vec<String>,
    /// Print zcap's man page (man) or a shell completion script (complete-bash, complete-zsh,
    /// complete-fish) and exit, e.g. `zcap --generate man > zcap.1`.
    #[arg(long, value_name = "KIND", value_parser = ["man", "complete-bash", "complete-zsh", "complete-fish"], help_heading = "Other")]
    pub(super) generate: Option<String>,
    /// tcpdump's other flags.
    #[command(flatten)]
    pub(super) compat: super::tcpdump::Compat,
}

impl Args {
    /// Whether flow records leave zcap: IPFIX (`--ipfix`, `--ipfix-file`) or Kafka.
    pub(super) fn exports(&self) -> bool {
        self.ipfix.is_some() || self.ipfix_file.is_some() || self.kafka.is_some()
    }
}

/// `--names`' help, with the most a flow read holds (its names' inline size and heap, as
/// zcrx-flowcache bounds them), in KiB.
fn names_help() -> String {
    let kib = (FLOW_NAMES_INLINE_BOUND + FLOW_NAMES_HEAP_BOUND).div_ceil(1024);
    format!(
        "With --flows or --ipfix: read what each flow is from the first bytes of each direction \
         (a bounded budget, then nothing): the TLS or QUIC ClientHello's server name, ALPN, \
         versions and JA4, the ServerHello's version and cipher, the DNS question and answer, \
         the first HTTP/1.x request and response. At most one flow read per flow-table slot \
         (--max-flows), each holding at most about {kib} KiB"
    )
}

/// `--max-flows`' help, with what a flow-table slot costs without and with its TCP state.
fn max_flows_help() -> String {
    format!(
        "Flows tracked at once (per shard; rounded up to a power of two, {} bytes each, {} with \
         --flows or --ipfix, which follow TCP states): when both sets a new flow may go to are \
         full, the least recently seen flow of the two is ended (exported with end reason \
         \"lack of resources\") to make room",
        slot_bytes(false),
        slot_bytes(true)
    )
}

/// The bytes a flow-table slot costs, its share of the tags included, as the table counts
/// its memory ([`FlowTableConfig::memory_bytes`]).
fn slot_bytes(tcp_state: bool) -> usize {
    let slots = 1 << 16;
    let table = FlowTableConfig::with_capacity(slots).with_tcp_state(tcp_state);
    table.memory_bytes() / slots
}

/// The command line, with `--version` naming zcrx and the libpcap in use.
pub(super) fn parse() -> Args {
    let mut matches = command().get_matches();
    Args::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.exit())
}

/// The command line's definition, with zcap's version and libpcap's.
pub(super) fn command() -> clap::Command {
    let version: &'static str = Box::leak(
        format!(
            "{} (zcrx {}; filters by {})",
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_VERSION"),
            zcrx_capture::filter::libpcap_version()
        )
        .into_boxed_str(),
    );
    Args::command().version(version)
}

/// A number clap takes only within `range` (clap's own parser `number` reads it first, with
/// its own message for what is not a number); out of it, clap stops with `refused(n)`:
/// zcap's words for the flag, as rxbench's ranges are checked at parse time.
fn within<P>(
    number: P,
    range: RangeInclusive<P::Value>,
    refused: fn(P::Value) -> String,
) -> Within<P>
where
    P: TypedValueParser,
    P::Value: PartialOrd + Copy,
{
    Within {
        number,
        range,
        refused,
    }
}

/// See [`within`].
#[derive(Clone)]
struct Within<P: TypedValueParser> {
    number: P,
    range: RangeInclusive<P::Value>,
    refused: fn(P::Value) -> String,
}

impl<P> TypedValueParser for Within<P>
where
    P: TypedValueParser,
    P::Value: PartialOrd + Copy,
{
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let n = self.number.parse_ref(cmd, arg, value)?;
        if self.range.contains(&n) {
            return Ok(n);
        }
        let refused = clap::Error::raw(ErrorKind::ValueValidation, (self.refused)(n) + "\n");
        Err(refused.with_cmd(cmd))
    }
}

#[cfg(test)]
mod test {
    use clap::Parser;

    use super::Args;

    fn parsed(args: &[&str]) -> Result<Args, String> {
        Args::try_parse_from(["zcap"].iter().chain(args)).map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_out_of_range_are_refused_as_clap_parses() {
        for (args, says) in [
            (&["--shards", "0"][..], "--shards 0: must be 1..=64"),
            (&["--shards", "65"], "--shards 65: must be 1..=64"),
            (&["-c", "0"], "-c 0: the count must be at least 1"),
            (
                &["-G", "0"],
                "-G 0: the number of seconds must be at least 1",
            ),
            (
                &["-W", "0"],
                "-W 0: the number of output files must be at least 1",
            ),
            (
                &["--community-id-seed", "65536"],
                "--community-id-seed 65536: the seed is 16 bits, 0..=65535",
            ),
            (
                &["--active-timeout", "86401"],
                "--active-timeout 86401: seconds must be 0 (off) ..= 86400",
            ),
            (
                &["--top-interval", "60.5"],
                "--top-interval 60.5: seconds must be 0.1..=60",
            ),
        ] {
            assert_eq!(parsed(args).err(), Some(format!("error: {says}\n")));
        }
    }

    #[test]
    fn the_help_states_what_a_flow_costs_as_the_code_computes_it() {
        let help = super::command().render_long_help().to_string();
        let slot = format!(
            "{} bytes each, {} with --flows",
            super::slot_bytes(false),
            super::slot_bytes(true)
        );
        assert!(help.contains(&slot), "{slot:?} not in --help");
        let kib = (super::FLOW_NAMES_INLINE_BOUND + super::FLOW_NAMES_HEAP_BOUND).div_ceil(1024);
        let read = format!("each holding at most about {kib} KiB");
        assert!(help.contains(&read), "{read:?} not in --help");
    }

    #[test]
    fn numbers_at_their_bounds_are_taken() {
        let a = parsed(&[
            "--shards",
            "64",
            "--community-id-seed",
            "65535",
            "--active-timeout",
            "0",
            "--ipfix-template-every",
            "1000000",
            "--top-interval",
            "0.1",
        ])
        .unwrap();
        assert_eq!(
            (a.shards, a.community_id_seed, a.active_timeout),
            (64, 65535, 0)
        );
        assert_eq!(
            (a.ipfix_template_every, a.top_interval),
            (1_000_000, Some(0.1))
        );
    }
}

/// `--names-case`: how DNS names are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum NamesCase {
    /// As on the wire.
    Wire,
    /// Lower-cased (ASCII), as Zeek's dns.log.
    Lower,
}
