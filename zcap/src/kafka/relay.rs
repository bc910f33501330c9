//! The relay: zcap started again by a capture (`--kafka-relay BROKERS TOPIC COMPRESSION
//! SENSOR PROPERTIES LINGER_MS`), its standard input the capture's `SOCK_SEQPACKET` pair.
//! It confines itself first (no capability, no new privileges, a Landlock domain that
//! reads the system's configuration and the properties file, writes nothing, and connects
//! only to the bootstrap servers' ports), then creates librdkafka's producer (its threads
//! inherit the domain) and relays each record of the capture's batches
//! ([`super::entries`]). What goes wrong with the brokers is said on standard error, once
//! for each kind of error.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use nix::sys::socket::{recv, send, MsgFlags};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::ClientContext;

use super::{entries, Counts, BOUNDED, MAX_BATCH, PATIENT};

/// librdkafka's queue, at most: KiB and messages (queue.buffering.max.*).
const QUEUE_KIB: u32 = 64 * 1024;
const QUEUE_MESSAGES: u32 = 500_000;
/// How long a record may wait for a broker before it counts as lost (message.timeout.ms).
const MESSAGE_TIMEOUT_S: u32 = 300;
/// How long a patient record (a file's, the capture's last) waits for room in the queue
/// while librdkafka sends nothing.
const PATIENCE: Duration = Duration::from_secs(1);
/// Records librdkafka holds before a file's batch waits for it to send some. Not the
/// queue's bound: a file's records in their hundreds of thousands would fill it, and
/// librdkafka's every pass over them would miss the caches (measured: a quarter more CPU a
/// record); a live capture's records still have the whole queue. Enough for a full batch
/// (batch.size, 1 MB) to each of a few partitions as another is on its way.
const PATIENT_HELD: i32 = 20_000;
/// How long a patient record waits between looks at librdkafka's queue ([`Waits::wait_once`]).
const PATIENT_POLL: Duration = Duration::from_millis(1);
/// How long a wait spins before it sleeps ([`Waits::wait_once`]). Measured on a file's
/// million records to a local broker: sleeping at once took twice the time; 5 ms, as
/// long as spinning throughout.
const PATIENT_SPIN: Duration = Duration::from_millis(5);
/// Batches read from the pair before librdkafka is polled (each up to `MAX_BATCH` bytes:
/// tens of thousands of records).
const DRAIN: usize = 64;

/// Delivery reports, counted, and the kinds of error said so far.
#[derive(Default)]
struct Delivered {
    published: AtomicU64,
    failed: AtomicU64,
    /// Refused by a broker as larger than the topic takes (its max.message.bytes).
    too_large: AtomicU64,
    said: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Delivered {
    /// Delivery reports so far, whatever they said.
    fn reports(&self) -> u64 {
        self.published.load(Relaxed) + self.failed.load(Relaxed) + self.too_large.load(Relaxed)
    }
}

/// Kinds of error said at most: beyond, nothing more is said (the counts still are).
const KINDS_SAID: usize = 16;

impl Delivered {
    /// Says `what` on standard error, the first time an error of `kind` is seen.
    fn say_once(&self, kind: String, what: std::fmt::Arguments<'_>) {
        let mut said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        if said.len() < KINDS_SAID && said.insert(kind) {
            eprintln!("zcap: --kafka: {what}");
        }
    }
}

/// The kind of a librdkafka error: its code.
fn kind(e: &KafkaError) -> String {
    format!("{:?}", e.rdkafka_error_code())
}

struct Counting(Arc<Delivered>);

impl ClientContext for Counting {
    /// librdkafka's own log lines are not printed: its errors come to `error` too (once a
    /// kind there), and its warnings repeat them.
    fn log(&self, _: rdkafka::config::RDKafkaLogLevel, _: &str, _: &str) {}

    /// A client error (a broker refusing connections, gone, a TLS handshake failing):
    /// said once a kind.
    fn error(&self, error: KafkaError, reason: &str) {
        self.0
            .say_once(format!("client {}", kind(&error)), format_args!("{reason}"));
    }
}

impl ProducerContext for Counting {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let e = match result {
            Ok(_) => {
                self.0.published.fetch_add(1, Relaxed);
                return;
            }
            Err((e, _)) => e,
        };
        let counter = match e.rdkafka_error_code() {
            Some(RDKafkaErrorCode::MessageSizeTooLarge) => &self.0.too_large,
            _ => &self.0.failed,
        };
        counter.fetch_add(1, Relaxed);
        self.0.say_once(
            format!("delivery {}", kind(e)),
            format_args!("records not delivered: {e}"),
        );
    }
}

