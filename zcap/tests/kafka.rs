//! `zcap --kafka`: flow records published by zcap's relay, as they reach a broker (nisshi,
//! `scripts/broker.sh`) and ClickHouse (chDB, docs/scale-out's tables): two sensors, each
//! named in its records' header, every record there with the packets and bytes the sensor
//! printed; a broker that is not there costs the capture nothing and is counted. Built with
//! the `kafka` feature only (the test command builds every feature).

use crate::common;
use crate::scale_out_clickhouse::{capture, num, Broker, SCRIPTS};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use zcrx_ring::lab::{Lab, Need};

/// `zcap -r pcap --flows --json --kafka BROKERS --kafka-topic TOPIC` and `more`: its JSON
/// lines and standard error (it must succeed).
pub(crate) fn publish(
    pcap: &Path,
    brokers: &str,
    topic: &str,
    more: &[&str],
) -> (Vec<String>, String) {
    let o = Command::new(common::bin())
        .arg("-r")
        .arg(pcap)
        .args(["-q", "--flows", "--json", "--kafka", brokers])
        .args(["--kafka-topic", topic])
        .args(more)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    (lines, err)
}

/// [`publish`] as sensor `name`, zstd-compressed.
fn sensor(pcap: &Path, name: &str, brokers: &str, topic: &str) -> (Vec<String>, String) {
    let more = ["--kafka-sensor", name, "--kafka-compression", "zstd"];
    publish(pcap, brokers, topic, &more)
}

/// (records, packets, bytes) of a sensor's JSON lines.
fn totals<S: AsRef<str>>(lines: &[S]) -> (u64, u64, u64) {
    let mut t = (lines.len() as u64, 0, 0);
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line.as_ref()).unwrap();
        let sum = |k: &str| v[k][0].as_u64().unwrap() + v[k][1].as_u64().unwrap();
        t.1 += sum("packets");
        t.2 += sum("bytes");
    }
    t
}

