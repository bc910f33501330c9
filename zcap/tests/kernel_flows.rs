//! `zcap --flows --flows-in-kernel` against `zcap --flows` on the ring, both on the lab's
//! receiving veth at once, on the same UDP and TCP traffic (at tcx, and at XDP against the
//! ring's received packets); and the combinations it refuses. Needs root; under `CI=true` a
//! skip is a failure.

use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::time::Duration;

use common::{finish_live, live_on_b, zcap};
use serde_json::Value;
use zcrx_ring::lab::{Lab, Need};

/// Per flow (src, sport, dst, dport, proto as the initiator sees it): packets and bytes per
/// direction.
type Flows = BTreeMap<(String, u64, String, u64, u64), (Vec<u64>, Vec<u64>)>;

fn flows(out: &str) -> Flows {
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|f| matches!(f["proto"].as_u64(), Some(6 | 17)))
        .map(|f| {
            let pair = |v: &Value| -> Vec<u64> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect()
            };
            (
                (
                    f["src"].as_str().unwrap().to_string(),
                    f["sport"].as_u64().unwrap(),
                    f["dst"].as_str().unwrap().to_string(),
                    f["dport"].as_u64().unwrap(),
                    f["proto"].as_u64().unwrap(),
                ),
                (pair(&f["packets"]), pair(&f["bytes"])),
            )
        })
        .collect()
}

/// UDP from `n` sockets in a to one in b (30 datagrams each, growing sizes) and a TCP
/// connection (100 KB one way, 500 bytes back). Returns the datagrams b received.
fn traffic(lab: &Lab, n: usize) -> usize {
    let to: SocketAddr = (lab.b.ip, 9000).into();
    let rx = lab.b.run(|| UdpSocket::bind(to)).unwrap().unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let listener = lab
        .b
        .run(|| TcpListener::bind((lab.b.ip, 9100)))
        .unwrap()
        .unwrap();
    let senders: Vec<UdpSocket> = (0..n)
        .map(|_| {
            lab.a
                .run(|| UdpSocket::bind((lab.a.ip, 0)))
                .unwrap()
                .unwrap()
        })
        .collect();
    let (mut received, mut buf) = (0, [0u8; 2048]);
    for i in 0..30 {
        for s in &senders {
            s.send_to(&vec![1u8; 30 + i * 41], to).unwrap();
        }
        while received < (i + 1) * n {
            match rx.recv(&mut buf) {
                Ok(_) => received += 1,
                Err(_) => break,
            }
        }
    }
    std::thread::scope(|s| {
        let server = s.spawn(|| {
            let (mut c, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            c.read_to_end(&mut got).unwrap();
            c.write_all(&got[..500]).unwrap();
        });
        let mut c = lab
            .a
            .run(|| TcpStream::connect((lab.b.ip, 9100)))
            .unwrap()
            .unwrap();
        c.write_all(&vec![3u8; 100_000]).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut back = Vec::new();
        c.read_to_end(&mut back).unwrap();
        server.join().unwrap();
    });
    received
}

/// A zcap started by [`live_on_b`]: the process and its standard error's lines.
type Live = (std::process::Child, std::sync::mpsc::Receiver<String>);

/// Stops the ring's zcap and the kernel counter's (after the traffic), checks that both
/// ended well with the same six flows (packets and bytes per direction) and the same packets
/// captured; the kernel's flows, its standard error and the packets it saw.
fn same_flows_as_the_ring(ring: Live, kernel: Live) -> (Flows, String, u64) {
    let (ok, ring_out, ring_err) = finish_live(ring.0, ring.1, true);
    assert!(ok, "{ring_err}");
    let (ok, kernel_out, kernel_err) = finish_live(kernel.0, kernel.1, true);
    assert!(ok, "{kernel_err}");
    let (from_ring, from_kernel) = (flows(&ring_out), flows(&kernel_out));
    assert_eq!(from_kernel.len(), 6, "5 UDP flows, 1 TCP: {kernel_out}");
    assert_eq!(from_kernel, from_ring, "{kernel_err}");
    // "packets captured" is what the program saw: every packet the ring saw too.
    let count = |err: &str, what: &str| common::count(err, what);
    let seen = count(&kernel_err, " packets captured");
    assert_eq!(
        seen,
        count(&ring_err, " packets captured"),
        "{kernel_err}\n{ring_err}"
    );
    (from_kernel, kernel_err, seen)
}

#[test]
fn kernel_flows_are_the_rings_flows() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let (ring, ring_rx, _) = live_on_b(&lab, &["--flows", "--json", "-q"]);
    let (kernel, kernel_rx, _) = live_on_b(&lab, &["--flows", "--flows-in-kernel", "--json", "-q"]);
    let received = traffic(&lab, 5);
    assert_eq!(received, 150, "every datagram passed");
    std::thread::sleep(Duration::from_millis(500));
    let (from_kernel, kernel_err, seen) =
        same_flows_as_the_ring((ring, ring_rx), (kernel, kernel_rx));
    assert!(
        kernel_err.contains(" without room in the flow map"),
        "{kernel_err}"
    );
    eprintln!("kernel = ring: {from_kernel:?}; {seen} packets");
}