/// The relay's entry (`zcap --kafka-relay ...`): its exit code.
pub(crate) fn relay_main(args: &[String]) -> i32 {
    match relay(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("zcap: --kafka relay: {e:#}");
            1
        }
    }
}

fn relay(args: &[String]) -> Result<()> {
    let [brokers, topic, compression, sensor, properties, linger_ms] = args else {
        bail!("BROKERS TOPIC COMPRESSION SENSOR PROPERTIES LINGER_MS expected");
    };
    let linger_ms: u32 = linger_ms
        .parse()
        .map_err(|_| anyhow!("LINGER_MS: milliseconds expected, not {linger_ms:?}"))?;
    // The signals that stop the capture reach the relay too (a terminal's process group,
    // systemd's control group): it ends when the capture closes the pair, its records sent.
    crate::system::ignore_stop_signals().context("ignoring the capture's signals")?;
    let properties = (!properties.is_empty()).then(|| std::path::PathBuf::from(properties));
    let settings = read_properties(properties.as_deref())?;
    confine(brokers, properties.as_deref(), &settings)?;
    let delivered = Arc::new(Delivered::default());
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", brokers)
        .set("compression.type", compression)
        .set("linger.ms", linger_ms.to_string())
        .set("queue.buffering.max.kbytes", QUEUE_KIB.to_string())
        .set("queue.buffering.max.messages", QUEUE_MESSAGES.to_string())
        .set("message.timeout.ms", (MESSAGE_TIMEOUT_S * 1000).to_string());
    for (k, v) in &settings {
        config.set(k, v);
    }
    let producer: BaseProducer<Counting> = config
        .create_with_context(Counting(Arc::clone(&delivered)))
        .map_err(|e| anyhow!("the producer: {e}"))?;
    // Standard input is the pair, open for the process' life.
    let stdin = std::io::stdin();
    std::thread::scope(|s| {
        // Asked beside the relaying: a broker away must not hold the records up.
        s.spawn(|| check_topic(&producer, topic, &delivered));
        run(&producer, stdin.as_fd(), topic, sensor, &delivered)
    })
}

/// Says so if the brokers answer that `topic` does not exist (and do not create it): its
/// records wait for it, then count as not delivered. Nothing if they do not answer (the
/// client's errors say why).
fn check_topic(producer: &BaseProducer<Counting>, topic: &str, delivered: &Delivered) {
    let Ok(metadata) = producer
        .client()
        .fetch_metadata(Some(topic), Duration::from_secs(10))
    else {
        return;
    };
    for t in metadata.topics() {
        // Not a topic being created (LeaderNotAvailable) or the like: one that is not there
        // or may not be written.
        let Some(e) = t.error().map(RDKafkaErrorCode::from) else {
            continue;
        };
        if matches!(
            e,
            RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::TopicAuthorizationFailed
        ) {
            delivered.say_once(
                "topic".into(),
                format_args!(
                    "topic {}: {e}: its records wait for it, then count as not delivered",
                    t.name()
                ),
            );
        }
    }
}

/// Relays until the pair closes, then sends what is held (at most `FLUSH_S`) and the last
/// counts.
fn run(
    producer: &BaseProducer<Counting>,
    pair: BorrowedFd<'_>,
    topic: &str,
    sensor: &str,
    delivered: &Delivered,
) -> Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let headers = OwnedHeaders::new().insert(Header {
        key: "sensor",
        value: Some(sensor),
    });
    let mut counts = Counts::default();
    let mut waits = Waits {
        delivered,
        stalled: false,
        bounded_left: Duration::from_secs(super::FLUSH_S),
        reported: 0,
    };
    let mut buf = vec![0u8; MAX_BATCH + 1];
    let mut last_said = Instant::now();
    // The counts so far: cumulative, so one the capture has not read yet may be dropped
    // (`last`: the final one, which waits for room).
    let say = |counts: &Counts, last: bool| {
        let c = combined(counts, delivered, producer.in_flight_count().max(0) as u64);
        let flags = match last {
            true => MsgFlags::MSG_NOSIGNAL,
            false => MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT,
        };
        let _ = send(pair.as_raw_fd(), &c.encode(), flags);
    };
    loop {
        let mut fds = [PollFd::new(pair, PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(100u16));
        let mut open = true;
        // A bounded drain: librdkafka's delivery reports are served between rounds.
        for _ in 0..DRAIN {
            match recv(pair.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
                Ok(0) => {
                    open = false;
                    break;
                }
                Ok(n) => {
                    let Some((&flags, batch)) = buf[..n].split_first() else {
                        continue;
                    };
                    let patience = (flags & PATIENT != 0, flags & BOUNDED != 0);
                    // A file's wait for librdkafka to send some; a live capture's last
                    // records have the queue's room (and only see whether it sends).
                    match patience {
                        (true, false) => waits.until_held_below(producer, PATIENT_HELD),
                        (true, true) => waits.note_reports(),
                        (false, _) => {}
                    }
                    for (key, value) in entries(batch) {
                        let record = (key, value, patience);
                        let state = (&mut counts, &mut waits);
                        relay_one(producer, record, topic, &headers, state);
                    }
                }
                Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => break,
                Err(e) => return Err(anyhow!("reading the capture's records: {e}")),
            }
        }
        producer.poll(Duration::ZERO);
        if !open {
            let _ = producer.flush(Duration::from_secs(super::FLUSH_S));
            // What is still held is lost.
            let held = producer.in_flight_count().max(0) as u64;
            delivered.failed.fetch_add(held, Relaxed);
            say(&counts, true);
            return Ok(());
        }
        if last_said.elapsed() >= Duration::from_secs(1) {
            say(&counts, false);
            last_said = Instant::now();
        }
    }
}

