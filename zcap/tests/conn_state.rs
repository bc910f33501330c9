//! Live, in the netns lab: real TCP connections between the kernel's sockets in the two
//! namespaces, captured by zcap on one side with `--flows --json`. A connection that sends
//! both ways and closes ends SF with Zeek's letters for its handshake, data and FINs; one to a
//! closed port is REJ, "Sr". Every flow's Community ID equals the reference's (the
//! `communityid` Python package; skipped with a message without it, a failure under CI=true).

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use common::{finish_live, live_on_b};
use serde_json::Value;
use zcrx_ring::lab::{Lab, Need};

#[test]
fn real_connections_end_sf_and_rej() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let (child, rx, _) = live_on_b(&lab, &["--flows", "--json", "-q", "tcp"]);
    let server_ip = lab.b.ip;
    let listener = lab
        .b
        .run(move || TcpListener::bind((server_ip, 7001)))
        .unwrap()
        .unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut request = [0u8; 100];
        s.read_exact(&mut request).unwrap();
        s.write_all(&[7; 300]).unwrap();
        // Until the client closes; then this side closes too.
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
    });
    lab.a
        .run(move || -> std::io::Result<()> {
            let mut c = TcpStream::connect((server_ip, 7001))?;
            c.write_all(&[1; 100])?;
            let mut reply = [0u8; 300];
            c.read_exact(&mut reply)?;
            Ok(())
        })
        .unwrap()
        .unwrap();
    server.join().unwrap();
    let refused = lab
        .a
        .run(move || TcpStream::connect((server_ip, 7002)))
        .unwrap();
    assert!(refused.is_err(), "nothing listens on 7002");
    // The last ACKs reach the ring, and a block timeout hands them over.
    std::thread::sleep(Duration::from_millis(500));
    let (ok, out, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    let flows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_port = |p: u64| {
        flows
            .iter()
            .find(|f| f["dport"] == p)
            .unwrap_or_else(|| panic!("no flow to port {p}: {out}"))
    };
    let sf = by_port(7001);
    let history = sf["history"].as_str().unwrap();
    assert_eq!(sf["conn_state"], "SF", "{sf}");
    // The handshake and the client's data first; the server's data, both FINs; nothing
    // retransmitted or reset.
    assert!(history.starts_with("ShAD"), "{history}");
    for letter in ['d', 'F', 'f'] {
        assert!(history.contains(letter), "{letter} in {history}");
    }
    assert!(!history.contains(['t', 'T', 'r', 'R']), "{history}");
    let rej = by_port(7002);
    assert_eq!(
        (&rej["conn_state"], &rej["history"]),
        (&"REJ".into(), &"Sr".into())
    );
    let all: Vec<(u16, &Value)> = flows.iter().map(|f| (0, f)).collect();
    if let Some(want) = common::reference_community_ids("community_id_comparison", &all) {
        for ((_, f), want) in all.iter().zip(&want) {
            assert_eq!(f["community_id"].as_str(), Some(want.as_str()), "{f}");
        }
        eprintln!(
            "conn_state: SF {history:?}, REJ \"Sr\"; {} live flows' Community IDs equal the reference's",
            want.len()
        );
    }
}

/// On `lo` (and `any`) the kernel hands a packet socket each loopback packet twice, going out
/// and coming in: zcap keeps one copy, as libpcap does, so a flow counts each packet once
/// (its packets sum to the packets captured, the kernel's "received by filter" count agrees)
/// and its history shows no retransmission.
#[test]
fn loopback_packets_count_once() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    lab.b.ip(&["link", "set", "lo", "up"]).unwrap();
    for iface in ["lo", "any"] {
        let (child, rx, _) = common::start_live(
            &lab.b.netns,
            &["-i", iface, "--flows", "--json", "tcp port 7003"],
        );
        let listener = lab
            .b
            .run(|| TcpListener::bind(("127.0.0.1", 7003)))
            .unwrap()
            .unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; 100];
            s.read_exact(&mut request).unwrap();
            s.write_all(&[7; 300]).unwrap();
        });
        lab.b
            .run(|| -> std::io::Result<()> {
                let mut c = TcpStream::connect(("127.0.0.1", 7003))?;
                c.write_all(&[1; 100])?;
                let mut reply = [0u8; 300];
                c.read_exact(&mut reply)?;
                Ok(())
            })
            .unwrap()
            .unwrap();
        server.join().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let (ok, out, err) = finish_live(child, rx, true);
        assert!(ok, "{iface}: {err}");
        let flow: Value = serde_json::from_str(out.lines().next().expect("a flow")).unwrap();
        let packets = flow["packets"][0].as_u64().unwrap() + flow["packets"][1].as_u64().unwrap();
        let count = |what: &str| -> u64 {
            err.lines()
                .find(|l| l.ends_with(what))
                .and_then(|l| l.split_whitespace().next()?.parse().ok())
                .unwrap_or_else(|| panic!("{iface}: no '{what}' line: {err}"))
        };
        let captured = count(" packets captured");
        assert_eq!(packets, captured, "{iface}: {flow}\n{err}");
        assert_eq!(
            count(" packets received by filter"),
            captured,
            "{iface}: {err}"
        );
        let history = flow["history"].as_str().unwrap();
        assert!(!history.contains(['t', 'T']), "{iface}: {history}");
        assert_eq!(flow["conn_state"], "SF", "{iface}: {flow}");
        eprintln!("{iface}: {packets} packets, each once; history {history:?}");
    }
}
