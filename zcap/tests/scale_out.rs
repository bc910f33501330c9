//! Flows from many sensors in one database: two zcap sensors, each in a lab of its own
//! (the same addresses in both, so only the exporter tells them apart), export IPFIX to one
//! pmacct `nfacctd` (Debian's), which writes them into PostgreSQL (Debian's, a cluster this
//! test starts and stops). The configuration is `docs/scale-out/`'s, changed only in ports
//! and paths. A SQL query over the table gives, per flow and sensor, the packets and bytes
//! of both directions that each sensor's `--flows --json` printed; a second table written
//! without the reverse-field mapping shows what nfacctd does with RFC 5103's reverse
//! elements by itself: it drops them.

use crate::common;

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::start_live;
use zcrx_ring::lab::{ip, Lab, Need};

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/scale-out");

/// Where Debian keeps PostgreSQL's server programs (`initdb`, `pg_ctl`): the newest
/// version's directory. Under CI its absence is a failure (deps.sh installs it).
fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").exists())
        .collect();
    dirs.sort();
    let found = dirs.pop();
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("PostgreSQL's server is not installed; scripts/deps.sh installs it");
    }
    found
}

/// A namespace for the collector, joined to each lab's capturing side by a veth pair:
/// 198.19.N.1 (collector) — 198.19.N.2 (sensor N). Its processes die with it.
struct Collector {
    netns: String,
}

impl Collector {
    fn new(tag: &str, sensors: &[&Lab]) -> Collector {
        let c = Collector {
            netns: format!("zcrx{tag}c"),
        };
        ip(&["netns", "add", &c.netns]).unwrap();
        ip(&["-n", &c.netns, "link", "set", "lo", "up"]).unwrap();
        for (i, lab) in sensors.iter().enumerate() {
            let n = i + 1;
            let (here, there) = (format!("zx{tag}c{n}"), format!("zx{tag}s{n}"));
            ip(&[
                "link",
                "add",
                &here,
                "netns",
                &c.netns,
                "type",
                "veth",
                "peer",
                "name",
                &there,
                "netns",
                &lab.b.netns,
            ])
            .unwrap();
            for (ns, dev, addr) in [
                (c.netns.as_str(), &here, format!("198.19.{n}.1/24")),
                (lab.b.netns.as_str(), &there, format!("198.19.{n}.2/24")),
            ] {
                ip(&["-n", ns, "link", "set", dev, "addrgenmode", "none"]).unwrap();
                ip(&["-n", ns, "addr", "add", &addr, "dev", dev]).unwrap();
                ip(&["-n", ns, "link", "set", dev, "up"]).unwrap();
            }
        }
        c
    }

    /// `program args` in the collector's namespace, as `user` (root if `None`).
    fn command(&self, user: Option<&str>, program: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.netns]);
        if let Some(u) = user {
            c.args(["runuser", "-u", u, "--"]);
        }
        c.arg(program);
        c
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        // Whatever still runs in it (nfacctd's plugins, a server left behind).
        if let Ok(pids) = ip(&["netns", "pids", &self.netns]) {
            for pid in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
        let _ = ip(&["netns", "del", &self.netns]);
    }
}

/// A PostgreSQL cluster of its own in the collector's namespace, on `port` at 127.0.0.1,
/// stopped when dropped.
struct Postgres<'c> {
    collector: &'c Collector,
    bin: PathBuf,
    data: PathBuf,
    port: u16,
}