/// How patient records wait for room in librdkafka's queue ([`relay_one`]).
struct Waits<'a> {
    /// What librdkafka reported delivered or not: its progress.
    delivered: &'a Delivered,
    /// No delivery report came in the last wait (the brokers away): no patient record
    /// waits until one comes.
    stalled: bool,
    /// What is left of the time bounded records (a live capture's last) may wait, in all.
    bounded_left: Duration,
    /// The delivery reports when a patient batch last looked: more now, and librdkafka is
    /// sending again.
    reported: u64,
}

/// Where a wait stands: when the last delivery report came, and the reports then.
type Window = Option<(Instant, u64)>;

impl Waits<'_> {
    /// Whether a patient record may wait (`bounded`: one of a live capture's last).
    fn may_wait(&self, bounded: bool) -> bool {
        !(self.stalled || bounded && self.bounded_left.is_zero())
    }

    /// A moment's wait while a patient record waits for room, librdkafka's reports served
    /// after it: `stalled` once none has come for [`PATIENCE`]. For the first
    /// [`PATIENT_SPIN`] of a wait (`spin`), the reports are served as they come: rdkafka
    /// polls without blocking through a timeout's last millisecond, so that spins, and a
    /// local broker's acknowledgements come within it (asleep, they are served late and
    /// librdkafka's records grow cold: slower). After it, the wait sleeps: a slow broker
    /// costs no CPU.
    fn wait_once(
        &mut self,
        producer: &BaseProducer<Counting>,
        (bounded, spin): (bool, bool),
        window: &mut Window,
    ) {
        let started = Instant::now();
        if spin {
            producer.poll(PATIENT_POLL);
        } else {
            std::thread::sleep(PATIENT_POLL);
            producer.poll(Duration::ZERO);
        }
        if bounded {
            self.bounded_left = self.bounded_left.saturating_sub(started.elapsed());
        }
        let reports = self.delivered.reports();
        match *window {
            Some((_, before)) if reports == before => {}
            _ => *window = Some((started, reports)),
        }
        if window.is_some_and(|(since, _)| since.elapsed() >= PATIENCE) {
            // Until a report comes after this one.
            self.stalled = true;
            self.reported = reports;
        }
    }

    /// A wait that found librdkafka stalled is not begun again before a delivery report
    /// comes (else each batch would wait its second with the brokers away): `stalled`
    /// ends with one.
    fn note_reports(&mut self) {
        let reports = self.delivered.reports();
        if reports != self.reported {
            self.stalled = false;
            self.reported = reports;
        }
    }

    /// Waits, as a file's record may (no time bound), until librdkafka holds fewer than
    /// `most` records.
    fn until_held_below(&mut self, producer: &BaseProducer<Counting>, most: i32) {
        let (mut window, began) = (None, Instant::now());
        loop {
            self.note_reports();
            if producer.in_flight_count() < most || !self.may_wait(false) {
                return;
            }
            let spin = began.elapsed() < PATIENT_SPIN;
            self.wait_once(producer, (false, spin), &mut window);
        }
    }
}

/// The relay's counts: what librdkafka refused at once (`refused`, counted by the relay)
/// with what its delivery reports said, and `waiting` still held.
fn combined(refused: &Counts, delivered: &Delivered, waiting: u64) -> Counts {
    Counts {
        published: delivered.published.load(Relaxed),
        failed: refused.failed + delivered.failed.load(Relaxed),
        too_large: refused.too_large + delivered.too_large.load(Relaxed),
        waiting,
        ..*refused
    }
}

