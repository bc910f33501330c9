//! docs/scale-out/'s ClickHouse store, as it runs: two sensors' flows (`zcap --flows
//! --json`, one object a message, the sensor in a header, keyed by Community ID, lz4;
//! published by `scripts/kafka-publish.py`) go
//! through a Kafka-compatible broker on loopback (nisshi, `scripts/broker.sh`) into
//! ClickHouse (chDB 3.7.2, `scripts/chdb-store.py`) with `clickhouse.sql`'s Kafka table,
//! materialized views and rollups; `queries.sql`'s answers equal what zcap printed, record
//! for record. Fail under CI=true instead of skipping.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use zcrx_ring::lab::Need;

pub(crate) const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts");

/// The broker, stopped when dropped.
pub(crate) struct Broker {
    child: Child,
    bin: PathBuf,
    port: u16,
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    dir: PathBuf,
    /// The network namespace it runs in (`None`: this one).
    netns: Option<String>,
    /// Its flags beyond the listener and the storage.
    flags: Vec<String>,
}

impl Broker {
    /// Builds (once, cached) and starts nisshi on a free loopback port with its in-memory
    /// storage, in `dir` (it reads a `.env` from its working directory: this one has none).
    pub(crate) fn start(dir: &Path) -> Broker {
        Broker::start_in(dir, None)
    }

    /// [`Broker::start`] in network namespace `netns` (on its loopback).
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn start_in(dir: &Path, netns: Option<&str>) -> Broker {
        Broker::start_with(dir, netns, &[], None)
    }

