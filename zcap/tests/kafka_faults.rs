//! `zcap --kafka` against brokers that make trouble: a topic that does not exist (and is not
//! created), a topic whose records may be smaller than zcap's, a broker that answers slowly
//! (a proxy that holds every chunk), a broker that speaks only TLS. Each gets a clear
//! message on standard error, the capture's own output stays whole, and the report's counts
//! say what was lost and why. (A broker that is not there, and one stopped and started
//! again under live captures, are in `kafka.rs`.)

use crate::common;
use crate::scale_out_clickhouse::{capture, Broker};

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use zcrx_ring::lab::Need;

/// [`kafka::publish`](crate::kafka::publish): the number of its JSON lines, and its
/// standard error.
fn publish(pcap: &Path, brokers: &str, topic: &str, more: &[&str]) -> (usize, String) {
    let (lines, err) = crate::kafka::publish(pcap, brokers, topic, more);
    (lines.len(), err)
}

fn properties(dir: &Path, name: &str, lines: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, lines).unwrap();
    p.display().to_string()
}

#[test]
fn a_topic_that_does_not_exist_is_said_and_its_records_counted() {
    zcrx_ring::require!(Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-no-topic");
    let broker = Broker::start(&dir);
    let pcap = dir.join("a.pcap");
    capture(&pcap, 1, 20, 53);
    // nisshi creates a topic a producer asks for; a client can say not to.
    let no_create = properties(&dir, "p", "allow.auto.create.topics=false\n");
    let (lines, err) = publish(
        &pcap,
        &broker.addr(),
        "nosuch",
        &["--kafka-config", &no_create],
    );
    assert_eq!(lines, 20, "the capture's own output is whole");
    assert!(
        err.contains("zcap: --kafka: topic nosuch: ") && err.contains("Unknown topic"),
        "{err}"
    );
    assert!(
        err.contains("0 flow records published to Kafka topic nosuch (20 lost: 20 not delivered"),
        "{err}"
    );
}

#[test]
fn records_larger_than_the_topic_takes_are_said_and_counted_too_large() {
    zcrx_ring::require!(Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-too-large");
    let broker = Broker::start(&dir);
    broker.create_topic_with("small", 1, &["max.message.bytes=300"]);
    let pcap = dir.join("a.pcap");
    capture(&pcap, 1, 20, 53);
    let (lines, err) = publish(&pcap, &broker.addr(), "small", &[]);
    assert_eq!(lines, 20);
    assert!(
        err.contains("zcap: --kafka: records not delivered: ") && err.contains("too large"),
        "{err}"
    );
    assert!(
        err.contains("0 flow records published to Kafka topic small (20 lost: 0 not delivered, 0 queue full, 20 too large"),
        "{err}"
    );
}

/// A TCP proxy from `listener` to `to` on loopback that holds each chunk `delay` before
/// passing it on, both ways.
fn slow_proxy(listener: TcpListener, to: u16, delay: Duration) {
    std::thread::spawn(move || {
        for client in listener.incoming().map_while(Result::ok) {
            let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            for (mut from, mut into) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 1 << 16];
                    while let Ok(n @ 1..) = from.read(&mut buf) {
                        std::thread::sleep(delay);
                        if into.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = into.shutdown(Shutdown::Write);
                });
            }
        }
    });
}