/// `--flows-in-kernel-hook xdp` (no -Q: received frames) against the ring's `-Q in` on the
/// same traffic: the same flows, packets and bytes, and the same packets seen; the program is
/// at b's XDP hook while zcap runs and gone after.
#[test]
fn kernel_flows_at_xdp_are_the_rings_received_flows() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("ethtool"));
    let lab = Lab::new().unwrap();
    // The ring counts packets after GRO, which (where it is on) can merge TCP segments that
    // XDP counted one by one: off, both count the frames as they arrived.
    let gro = Command::new("ip")
        .args(["netns", "exec", &lab.b.netns, "ethtool", "-K", &lab.b.iface])
        .args(["gro", "off"])
        .status()
        .unwrap();
    assert!(gro.success(), "ethtool -K {} gro off", lab.b.iface);
    let (ring, ring_rx, _) = live_on_b(&lab, &["-Q", "in", "--flows", "--json", "-q"]);
    let xdp = [
        "--flows",
        "--flows-in-kernel",
        "--flows-in-kernel-hook",
        "xdp",
        "--json",
        "-q",
    ];
    let (kernel, kernel_rx, _) = live_on_b(&lab, &xdp);
    let link = lab.b.ip(&["link", "show", "dev", &lab.b.iface]).unwrap();
    assert!(link.contains("xdp"), "no XDP program on b: {link}");
    let received = traffic(&lab, 5);
    assert_eq!(received, 150, "every datagram passed");
    std::thread::sleep(Duration::from_millis(500));
    let (from_kernel, _, seen) = same_flows_as_the_ring((ring, ring_rx), (kernel, kernel_rx));
    let link = lab.b.ip(&["link", "show", "dev", &lab.b.iface]).unwrap();
    assert!(!link.contains("xdp"), "the program stayed on b: {link}");
    for (k, (packets, _)) in &from_kernel {
        assert_eq!(packets[1], 0, "{k:?}: XDP sees what b receives only");
    }
    eprintln!("XDP = ring -Q in: {from_kernel:?}; {seen} packets");
}

#[test]
fn flows_in_kernel_refuses_what_needs_packets() {
    zcrx_ring::require!(Need::Privileges);
    for (args, says) in [
        (
            &[
                "-i",
                "lo",
                "--flows-in-kernel",
                "--flows",
                "-w",
                "/dev/null",
            ][..],
            "-w",
        ),
        (
            &["-i", "lo", "--flows-in-kernel", "--flows", "--names"][..],
            "--names",
        ),
        (
            &["-i", "lo", "--flows-in-kernel", "--flows", "--top"][..],
            "--top",
        ),
        (
            &["-i", "lo", "--flows-in-kernel", "--flows", "udp"][..],
            "filter",
        ),
        (&["-i", "any", "--flows-in-kernel", "--flows"][..], "-i"),
        (&["-i", "lo", "--flows-in-kernel"][..], "--flows"),
        // XDP has no egress.
        (
            &[
                "-i",
                "lo",
                "--flows-in-kernel",
                "--flows",
                "--flows-in-kernel-hook",
                "xdp",
                "-Q",
                "out",
            ][..],
            "-Q in",
        ),
        (
            &[
                "-i",
                "lo",
                "--flows-in-kernel",
                "--flows",
                "--flows-in-kernel-hook",
                "xdp",
                "-Q",
                "inout",
            ][..],
            "received frames only",
        ),
        // clap's own: a hook it does not know, a hook without --flows-in-kernel.
        (
            &[
                "-i",
                "lo",
                "--flows-in-kernel",
                "--flows",
                "--flows-in-kernel-hook",
                "tc",
            ][..],
            "possible values: tcx, xdp",
        ),
        (
            &["-i", "lo", "--flows", "--flows-in-kernel-hook", "xdp"][..],
            "required",
        ),
    ] {
        let o = zcap(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--flows-in-kernel") && err.contains(says),
            "{args:?}: {err}"
        );
    }
}

/// Attached as root, then `-Z nobody` and the sandbox: the map reads go on as the
/// unprivileged user, and the flows are all there.
#[test]
fn flows_in_kernel_reads_the_map_after_dropping_privileges() {
    zcrx_ring::require!(Need::Privileges);
    let lab = Lab::new().unwrap();
    let (kernel, rx, _) = live_on_b(
        &lab,
        &[
            "--flows",
            "--flows-in-kernel",
            "--json",
            "-q",
            "-Z",
            "nobody",
        ],
    );
    assert_eq!(traffic(&lab, 2), 60);
    std::thread::sleep(Duration::from_millis(300));
    let (ok, out, err) = finish_live(kernel, rx, true);
    assert!(ok, "{err}");
    let f = flows(&out);
    assert_eq!(f.len(), 3, "2 UDP flows, 1 TCP: {out}\n{err}");
    for (k, (packets, _)) in &f {
        if k.4 == 17 {
            assert_eq!(packets, &vec![30, 0], "{k:?}");
        }
    }
}