impl<'c> Postgres<'c> {
    fn start(collector: &'c Collector, bin: PathBuf, dir: &Path, port: u16) -> Postgres<'c> {
        let data = dir.join("pgdata");
        let chown = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(chown.success());
        let init = collector
            .command(Some("postgres"), &bin.join("initdb"))
            .args(["-A", "trust", "-U", "postgres", "-D"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(init.status.success(), "initdb: {}", common::stderr(&init));
        let pg = Postgres {
            collector,
            bin,
            data,
            port,
        };
        let start = collector
            .command(Some("postgres"), &pg.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&pg.data)
            .arg("-l")
            .arg(dir.join("postgres.log"))
            .arg("-o")
            .arg(format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {}",
                dir.display()
            ))
            .args(["-w", "start"])
            .output()
            .unwrap();
        assert!(
            start.status.success(),
            "pg_ctl start: {}",
            common::stderr(&start)
        );
        pg
    }

    /// `psql -At` of `sql` on database `db`: its rows, fields separated by '|'.
    fn psql(&self, db: &str, sql: &str) -> Vec<String> {
        let out = self
            .collector
            .command(None, Path::new("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-v", "ON_ERROR_STOP=1", "-At", "-d", db, "-c", sql])
            .output()
            .unwrap();
        assert!(out.status.success(), "psql {sql}: {}", common::stderr(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }
}

impl Drop for Postgres<'_> {
    fn drop(&mut self) {
        let _ = self
            .collector
            .command(Some("postgres"), &self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// nfacctd with `docs/scale-out/nfacctd.conf`, its database port and paths changed, and a
/// second plugin writing table `flows_forward_only` without the reverse primitives.
fn nfacctd_config(dir: &Path, pg_port: u16) -> PathBuf {
    let docs = Path::new(DOCS);
    let conf = std::fs::read_to_string(docs.join("nfacctd.conf")).unwrap();
    let mut out = String::new();
    for line in conf.lines() {
        let line = match line.split_once(':') {
            Some(("sql_port", _)) => format!("sql_port: {pg_port}"),
            Some(("sql_user", _)) => "sql_user: postgres".into(),
            Some(("sql_refresh_time", _)) => "sql_refresh_time: 1".into(),
            Some(("aggregate_primitives", _)) => format!(
                "aggregate_primitives: {}",
                docs.join("zcap-primitives.lst")
                    .canonicalize()
                    .unwrap()
                    .display()
            ),
            Some(("plugins", _)) => "plugins: pgsql[flows], pgsql[fwd]".into(),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(
        "aggregate[fwd]: peer_src_ip, export_proto_sysid, src_host, dst_host, src_port, dst_port, proto, flows\n\
         sql_table[fwd]: flows_forward_only\n",
    );
    let path = dir.join("nfacctd.conf");
    std::fs::write(&path, out).unwrap();
    path
}

/// The table `flows_forward_only`: `schema.sql`'s without the reverse and time columns.
const FORWARD_ONLY: &str = "CREATE TABLE flows_forward_only (
    peer_ip_src inet NOT NULL, export_proto_sysid bigint NOT NULL DEFAULT 0,
    ip_src inet NOT NULL, ip_dst inet NOT NULL, port_src integer NOT NULL,
    port_dst integer NOT NULL, ip_proto smallint NOT NULL,
    packets bigint NOT NULL, bytes bigint NOT NULL, flows bigint NOT NULL DEFAULT 0,
    stamp_inserted timestamp NOT NULL DEFAULT '0001-01-01 00:00:00', stamp_updated timestamp,
    PRIMARY KEY (peer_ip_src, export_proto_sysid, ip_src, ip_dst, port_src, port_dst,
                 ip_proto, stamp_inserted))";

/// nfacctd, interrupted (so that it writes what it holds) and waited for when dropped.
struct Nfacctd(Child);

impl Drop for Nfacctd {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts nfacctd and waits until it listens.
fn start_nfacctd(c: &Collector, config: &Path, log: &Path) -> Nfacctd {
    let err = log.with_extension("err");
    let n = Nfacctd(
        c.command(None, Path::new("nfacctd"))
            .arg("-f")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(log).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default()
            + &std::fs::read_to_string(&err).unwrap_or_default();
        if text.contains("waiting for NetFlow/IPFIX data") {
            return n;
        }
        assert!(Instant::now() < deadline, "nfacctd did not start: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The collector's side as every test here sets it up: a PostgreSQL cluster of its own
/// (port 55432 in the collector's namespace) with database `zcap`, `schema.sql`'s table and
/// the forward-only one, and nfacctd with `nfacctd_config`, listening.
fn start_collector_side<'c>(
    collector: &'c Collector,
    bin: PathBuf,
    dir: &Path,
) -> (Postgres<'c>, Nfacctd) {
    let pg_port = 55432;
    let pg = Postgres::start(collector, bin, dir, pg_port);
    pg.psql("postgres", "CREATE DATABASE zcap");
    let schema = std::fs::read_to_string(Path::new(DOCS).join("schema.sql")).unwrap();
    pg.psql("zcap", &schema);
    pg.psql("zcap", FORWARD_ONLY);
    let config = nfacctd_config(dir, pg_port);
    let nfacctd = start_nfacctd(collector, &config, &dir.join("nfacctd.log"));
    (pg, nfacctd)
}

/// A flow as the database and zcap's JSON name it: (sensor, domain, src, sport, dst,
/// dport, proto).
type Flow = (String, u32, String, u16, String, u16, u8);
/// Its packets and bytes, initiator -> responder then back.
type Counts = [u64; 4];

/// UDP datagrams from lab side a's port `sport` to b's 7001, `n` of them per flow, sent in
/// `rounds` rounds `pause` apart; b answers every `every`-th datagram it reads.
fn converse(lab: &Lab, flows: &[(u16, u32)], every: u32, rounds: u32, pause: Duration) {
    let server = lab
        .b
        .run(|| UdpSocket::bind(("198.18.0.2", 7001)))
        .unwrap()
        .unwrap();
    server
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let finished = done.clone();
    let answering = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut seen = 0u32;
        loop {
            match server.recv_from(&mut buf) {
                Ok((n, from)) => {
                    seen += 1;
                    if seen % every == 0 {
                        server.send_to(&buf[..n / 2], from).unwrap();
                    }
                }
                Err(_) if finished.load(std::sync::atomic::Ordering::Relaxed) => break,
                Err(_) => {}
            }
        }
    });
    let sockets: Vec<(UdpSocket, u32)> = flows
        .iter()
        .map(|&(sport, n)| {
            let s = lab.a.run(move || UdpSocket::bind(("198.18.0.1", sport)));
            (s.unwrap().unwrap(), n)
        })
        .collect();
    for round in 0..rounds {
        if round > 0 {
            std::thread::sleep(pause);
        }
        for (s, n) in &sockets {
            for i in (0..*n).filter(|i| i % rounds == round) {
                s.send_to(
                    &vec![i as u8; 64 + (i % 200) as usize],
                    ("198.18.0.2", 7001),
                )
                .unwrap();
                if i % 50 == 49 {
                    // Room for the answers: the lab is not a load test here.
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    answering.join().unwrap();
}

/// zcap's `--flows --json` lines of sensor `n` (exporting from 198.19.`n`.2, domain `n`),
/// per flow (zcap's table already sums a flow's active-timeout reports into one line).
fn sensor_flows(n: u32, stdout: &str) -> BTreeMap<Flow, Counts> {
    let mut flows: BTreeMap<Flow, Counts> = BTreeMap::new();
    for l in stdout.lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        let u = |k: &str| v[k].as_u64().unwrap();
        let flow = (
            format!("198.19.{n}.2"),
            n,
            s("src"),
            u("sport") as u16,
            s("dst"),
            u("dport") as u16,
            u("proto") as u8,
        );
        let counts = [
            &v["packets"][0],
            &v["bytes"][0],
            &v["packets"][1],
            &v["bytes"][1],
        ];
        let sum = flows.entry(flow).or_default();
        for (total, c) in sum.iter_mut().zip(counts) {
            *total += c.as_u64().unwrap();
        }
    }
    flows
}

/// The database's flows: per flow and sensor, the sums of `cols` (four, or two).
fn stored(pg: &Postgres<'_>, table: &str, cols: &str) -> BTreeMap<Flow, Vec<u64>> {
    let sql = format!(
        "SELECT host(peer_ip_src), export_proto_sysid, host(ip_src), port_src, host(ip_dst), \
         port_dst, ip_proto, {cols} FROM {table} GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 4"
    );
    pg.psql("zcap", &sql)
        .iter()
        .map(|row| {
            let f: Vec<&str> = row.split('|').collect();
            let flow = (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[3].parse().unwrap(),
                f[4].to_string(),
                f[5].parse().unwrap(),
                f[6].parse().unwrap(),
            );
            (flow, f[7..].iter().map(|x| x.parse().unwrap()).collect())
        })
        .collect()
}

/// The whole path, from two sensors' packets to one SQL query (a screen and a half: the
/// set-up of four real programs and the checks of what they did, in order).
#[test]
fn two_sensors_flows_reach_one_database_both_directions() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfacctd"), Need::Tool("psql"));
    let Some(bin) = pg_bin() else { return };
    let d = common::fresh_dir("scale-out");
    let labs = [Lab::new().unwrap(), Lab::new().unwrap()];
    let tag = format!("{}", std::process::id() % 1_000_000);
    let collector = Collector::new(&tag, &[&labs[0], &labs[1]]);
    let (pg, nfacctd) = start_collector_side(&collector, bin, &d);

    // The sensors: the same 5-tuples in both labs, different packet counts; the second
    // reports its flows every second too (--active-timeout 1), so a flow has several rows.
    let mut sensors = Vec::new();
    for (i, lab) in labs.iter().enumerate() {
        let n = i + 1;
        let (ipfix, domain) = (format!("198.19.{n}.1:4739"), n.to_string());
        let active = if n == 2 { "1" } else { "0" };
        let args = [
            "-i",
            &lab.b.iface,
            "-q",
            "--flows",
            "--json",
            "--ipfix",
            &ipfix,
            "--ipfix-domain",
            &domain,
            "--active-timeout",
            active,
            "udp",
        ];
        sensors.push(start_live(&lab.b.netns, &args));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pause = Duration::from_millis(2500);
    let (first, second) = (
        [(6000, 100), (6001, 200), (6002, 300)],
        [(6000, 150), (6001, 250), (6002, 350), (6003, 50)],
    );
    converse(&labs[0], &first, 2, 1, pause);
    converse(&labs[1], &second, 3, 2, pause);
    let mut want = BTreeMap::new();
    for (i, (child, rx, _)) in sensors.into_iter().enumerate() {
        let (ok, out, err) = common::finish_live(child, rx, true);
        assert!(ok, "{err}");
        assert!(!err.contains("not sent"), "{err}");
        want.extend(sensor_flows(i as u32 + 1, &out));
    }
    assert_eq!(want.len(), 7, "{want:?}");
    assert!(
        want.values().all(|c| c[2] > 0),
        "every flow has answers: {want:?}"
    );
    let rows = |n: u32| -> String {
        let sql = format!("SELECT count(*) FROM flows WHERE export_proto_sysid = {n}");
        pg.psql("zcap", &sql).concat()
    };

    // nfacctd writes every second: wait until table `flows` holds every packet the sensors
    // counted (or, after 30 s, show what it holds). The second plugin's table is read once
    // nfacctd stopped (it writes what it holds on SIGINT): with the names primitives in
    // the configuration, that plugin was seen keeping a flow's last report until then.
    let both = "sum(packets), sum(bytes), sum(rev_packets), sum(rev_bytes)";
    let total = |m: &BTreeMap<Flow, Vec<u64>>| m.values().map(|c| c[0]).sum::<u64>();
    let sent: u64 = want.values().map(|c| c[0]).sum();
    let deadline = Instant::now() + Duration::from_secs(30);
    let got = loop {
        let got = stored(&pg, "flows", both);
        if total(&got) == sent || Instant::now() > deadline {
            break got;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    drop(nfacctd);
    let forward = stored(&pg, "flows_forward_only", "sum(packets), sum(bytes)");
    for (flow, counts) in &want {
        assert_eq!(
            got.get(flow).map(Vec::as_slice),
            Some(&counts[..]),
            "flow {flow:?}: the database against the sensor's --flows --json"
        );
    }
    // Without the mapping, nfacctd keeps the forward counters and drops the reverse ones.
    for (flow, counts) in &want {
        assert_eq!(
            forward.get(flow).map(Vec::as_slice),
            Some(&counts[..2]),
            "flow {flow:?} without the reverse mapping"
        );
    }
    // Sensor 2's flows were reported twice each (after the first round, and at the end).
    assert_eq!(
        (rows(1), rows(2)),
        ("3".into(), "8".into()),
        "rows per sensor"
    );
    eprintln!("database (both directions): {got:?}");
    eprintln!("database (forward only): {forward:?}");
}

/// The names columns of a flow as stored: server_name, ja4, dns_query_name, http_host
/// (empty strings where the flow has none).
type StoredNames = [String; 4];

/// Waits (30 s at most) until table `flows` holds exactly the flows of `want`, each with
/// those names (per flow, the names of its rows: one row, or several reports that carry the
/// same names), and asserts it. The check for any exporter: the IPFIX messages of zcrx's
/// encoder below, and zcap's own with `--names`.
fn assert_names_stored(pg: &Postgres<'_>, want: &BTreeMap<Flow, StoredNames>) {
    let sql = "SELECT host(peer_ip_src), export_proto_sysid, host(ip_src), port_src, \
               host(ip_dst), port_dst, ip_proto, min(server_name), min(ja4), \
               min(dns_query_name), min(http_host), \
               count(DISTINCT (server_name, ja4, dns_query_name, http_host)) \
               FROM flows GROUP BY 1, 2, 3, 4, 5, 6, 7";
    let read = || -> BTreeMap<Flow, (StoredNames, u64)> {
        pg.psql("zcap", sql)
            .iter()
            .map(|row| {
                let f: Vec<&str> = row.split('|').collect();
                assert_eq!(f.len(), 12, "{row}: a '|' in a name?");
                let flow = (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].to_string(),
                    f[3].parse().unwrap(),
                    f[4].to_string(),
                    f[5].parse().unwrap(),
                    f[6].parse().unwrap(),
                );
                let names = [f[7], f[8], f[9], f[10]].map(String::from);
                (flow, (names, f[11].parse().unwrap()))
            })
            .collect()
    };
    let want: BTreeMap<Flow, (StoredNames, u64)> = want
        .iter()
        .map(|(f, n)| (f.clone(), (n.clone(), 1)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = read();
    while got.len() < want.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        got = read();
    }
    assert_eq!(got, want, "the database's names against the exported ones");
}

/// A TLS record holding a ClientHello for `sni` offering ALPN `h2` (TLS 1.3 and 1.2).
fn client_hello(sni: &str) -> Vec<u8> {
    use zcrx_flowcache::testdata::names::{client_hello, records};
    let versions = (43, vec![4, 3, 4, 3, 3]);
    records(
        &client_hello(Some(sni), &[b"h2"], &[0x1301, 0xc02f], &[versions]),
        16_384,
    )
}

/// A DNS query for `name`, type A.
fn dns_query(name: &str) -> Vec<u8> {
    let mut q = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        q.push(label.len() as u8);
        q.extend(label.as_bytes());
    }
    q.extend([0, 0, 1, 0, 1]);
    q
}

/// The names columns' values in IPFIX without zcap's `--names`: IPFIX messages made by
/// zcrx's own encoder (names read by `FlowNames` from a TLS ClientHello, a DNS query and an
/// HTTP request, and records without names) sent over UDP to nfacctd as configured in
/// `docs/scale-out/`: the SQL gives each flow its server name, JA4, DNS query name and HTTP
/// host, and empty strings for the flows without names.
#[test]
fn names_in_ipfix_reach_the_database() {
    use zcrx_flowcache::ipfix::decode::NameElements;
    use zcrx_flowcache::ipfix::{Encoder, EncoderConfig};
    use zcrx_flowcache::names::FlowNames;
    use zcrx_flowcache::{Direction, EndReason, FlowKey, FlowRecord, FlowStats};

    zcrx_ring::require!(Need::Privileges, Need::Tool("nfacctd"), Need::Tool("psql"));
    let Some(bin) = pg_bin() else { return };
    let d = common::fresh_dir("scale-out-names");
    let lab = Lab::new().unwrap();
    let tag = format!("{}n", std::process::id() % 1_000_000);
    let collector = Collector::new(&tag, &[&lab]);
    let (pg, nfacctd) = start_collector_side(&collector, bin, &d);

    const SYN: u8 = 0x02;
    const PSH_ACK: u8 = 0x18;
    let fwd = Direction::Forward;
    let mut tls = FlowNames::new();
    tls.tcp(fwd, 100, SYN, &[], (50000, 443));
    tls.tcp(
        fwd,
        101,
        PSH_ACK,
        &client_hello("www.example.net"),
        (50000, 443),
    );
    let mut longer = FlowNames::new();
    longer.tcp(fwd, 100, SYN, &[], (50001, 443));
    let hello = client_hello("a-much-longer-server-name.example.com");
    longer.tcp(fwd, 101, PSH_ACK, &hello, (50001, 443));
    // Whoever sends a ClientHello chooses its server name: a quote in it must neither reach
    // pmacct's SQL (which does not escape it: the whole write of its rows would fail, and
    // a crafted name would run as SQL) nor lose the other flows' rows.
    let mut hostile = FlowNames::new();
    hostile.tcp(fwd, 100, SYN, &[], (50004, 443));
    let hello = client_hello("o'brien.example'); DROP TABLE flows; --");
    hostile.tcp(fwd, 101, PSH_ACK, &hello, (50004, 443));
    let mut dns = FlowNames::new();
    dns.udp(fwd, &dns_query("example.org"), (40000, 53));
    let mut http = FlowNames::new();
    http.tcp(fwd, 0, SYN, &[], (50002, 80));
    let request = b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\n\r\n";
    http.tcp(fwd, 1, PSH_ACK, request, (50002, 80));
    let (a, b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let flows: [(u8, u16, u16, Option<&FlowNames>); 7] = [
        (6, 50000, 443, Some(&tls)),
        (6, 50001, 443, Some(&longer)),
        (6, 50004, 443, Some(&hostile)),
        (17, 40000, 53, Some(&dns)),
        (6, 50002, 80, Some(&http)),
        (17, 7000, 7001, None),
        (6, 50003, 443, None),
    ];
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut enc = Encoder::new(EncoderConfig {
        observation_domain: 1,
        ..EncoderConfig::default()
    })
    .unwrap();
    let mut messages = Vec::new();
    let mut want = BTreeMap::new();
    for (i, &(proto, sport, dport, names)) in flows.iter().enumerate() {
        let mut stats = FlowStats::default();
        stats.key = FlowKey::v4(a.into(), b.into(), proto, sport, dport);
        stats.packets = [2, 1];
        stats.bytes = [200, 100];
        stats.first_ns = now_ns - 2_000_000_000;
        stats.last_ns = now_ns - 1_000_000_000 + i as u64 * 1_000_000;
        let record = FlowRecord {
            stats,
            end: EndReason::Idle,
        };
        let names = names.map(FlowNames::names);
        let now_ms = now_ns / 1_000_000;
        enc.encode_with_names(&record, None, names, now_ms, &mut |m| {
            messages.push(m.to_vec())
        });
        let e = names.map(NameElements::from).unwrap_or_default();
        let flow = (
            "198.19.1.2".to_string(),
            1,
            "198.18.0.1".to_string(),
            sport,
            "198.18.0.2".to_string(),
            dport,
            proto,
        );
        want.insert(flow, [e.server_name, e.ja4, e.dns_query_name, e.http_host]);
    }
    enc.flush(now_ns / 1_000_000, &mut |m| messages.push(m.to_vec()));
    // What was encoded is what the flows said (not only what the encoder read back).
    let names: Vec<&StoredNames> = want.values().collect();
    assert!(names
        .iter()
        .any(|n| n[0] == "www.example.net" && n[1].starts_with("t13d")));
    assert!(names
        .iter()
        .any(|n| n[0] == "a-much-longer-server-name.example.com"));
    assert!(names
        .iter()
        .any(|n| n[0] == "o?brien.example?); DROP TABLE flows; --"));
    assert!(names.iter().all(|n| !n.iter().any(|s| s.contains('\''))));
    assert!(names.iter().any(|n| n[2] == "example.org"));
    assert!(names.iter().any(|n| n[3] == "www.example.com"));
    assert_eq!(
        names
            .iter()
            .filter(|n| n.iter().all(String::is_empty))
            .count(),
        2
    );

    let sock = lab
        .b
        .run(|| UdpSocket::bind(("198.19.1.2", 0)))
        .unwrap()
        .unwrap();
    for m in &messages {
        sock.send_to(m, ("198.19.1.1", 4739)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_names_stored(&pg, &want);
    drop(nfacctd);
    eprintln!(
        "{} IPFIX messages; database (server_name, ja4, dns_query_name, http_host): {want:?}",
        messages.len()
    );
}

/// zcap's own names end to end: `zcap -r` on a capture with a TLS and a QUIC ClientHello, a
/// DNS query and answer and an HTTP request, with `--flows --json --names --ipfix` to nfacctd
/// as configured in `docs/scale-out/`: the SQL gives each flow the server name, JA4, DNS
/// query name and HTTP host zcap printed for it (empty strings where it printed none).
#[test]
fn zcaps_names_reach_the_database() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("nfacctd"), Need::Tool("psql"));
    let Some(bin) = pg_bin() else { return };
    let d = common::fresh_dir("scale-out-zcap-names");
    let lab = Lab::new().unwrap();
    let tag = format!("{}z", std::process::id() % 1_000_000);
    let collector = Collector::new(&tag, &[&lab]);
    let (pg, nfacctd) = start_collector_side(&collector, bin, &d);
    let input = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/corpus/zcap_offline/seed-names.pcap"
    );
    let o = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns])
        .arg(common::bin())
        .args(["-r", input, "--flows", "--json", "--names"])
        .args(["--ipfix", "198.19.1.1:4739", "--ipfix-domain", "1"])
        .arg("tcp or udp")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let want: BTreeMap<Flow, StoredNames> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let flow = (
                "198.19.1.2".to_string(),
                1,
                text(&v, "src"),
                v["sport"].as_u64().unwrap() as u16,
                text(&v, "dst"),
                v["dport"].as_u64().unwrap() as u16,
                v["proto"].as_u64().unwrap() as u8,
            );
            let names = ["server_name", "ja4", "dns_query", "http_host"].map(|k| text(&v, k));
            (flow, names)
        })
        .collect();
    for (i, what) in ["server_name", "ja4", "dns_query", "http_host"]
        .iter()
        .enumerate()
    {
        assert!(
            want.values().any(|n| !n[i].is_empty()),
            "the capture has a flow with a {what}: {want:?}"
        );
    }
    assert_names_stored(&pg, &want);
    drop(nfacctd);
    eprintln!("zcap --names to the database: {want:?}");
}