#[test]
fn two_sensors_publish_their_flows_into_clickhouse() {
    zcrx_ring::require!(Need::Tool("python3"), Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-sensors");
    let broker = Broker::start(&dir);
    let topic = "zcap-flows";
    broker.create_topic(topic, 3);
    let (a, b) = (dir.join("a.pcap"), dir.join("b.pcap"));
    capture(&a, 1, 50, 53);
    capture(&b, 2, 25, 443);
    let mut want = BTreeMap::new();
    for (name, pcap) in [("edge-a", &a), ("edge-b", &b)] {
        let (lines, err) = sensor(pcap, name, &broker.addr(), topic);
        let n = lines.len();
        assert!(
            err.contains(&format!(
                "{n} flow records published to Kafka topic {topic} (0 lost:"
            )),
            "{err}"
        );
        want.insert(name.to_string(), totals(&lines));
    }
    let records: u64 = want.values().map(|t| t.0).sum();
    let o = Command::new("python3")
        .arg(format!("{SCRIPTS}/chdb-store.py"))
        .args(["--brokers", &broker.addr(), "--topic", topic])
        .args(["--records", &records.to_string(), "--timeout", "180"])
        .arg("--dir")
        .arg(dir.join("chdb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], records, "{v}");
    let got: BTreeMap<String, (u64, u64, u64)> = v["queries"]["per_sensor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = r["sensor"].as_str().unwrap().to_string();
            (
                name,
                (num(&r["records"]), num(&r["packets"]), num(&r["bytes"])),
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_broker_that_is_not_there_costs_the_capture_nothing_and_is_counted() {
    let dir = common::fresh_dir("kafka-absent");
    let pcap = dir.join("a.pcap");
    capture(&pcap, 1, 20, 53);
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = std::time::Instant::now();
    let (lines, err) = sensor(&pcap, "edge", &format!("127.0.0.1:{port}"), "t");
    assert_eq!(lines.len(), 20, "the capture's own output is whole");
    assert!(
        err.contains("0 flow records published to Kafka topic t (20 lost: 20 not delivered"),
        "{err}"
    );
    // The relay gives up after its flush's bound, not the records' five minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn bad_kafka_settings_are_clear_errors() {
    let refused = common::refused;
    refused(&["-r", "x.pcap", "--kafka", "nohost"], "HOST:PORT");
    refused(&["-r", "x.pcap", "--kafka", "h:0"], "HOST:PORT");
    refused(&["-r", "x.pcap", "--kafka-sensor", "x"], "go with --kafka");
    refused(
        &["-r", "x.pcap", "--kafka-format", "goflow2"],
        "go with --kafka",
    );
    refused(
        &["-r", "x.pcap", "--kafka", "h:9092", "--kafka-format", "xml"],
        "xml",
    );
    refused(
        &[
            "-r",
            "x.pcap",
            "--kafka",
            "h:9092",
            "--kafka-compression",
            "brotli",
        ],
        "brotli",
    );
    refused(
        &[
            "-r",
            "x.pcap",
            "--kafka",
            "h:9092",
            "--kafka-config",
            "/nonexistent",
        ],
        "--kafka-config /nonexistent",
    );
}

/// A file's flows all end at once (4000 here): the capture waits for the relay rather than
/// drop them, and every one is published.
#[test]
fn a_files_burst_of_flows_is_published_whole() {
    zcrx_ring::require!(Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-burst");
    let broker = Broker::start(&dir);
    broker.create_topic("burst", 2);
    let pcap = dir.join("burst.pcap");
    std::fs::write(&pcap, common::pcap_bytes(20_000, 4_000)).unwrap();
    let (lines, err) = sensor(&pcap, "edge", &broker.addr(), "burst");
    assert_eq!(lines.len(), 4_000);
    // Every flow's records (its active-timeout reports too: 200 s of packets), none lost.
    let published = reported(&err, " flow records published");
    assert!(published >= 4_000, "{err}");
    assert!(err.contains("topic burst (0 lost:"), "{err}");
}

/// `--kafka-format goflow2`: each direction of a flow a goflow2 `FlowMessage`, read by
/// ClickHouse's own Protobuf reader (chDB, a Kafka table with `kafka_format = 'Protobuf'`
/// and docs/scale-out/flow.proto, as goflow2's documented setup reads goflow2's topic):
/// every direction zcap printed is a row, from its own sender, with its packets and bytes,
/// the sampling rate stated (1) and the flow's Community ID as the message key.
#[test]
fn goflow2_messages_are_read_by_clickhouse_as_goflow2s_are() {
    zcrx_ring::require!(Need::Tool("python3"), Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-goflow2");
    let broker = Broker::start(&dir);
    broker.create_topic("goflow2", 2);
    let pcap = dir.join("a.pcap");
    capture(&pcap, 3, 40, 53);
    let more = [
        "--kafka-format",
        "goflow2",
        "--kafka-sensor",
        "edge",
        "--ipfix-ifindex",
        "5:6",
    ];
    let (lines, err) = publish(&pcap, &broker.addr(), "goflow2", &more);
    // (src, dst, sport, dport, packets, bytes, community id) of each direction with packets.
    let mut want = Vec::new();
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        let n = |k: &str, i: usize| v[k][i].as_u64().unwrap();
        let ends = [
            (s("src"), v["sport"].as_u64().unwrap()),
            (s("dst"), v["dport"].as_u64().unwrap()),
        ];
        for d in 0..2 {
            if n("packets", d) > 0 {
                let (from, to) = (&ends[d], &ends[1 - d]);
                let id = s("community_id");
                let row = (from.0.clone(), to.0.clone(), from.1, to.1);
                want.push((row, n("packets", d), n("bytes", d), id));
            }
        }
    }
    want.sort();
    assert!(err.contains(&format!(
        "{} flow records published to Kafka topic goflow2 (0 lost:",
        want.len()
    )));
    let o = Command::new("python3")
        .arg(format!("{SCRIPTS}/chdb-store.py"))
        .args(["--brokers", &broker.addr(), "--topic", "goflow2"])
        .args(["--records", &want.len().to_string(), "--timeout", "180"])
        .args(["--format", "goflow2", "--rows", "--dir"])
        .arg(dir.join("chdb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got: Vec<_> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["sensor"], "edge");
            assert_eq!(num(&r["sampling"]), 1, "{r}");
            assert_eq!((num(&r["packets_in"]), num(&r["bytes_in"])), (0, 0));
            let ip = |k: &str| {
                r[k].as_str()
                    .unwrap()
                    .trim_start_matches("::ffff:")
                    .to_string()
            };
            let row = (ip("src"), ip("dst"), num(&r["sport"]), num(&r["dport"]));
            let id = r["community_id"].as_str().unwrap().to_string();
            (row, num(&r["packets_out"]), num(&r["bytes_out"]), id)
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

/// `scripts/kafka-consume.py` (in `netns`, or here): each message of `topic` read from
/// its beginning until none came for 3 s, as (sensor, value).
fn consume(netns: Option<&str>, brokers: &str, topic: &str) -> Vec<(String, String)> {
    let mut command = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "python3"]);
            c
        }
        None => Command::new("python3"),
    };
    let o = command
        .arg(format!("{SCRIPTS}/kafka-consume.py"))
        .args(["--brokers", brokers, "--topic", topic, "--timeout", "60"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let mut cells = l.splitn(3, '\t');
            let sensor = cells.next().unwrap().to_string();
            let _key = cells.next();
            (sensor, cells.next().unwrap_or_default().to_string())
        })
        .collect()
}

/// The number before `what` in a sensor's report.
fn reported(err: &str, what: &str) -> u64 {
    err.lines()
        .find_map(|l| l.split_once(what))
        .and_then(|(n, _)| n.rsplit(' ').next()?.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("no {what:?} in {err}"))
}

/// A live sensor in the lab's namespace b: `zcap --flows --json --active-timeout 1
/// --kafka BROKERS --kafka-topic TOPIC` as `edge-PORT` on the traffic to `port`, with
/// `--kafka-config config`.
fn live_sensor(
    lab: &Lab,
    brokers: &str,
    topic: &str,
    port: u16,
    config: Option<&Path>,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    String,
) {
    let sensor = format!("edge-{port}");
    let filter = format!("udp dst port {port}");
    let mut args = vec!["-i", &lab.b.iface, "-q", "--flows", "--json"];
    args.extend(["--active-timeout", "1", "--kafka", brokers]);
    args.extend(["--kafka-topic", topic, "--kafka-sensor", &sensor]);
    let config = config.map(|c| c.display().to_string());
    if let Some(c) = &config {
        args.extend(["--kafka-config", c]);
    }
    args.push(&filter);
    common::start_live(&lab.b.netns, &args)
}

/// One phase of lab traffic: 20 flows (client ports 40000..40020) to each of ports 7001 and
/// 7002, 3 packets each (UDP payloads of 10, 11, 12 bytes: 117 bytes of IP); then 3 s for
/// every flow to be reported (one-second active timeout, the table looked at each tick).
fn phase(lab: &Lab, n: u8) {
    let mut frames = Vec::new();
    for port in [7001u16, 7002] {
        for flow in 0..20u16 {
            for i in 0..3usize {
                let b =
                    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
                        .udp(40000 + flow, port);
                let mut f = Vec::new();
                b.write(&mut f, &vec![n; 10 + i]).unwrap();
                frames.push(f);
            }
        }
    }
    common::send(lab, &frames);
    std::thread::sleep(Duration::from_secs(3));
}

/// Two live sensors in the lab publish through the broker on the namespace's loopback into
/// ClickHouse (chDB's Kafka table and docs/scale-out's tables, run in that namespace): every
/// flow of each sensor has there the packets and bytes that were sent to it (two phases: 6
/// packets, 234 bytes of IP), summed over its one-second reports.
#[test]
fn two_live_sensors_flows_reach_clickhouse_packet_for_packet() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("python3"), Need::Tool("cargo"));
    let lab = Lab::new().unwrap();
    let dir = common::fresh_dir("kafka-live-store");
    let broker = Broker::start_in(&dir, Some(&lab.b.netns));
    broker.create_topic("store", 2);
    let sensors: Vec<_> = [7001u16, 7002]
        .into_iter()
        .map(|port| live_sensor(&lab, &broker.addr(), "store", port, None))
        .collect();
    phase(&lab, 1);
    phase(&lab, 2);
    let mut published = 0;
    for (child, rx, _) in sensors {
        let (ok, _, err) = common::finish_live(child, rx, true);
        assert!(ok, "{err}");
        assert!(err.contains("topic store (0 lost:"), "{err}");
        published += reported(&err, " flow records published to Kafka topic store");
    }
    let o = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "python3"])
        .arg(format!("{SCRIPTS}/chdb-store.py"))
        .args(["--brokers", &broker.addr(), "--topic", "store"])
        .args([
            "--records",
            &published.to_string(),
            "--timeout",
            "180",
            "--rows",
        ])
        .arg("--dir")
        .arg(dir.join("chdb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(num(&v["records"]), published, "{v}");
    let mut flows: BTreeMap<(String, u64), (u64, u64)> = BTreeMap::new();
    for r in v["rows"].as_array().unwrap() {
        let key = (r["sensor"].as_str().unwrap().to_string(), num(&r["sport"]));
        let e = flows.entry(key).or_default();
        e.0 += num(&r["packets_out"]) + num(&r["packets_in"]);
        e.1 += num(&r["bytes_out"]) + num(&r["bytes_in"]);
    }
    let mut want = BTreeMap::new();
    for sensor in ["edge-7001", "edge-7002"] {
        for sport in 40000..40020 {
            want.insert((sensor.to_string(), sport), (6, 234));
        }
    }
    assert_eq!(flows, want);
}

/// Two live sensors in the lab (namespace b, each on its own port's traffic) publish their
/// flows' one-second reports through a broker on that namespace's loopback, which is
/// stopped for a while and started again, empty (nisshi keeps topics in memory). What each
/// published before the stop is read before it; what the sensors made while it was away
/// waits in the relay and is published when it is back. Sensor 1 (the default queue)
/// loses nothing: every packet sent is counted in what the broker got. Sensor 2, its
/// librdkafka queue cut to 30 records (a phase's 20 fit), drops what does not fit while the
/// broker is away,
/// and counts it: what it says it published is what the broker got, and the packets
/// missing are in the records it says it dropped.
#[test]
fn live_sensors_ride_out_a_broker_restart_and_count_what_they_drop() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("python3"), Need::Tool("cargo"));
    let lab = Lab::new().unwrap();
    let dir = common::fresh_dir("kafka-restart");
    let mut broker = Broker::start_in(&dir, Some(&lab.b.netns));
    broker.create_topic("live", 2);
    let small = dir.join("small-queue.properties");
    std::fs::write(&small, "queue.buffering.max.messages=30\n").unwrap();
    let sensors: Vec<_> = [(7001u16, None), (7002, Some(small.as_path()))]
        .into_iter()
        .map(|(port, config)| live_sensor(&lab, &broker.addr(), "live", port, config))
        .collect();
    let phase = |n: u8| phase(&lab, n);
    phase(1);
    let before = consume(Some(&lab.b.netns), &broker.addr(), "live");
    broker.stop();
    // Two phases while it is away: 40 records a sensor, more than sensor 2's queue holds.
    phase(2);
    phase(3);
    broker.start_again();
    // The relays' librdkafka find the broker again (it retries within a second or so).
    std::thread::sleep(Duration::from_secs(3));
    phase(4);
    let mut errs = Vec::new();
    for (child, rx, _) in sensors {
        let (ok, out, err) = common::finish_live(child, rx, true);
        assert!(ok, "{err}");
        let packets = totals(&out.lines().collect::<Vec<_>>()).1;
        assert_eq!(
            packets,
            4 * 20 * 3,
            "the sensor's own table is whole: {err}"
        );
        errs.push(err);
    }
    let after = consume(Some(&lab.b.netns), &broker.addr(), "live");
    let got = |port: u16| {
        let name = format!("edge-{port}");
        let mine: Vec<&String> = before
            .iter()
            .chain(&after)
            .filter(|(s, _)| *s == name)
            .map(|(_, v)| v)
            .collect();
        let (records, packets, _) = totals(&mine);
        (records, packets)
    };
    for e in &errs {
        eprintln!(
            "{}",
            e.lines()
                .filter(|l| l.contains("Kafka"))
                .collect::<String>()
        );
    }
    eprintln!(
        "read before the stop: {}, after: {}",
        before.len(),
        after.len()
    );
    let topic = " flow records published to Kafka topic live";
    // Sensor 1: every record of the three phases, nothing lost.
    let (records, packets) = got(7001);
    assert_eq!(reported(&errs[0], topic), records, "{}", errs[0]);
    assert!(errs[0].contains("live (0 lost:"), "{}", errs[0]);
    assert_eq!(packets, 4 * 20 * 3, "{}", errs[0]);
    // Sensor 2: what it published arrived; what it dropped while the broker was away is
    // counted, and is what is missing.
    let (records, packets) = got(7002);
    assert_eq!(reported(&errs[1], topic), records, "{}", errs[1]);
    let full = reported(&errs[1], " queue full");
    assert!(full > 0, "{}", errs[1]);
    assert!(packets < 4 * 20 * 3, "{}", errs[1]);
    assert_eq!(reported(&errs[1], " lost: "), full, "{}", errs[1]);
}

/// Packets and bytes by direction (source, destination, source port, destination port).
type ByDirection = BTreeMap<(String, String, u64, u64), (u64, u64)>;

/// One run of zcap publishes its flows to Kafka itself (JSON) and sends them as IPFIX
/// (`--ipfix-uniflow`) to nfacctd, whose own Kafka plugin publishes them to another topic
/// (pmacct's JSON): both topics hold the same packets and bytes for every direction of
/// every flow.
#[test]
fn zcaps_kafka_and_nfacctds_kafka_agree_direction_by_direction() {
    zcrx_ring::require!(
        Need::Tool("python3"),
        Need::Tool("cargo"),
        Need::Tool("nfacctd")
    );
    let dir = common::fresh_dir("kafka-nfacctd");
    let broker = Broker::start(&dir);
    broker.create_topic("zcap", 2);
    broker.create_topic("nfacctd", 1);
    let (mut nfacctd, nf_port) = nfacctd_to_kafka(&dir, &broker.addr(), "nfacctd");
    let pcap = dir.join("a.pcap");
    capture(&pcap, 4, 30, 53);
    let o = Command::new(common::bin())
        .arg("-r")
        .arg(&pcap)
        .args(["-q", "--kafka", &broker.addr(), "--kafka-topic", "zcap"])
        .args([
            "--ipfix",
            &format!("127.0.0.1:{nf_port}"),
            "--ipfix-uniflow",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let zcap = zcap_directions(&consume(None, &broker.addr(), "zcap"));
    // 30 flows, each with packets out and 20 with packets back.
    assert_eq!(zcap.len(), 50, "{zcap:?}");
    // nfacctd publishes its cache every second: read until it has all, for a minute at most.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let nf = loop {
        let nf = nfacctd_directions(&consume(None, &broker.addr(), "nfacctd"));
        if nf == zcap || std::time::Instant::now() > deadline {
            break nf;
        }
    };
    let _ = nfacctd.kill();
    let _ = nfacctd.wait();
    assert_eq!(nf, zcap);
}

/// nfacctd taking IPFIX on a free UDP port of 127.0.0.1 (returned, bound before this
/// returns: templates sent earlier would be lost) and publishing every second, with its
/// own Kafka plugin, to `topic` at `brokers`.
fn nfacctd_to_kafka(dir: &Path, brokers: &str, topic: &str) -> (std::process::Child, u16) {
    let nf_port = crate::ipfix::free_udp_port(None);
    let (host, port) = brokers.split_once(':').unwrap();
    let conf = dir.join("nfacctd.conf");
    std::fs::write(
        &conf,
        format!(
            "daemonize: false\nnfacctd_ip: 127.0.0.1\nnfacctd_port: {nf_port}\n\
             logfile: {log}\nplugins: kafka[k]\n\
             aggregate[k]: src_host, dst_host, src_port, dst_port, proto\n\
             kafka_output[k]: json\nkafka_topic[k]: {topic}\n\
             kafka_broker_host[k]: {host}\nkafka_broker_port[k]: {port}\n\
             kafka_refresh_time[k]: 1\n",
            log = dir.join("nfacctd.log").display()
        ),
    )
    .unwrap();
    let nfacctd = Command::new(format!("{SCRIPTS}/nfacctd-kafka.sh"))
        .arg("-f")
        .arg(&conf)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let bound = || {
        let o = Command::new("ss")
            .args(["-Hlun", &format!("sport = :{nf_port}")])
            .output()
            .unwrap();
        !o.stdout.is_empty()
    };
    while !bound() {
        assert!(std::time::Instant::now() < deadline, "nfacctd did not bind");
        std::thread::sleep(Duration::from_millis(100));
    }
    (nfacctd, nf_port)
}

/// The packets and bytes of zcap's Kafka messages (its JSON flow objects), by direction:
/// a direction that sent nothing is not one.
fn zcap_directions(messages: &[(String, String)]) -> ByDirection {
    let mut zcap = ByDirection::new();
    for (_, v) in messages {
        let v: serde_json::Value = serde_json::from_str(v).unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        let ends = [(s("src"), &v["sport"]), (s("dst"), &v["dport"])];
        for d in 0..2 {
            let packets = v["packets"][d].as_u64().unwrap();
            if packets > 0 {
                let (a, b) = (&ends[d], &ends[1 - d]);
                let key = (a.0.clone(), b.0.clone(), num(a.1), num(b.1));
                let e = zcap.entry(key).or_default();
                e.0 += packets;
                e.1 += v["bytes"][d].as_u64().unwrap();
            }
        }
    }
    zcap
}

/// The packets and bytes of nfacctd's Kafka messages (pmacct's JSON), by direction.
fn nfacctd_directions(messages: &[(String, String)]) -> ByDirection {
    let mut nf = ByDirection::new();
    for (_, v) in messages {
        let v: serde_json::Value = serde_json::from_str(v).unwrap();
        if v["event_type"] != "purge" {
            continue;
        }
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        let key = (
            s("ip_src"),
            s("ip_dst"),
            num(&v["port_src"]),
            num(&v["port_dst"]),
        );
        let e = nf.entry(key).or_default();
        e.0 += num(&v["packets"]);
        e.1 += num(&v["bytes"]);
    }
    nf
}