/// Hands one record from the capture to librdkafka, counting what it refuses.
fn relay_one(
    producer: &BaseProducer<Counting>,
    (key, value, (patient, bounded)): (&[u8], &[u8], (bool, bool)),
    topic: &str,
    headers: &OwnedHeaders,
    (counts, waits): (&mut Counts, &mut Waits<'_>),
) {
    let mut record = BaseRecord::to(topic)
        .key(key)
        .payload(value)
        .headers(headers.clone());
    // A patient record waits for room while librdkafka sends; not while it sends nothing
    // (the brokers away: then no patient record waits until a delivery report comes).
    // A bounded record (a live capture's last) waits only while the run's budget lasts.
    let (mut window, began) = (None, Instant::now());
    let sent = loop {
        match producer.send(record) {
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r))
                if patient && waits.may_wait(bounded) =>
            {
                record = r;
                let spin = began.elapsed() < PATIENT_SPIN;
                waits.wait_once(producer, (bounded, spin), &mut window);
            }
            other => break other,
        }
    };
    match sent {
        // A stalled wait ends with a delivery report ([`Waits::note_reports`]).
        Ok(()) => {}
        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
            counts.queue_full += 1;
        }
        Err((KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge), _)) => {
            counts.too_large += 1;
        }
        Err(_) => counts.failed += 1,
    }
}

/// `--kafka-config FILE`: librdkafka properties, `key=value` a line, `#` comments.
fn read_properties(path: Option<&std::path::Path>) -> Result<Vec<(String, String)>> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--kafka-config {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').ok_or_else(|| {
            anyhow!(
                "--kafka-config {}:{}: key=value expected",
                path.display(),
                n + 1
            )
        })?;
        out.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(out)
}

/// No capability, no new privileges, and a Landlock domain: the file system read-only at
/// `/etc` and `/usr` (the resolver, the CA certificates), the properties file and the
/// files its `*.location` settings name; TCP connect only to `brokers`' ports.
fn confine(
    brokers: &str,
    properties: Option<&std::path::Path>,
    settings: &[(String, String)],
) -> Result<()> {
    use landlock::{
        Access, AccessFs, AccessNet, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr,
    };
    crate::system::drop_capabilities()?;
    nix::sys::prctl::set_no_new_privs().context("prctl(PR_SET_NO_NEW_PRIVS)")?;
    let abi = crate::confine::LANDLOCK_ABI;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.create())
        .context("Landlock: the relay")?;
    let mut readable: Vec<std::path::PathBuf> = vec!["/etc".into(), "/usr".into()];
    // Landlock reads through links: /etc/resolv.conf is often systemd-resolved's, in /run.
    if let Some(dir) = std::fs::canonicalize("/etc/resolv.conf")
        .ok()
        .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
    {
        readable.push(dir);
    }
    readable.extend(properties.map(std::path::Path::to_path_buf));
    readable.extend(
        settings
            .iter()
            .filter(|(k, _)| k.ends_with(".location"))
            .map(|(_, v)| std::path::PathBuf::from(v)),
    );
    for path in readable.iter().filter(|p| p.exists()) {
        let read = match path.is_dir() {
            true => AccessFs::from_read(abi),
            false => AccessFs::from_read(abi) & AccessFs::from_file(abi),
        };
        if let Ok(fd) = PathFd::new(path) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, read))
                .with_context(|| format!("Landlock: {}", path.display()))?;
        }
    }
    for broker in brokers.split(',') {
        let port = broker
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .ok_or_else(|| anyhow!("--kafka {broker}: HOST:PORT expected"))?;
        ruleset = ruleset
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .context("Landlock: a broker's port")?;
    }
    ruleset.restrict_self().context("Landlock: entering")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records refused at once and records whose delivery failed are both lost; none is
    /// dropped from the counts when they are put together.
    #[test]
    fn refused_and_undelivered_records_both_count() {
        let refused = Counts {
            failed: 3,
            queue_full: 4,
            too_large: 5,
            ..Counts::default()
        };
        let delivered = Delivered::default();
        delivered.published.store(10, Relaxed);
        delivered.failed.store(2, Relaxed);
        delivered.too_large.store(1, Relaxed);
        let c = combined(&refused, &delivered, 7);
        assert_eq!(
            (c.published, c.failed, c.queue_full, c.too_large, c.waiting),
            (10, 5, 4, 6, 7)
        );
        assert_eq!(c.lost(), 5 + 4 + 6);
    }
}