/// Every answer from the broker 300 ms late: a file's 400 flows are all published (the
/// relay waits for room while librdkafka sends), later but whole.
#[test]
fn a_broker_that_answers_slowly_gets_every_record_late_but_whole() {
    zcrx_ring::require!(Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-slow");
    // The broker advertises the proxy: clients come back through it.
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = proxy.local_addr().unwrap().port();
    let broker = Broker::start_with(&dir, None, &[], Some(proxy_port));
    broker.create_topic("slow", 2);
    slow_proxy(proxy, broker.port(), Duration::from_millis(300));
    let pcap = dir.join("a.pcap");
    std::fs::write(&pcap, common::pcap_bytes(400, 400)).unwrap();
    let started = Instant::now();
    let brokers = format!("127.0.0.1:{proxy_port}");
    let (lines, err) = publish(&pcap, &brokers, "slow", &[]);
    assert_eq!(lines, 400);
    assert!(
        err.contains("400 flow records published to Kafka topic slow (0 lost:"),
        "{err}"
    );
    eprintln!(
        "400 records through a 300 ms proxy in {:?}",
        started.elapsed()
    );
}

/// A broker that speaks only TLS: with the CA in `--kafka-config` every record is
/// published; without TLS the handshake failure is said and every record counted lost.
#[test]
fn a_tls_broker_takes_records_over_tls_and_a_plain_client_is_told_why_not() {
    zcrx_ring::require!(Need::Tool("cargo"), Need::Tool("openssl"));
    let dir = common::fresh_dir("kafka-tls");
    let pki = common::Pki::new(&dir.join("pki"));
    let tls = [
        "--cert",
        &pki.file("server.pem"),
        "--key",
        &pki.file("server.key"),
    ];
    let tls: Vec<String> = tls.iter().map(|s| s.to_string()).collect();
    let broker = Broker::start_with(&dir, None, &tls, None);
    let pcap = dir.join("a.pcap");
    capture(&pcap, 1, 20, 53);
    let ssl = properties(
        &dir,
        "ssl",
        &format!(
            "security.protocol=ssl\nssl.ca.location={}\n",
            pki.file("ca.pem")
        ),
    );
    let (lines, err) = publish(&pcap, &broker.addr(), "tls", &["--kafka-config", &ssl]);
    assert_eq!(lines, 20);
    assert!(
        err.contains("20 flow records published to Kafka topic tls (0 lost:"),
        "{err}"
    );
    let (lines, err) = publish(&pcap, &broker.addr(), "tls", &[]);
    eprintln!("a plain client of a TLS broker:\n{err}");
    assert_eq!(lines, 20);
    assert!(err.contains("zcap: --kafka: "), "{err}");
    assert!(
        err.contains("0 flow records published to Kafka topic tls (20 lost: 20 not delivered"),
        "{err}"
    );
}

/// A broker that requires SASL (SCRAM-SHA-256): with the user's password in `--kafka-config`
/// every record is published; with a wrong one the authentication failure is said and every
/// record counted lost.
#[test]
fn a_sasl_broker_takes_the_right_password_and_says_why_it_refuses_a_wrong_one() {
    zcrx_ring::require!(Need::Tool("cargo"));
    let dir = common::fresh_dir("kafka-sasl");
    let broker = Broker::start_sasl(&dir, "sensor", "s3cret-pass");
    let pcap = dir.join("a.pcap");
    capture(&pcap, 1, 20, 53);
    let sasl = |password: &str| {
        format!(
            "security.protocol=sasl_plaintext\nsasl.mechanisms=SCRAM-SHA-256\n\
             sasl.username=sensor\nsasl.password={password}\n"
        )
    };
    let good = properties(&dir, "good", &sasl("s3cret-pass"));
    let (lines, err) = publish(&pcap, &broker.addr(), "sasl", &["--kafka-config", &good]);
    assert_eq!(lines, 20);
    assert!(
        err.contains("20 flow records published to Kafka topic sasl (0 lost:"),
        "{err}"
    );
    let bad = properties(&dir, "bad", &sasl("not-the-pass-9f"));
    let (lines, err) = publish(&pcap, &broker.addr(), "sasl", &["--kafka-config", &bad]);
    assert_eq!(lines, 20);
    assert!(
        err.contains("zcap: --kafka: ") && err.contains("SASL authentication error"),
        "{err}"
    );
    assert!(
        err.contains("0 flow records published to Kafka topic sasl (20 lost: 20 not delivered"),
        "{err}"
    );
    // The password is said nowhere.
    assert!(
        !err.contains("s3cret-pass") && !err.contains("wrong"),
        "{err}"
    );
}