    /// [`Broker::start_in`] with more of nisshi's broker flags (`--cert`, `--key`), and
    /// advertising port `advertise` (a proxy's) in place of its own.
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn start_with(
        dir: &Path,
        netns: Option<&str>,
        extra: &[String],
        advertise: Option<u16>,
    ) -> Broker {
        let o = Command::new(format!("{SCRIPTS}/broker.sh"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "scripts/broker.sh: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let bin = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        // A port free here is free in a fresh namespace too.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let netns = netns.map(String::from);
        let mut flags = extra.to_vec();
        if !flags.iter().any(|f| f == "--storage-engine") {
            flags.extend(["--storage-engine".into(), "memory://nisshi/".into()]);
        }
        let advertised = format!("tcp://127.0.0.1:{}", advertise.unwrap_or(port));
        flags.extend(["--advertised-listener-url".to_string(), advertised]);
        let child = Broker::spawn(&bin, dir, netns.as_deref(), port, &flags);
        Broker {
            child,
            bin,
            port,
            dir: dir.to_path_buf(),
            netns,
            flags,
        }
    }

    /// A broker that requires SASL (SCRAM-SHA-256) as `user` with `password`. nisshi keeps
    /// SCRAM users only in a storage engine that can (SQLite here, in `dir`), and makes them
    /// only with authentication off: the user is made, then the broker started again with
    /// it on.
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn start_sasl(dir: &Path, user: &str, password: &str) -> Broker {
        let storage = ["--storage-engine".to_string(), "sqlite://broker.db".into()];
        let mut broker = Broker::start_with(dir, None, &storage, None);
        let o = Command::new(&broker.bin)
            .args(["user", "create", user, password, "--mechanism", "scram256"])
            .args(["--broker", &format!("tcp://{}", broker.addr())])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "user create: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        broker.stop();
        broker.flags.push("--authentication".into());
        broker.start_again();
        broker
    }

    /// A command run in the broker's namespace.
    fn command(netns: Option<&str>, program: &Path) -> Command {
        match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
            None => Command::new(program),
        }
    }

    fn spawn(bin: &Path, dir: &Path, netns: Option<&str>, port: u16, flags: &[String]) -> Child {
        let url = format!("tcp://127.0.0.1:{port}");
        // nisshi logs on standard output.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("broker.log"))
            .unwrap();
        let child = Broker::command(netns, bin)
            .args(["broker", "--listener-url", &url])
            .args(flags)
            .current_dir(dir)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let ready = || {
            let probe = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
            Broker::command(netns, Path::new("bash"))
                .args(["-c", &probe])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        while !ready() {
            assert!(Instant::now() < deadline, "the broker did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        child
    }

    /// Stops the broker (what it held is gone: its storage is memory).
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port, empty.
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn start_again(&mut self) {
        let (bin, dir, netns) = (&self.bin, &self.dir, self.netns.as_deref());
        self.child = Broker::spawn(bin, dir, netns, self.port, &self.flags);
    }

    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Its own port (not the one it advertises).
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn create_topic(&self, topic: &str, partitions: u32) {
        self.create_topic_with(topic, partitions, &[]);
    }

    /// [`Broker::create_topic`] with topic settings (`max.message.bytes=N`).
    pub(crate) fn create_topic_with(&self, topic: &str, partitions: u32, settings: &[&str]) {
        let o = Broker::command(self.netns.as_deref(), &self.bin)
            .args([
                "topic",
                "create",
                topic,
                "--partitions",
                &partitions.to_string(),
            ])
            .args(settings.iter().flat_map(|s| ["--config", s]))
            .args(["--broker", &format!("tcp://{}", self.addr())])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "topic create: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pcap of `flows` UDP conversations from 198.18.`net`.x to 198.18.0.1 port `port`, flow
/// i with i % 5 + 1 packets out and i % 3 back, stamped now.
pub(crate) fn capture(path: &Path, net: u8, flows: u8, port: u16) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
    let mut at = now;
    for i in 0..flows {
        let client = [198, 18, net, i + 1];
        let server = [198, 18, 0, 1];
        let sport = 40000 + u16::from(i);
        let mut put = |from: [u8; 4], to: [u8; 4], sp: u16, dp: u16, len: usize| {
            let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                .ipv4(from, to, 64)
                .udp(sp, dp);
            let mut frame = Vec::new();
            b.write(&mut frame, &vec![0u8; len]).unwrap();
            at += Duration::from_micros(100);
            w.write_packet(&pcap_file::pcap::PcapPacket::new(
                at,
                frame.len() as u32,
                &frame,
            ))
            .unwrap();
        };
        for _ in 0..=i % 5 {
            put(client, server, sport, port, 40 + usize::from(i));
        }
        for _ in 0..i % 3 {
            put(server, client, port, sport, 200);
        }
    }
    std::fs::write(path, w.into_writer()).unwrap();
}

/// What one sensor printed: its `--flows --json` lines, and its totals (records, packets,
/// bytes) per client address.
struct Sensor {
    name: &'static str,
    lines: Vec<String>,
}

impl Sensor {
    fn run(name: &'static str, pcap: &Path) -> Sensor {
        let o = Command::new(common::bin())
            .args(["-r"])
            .arg(pcap)
            .args(["-q", "--flows", "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let lines = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect();
        Sensor { name, lines }
    }

    /// Publishes its lines, keyed by Community ID, its name in the `sensor` header, lz4
    /// (`scripts/kafka-publish.py`: librdkafka as the PyPI wheel bundles it).
    fn publish(&self, broker: &Broker, topic: &str) {
        let mut publish = Command::new("python3")
            .arg(format!("{SCRIPTS}/kafka-publish.py"))
            .args(["--brokers", &broker.addr(), "--topic", topic])
            .args(["--compression", "lz4", "--header"])
            .arg(format!("sensor={}", self.name))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = publish.stdin.take().unwrap();
        for line in &self.lines {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            writeln!(stdin, "{}\t{line}", v["community_id"].as_str().unwrap()).unwrap();
        }
        drop(stdin);
        let o = publish.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "kafka-publish.py: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// (packets, bytes) summed over both directions of its flows.
    fn totals(&self) -> (u64, u64) {
        let mut t = (0, 0);
        for line in &self.lines {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let sum = |k: &str| v[k][0].as_u64().unwrap() + v[k][1].as_u64().unwrap();
            t.0 += sum("packets");
            t.1 += sum("bytes");
        }
        t
    }
}

/// A ClickHouse number in JSON: 64-bit ones may come quoted.
pub(crate) fn num(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn two_sensors_flows_reach_clickhouse_through_kafka_and_answer_the_first_questions() {
    zcrx_ring::require!(Need::Tool("python3"), Need::Tool("cargo"));
    let dir = common::fresh_dir("scale-out-clickhouse");
    let broker = Broker::start(&dir);
    let topic = "zcap-flows";
    broker.create_topic(topic, 2);
    let (a, b) = (dir.join("a.pcap"), dir.join("b.pcap"));
    capture(&a, 1, 40, 53);
    capture(&b, 2, 30, 443);
    let sensors = [Sensor::run("edge-a", &a), Sensor::run("edge-b", &b)];
    let records: usize = sensors.iter().map(|s| s.lines.len()).sum();
    assert_eq!(records, 70);
    for s in &sensors {
        s.publish(&broker, topic);
    }
    let o = Command::new("python3")
        .arg(format!("{SCRIPTS}/chdb-store.py"))
        .args(["--brokers", &broker.addr(), "--topic", topic])
        .args(["--records", &records.to_string(), "--timeout", "180"])
        .args(["--host", "198.18.0.1", "--minutes", "60"])
        .args(["--dir"])
        .arg(dir.join("chdb"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chdb-store.py: {said}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], records, "{v}");
    assert_eq!(v["rollup_records"], serde_json::json!([records, records]));
    let q = &v["queries"];
    // Every sensor's records, flows, packets and bytes as it printed them.
    let per_sensor: BTreeMap<String, (u64, u64, u64)> = q["per_sensor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| num(&r[k]);
            let name = r["sensor"].as_str().unwrap().to_string();
            (name, (n("records"), n("packets"), n("bytes")))
        })
        .collect();
    for s in &sensors {
        let (packets, bytes) = s.totals();
        assert_eq!(
            per_sensor.get(s.name),
            Some(&(s.lines.len() as u64, packets, bytes)),
            "{per_sensor:?}"
        );
    }
    // The server talked with every client: its conversations add up to everything.
    let total: u64 = sensors.iter().map(|s| s.totals().1).sum();
    let conversations = q["conversations_of_host"].as_array().unwrap();
    assert_eq!(conversations.len(), records, "one peer and port per flow");
    let bytes = |rows: &[serde_json::Value]| -> u64 { rows.iter().map(|r| num(&r["bytes"])).sum() };
    assert_eq!(bytes(conversations), total);
    // Bytes per minute by server (no names read here: by port), both ports there.
    let per_minute = q["bytes_per_minute_by_server_name"].as_array().unwrap();
    assert_eq!(bytes(per_minute), total);
    for port in ["port 53", "port 443"] {
        assert!(
            per_minute.iter().any(|r| r["server"] == port),
            "{per_minute:?}"
        );
    }
    // The top talker is the host that sent the most, as the sensors' lines say.
    let top = q["top_talkers"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 10);
    let mut sent: BTreeMap<String, u64> = BTreeMap::new();
    for s in &sensors {
        for line in &s.lines {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            *sent
                .entry(v["src"].as_str().unwrap().to_string())
                .or_default() += v["bytes"][0].as_u64().unwrap() + v["bytes"][1].as_u64().unwrap();
        }
    }
    let most = sent.values().max().unwrap();
    assert_eq!(num(&top[0]["bytes"]), *most, "{top:?}");
}
