//! `--kafka BROKERS`: each flow record published to a Kafka topic, as the `--json` object
//! zcap prints or as goflow2's messages ([`goflow2`], one a direction), keyed by the
//! flow's Community ID (a flow's records share a partition), the sensor's name in the
//! header `sensor`, batched and compressed by librdkafka.
//!
//! The client is not in the capturing process. Before the sandbox, zcap starts itself
//! again as the **relay** (`/proc/self/exe --kafka-relay ...`, like the `-z` hook runner:
//! none of zcap's descriptors, memory or capabilities), which alone talks to the brokers
//! ([`relay`], feature `kafka`). The capture hands it records in batches ([`entries`]) on
//! a `SOCK_SEQPACKET` pair, sent when full and on every tick. A live capture never waits: a
//! batch the pair cannot take now (the relay behind) is dropped and counted; a file's
//! records, and a live capture's last ones for a bounded time, wait for room
//! ([`Patience`]). The relay hands records to librdkafka, whose queue is bounded (64 MiB,
//! 500 000 records): while the brokers are away it holds what fits for up to five minutes,
//! drops and counts the rest, and sends what it holds when they come back. A file's records
//! wait while it holds a few batches' worth, so that they do not pile up in that queue.
//! Every second, and at the end, the relay says on the pair what became of the records
//! ([`Counts`]).

#[cfg(feature = "kafka")]
pub(crate) mod goflow2;
#[cfg(feature = "kafka")]
pub(crate) mod relay;

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};

/// The hidden first argument that makes zcap the relay.
pub(crate) const RELAY_FLAG: &str = "--kafka-relay";

/// How long the capture waits at its end for the relay's last counts: the relay sends what
/// it holds for [`FLUSH_S`] first. Both within systemd's stop timeout (the unit's 30 s).
pub(crate) const FINISH_S: u64 = 15;
/// How long the relay sends what it holds at the end.
#[cfg_attr(not(feature = "kafka"), allow(dead_code))]
pub(crate) const FLUSH_S: u64 = 10;
/// The largest message on the pair: records are batched up to this size, and a record
/// larger than a batch can hold (a flow object with every name is far smaller) is dropped.
pub(crate) const MAX_BATCH: usize = 60 << 10;

/// `--kafka` and its settings.
#[derive(Debug, Clone)]
pub(crate) struct KafkaConfig {
    /// Bootstrap servers, HOST:PORT[,HOST:PORT...].
    pub(crate) brokers: String,
    pub(crate) topic: String,
    /// none, gzip, snappy, lz4 or zstd.
    pub(crate) compression: String,
    /// The `sensor` header.
    pub(crate) sensor: String,
    /// `--kafka-config FILE`: librdkafka properties, `key=value` a line (TLS, SASL).
    pub(crate) properties: Option<std::path::PathBuf>,
    /// `--kafka-format`: what a message holds.
    pub(crate) format: Format,
}

/// What a Kafka message holds: a flow record as `--json` prints it, or one direction of it
/// as goflow2's length-prefixed `FlowMessage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Json,
    Goflow2,
}

/// How the capture turns flow records into messages for the relay.
pub(crate) enum Records {
    /// The `--json` object, one a record.
    Json,
    /// goflow2's messages, one a direction.
    #[cfg(feature = "kafka")]
    Goflow2(goflow2::Goflow2),
}

impl Records {
    /// Hands `r`'s messages to the relay, keyed by its Community ID: see [`publish`] for
    /// `patience`. `now_ms` is the export time.
    #[cfg_attr(not(feature = "kafka"), allow(unused_variables))]
    pub(crate) fn publish(
        &mut self,
        r: &zcrx_flowcache::FlowRecord,
        tcp: Option<&zcrx_flowcache::TcpState>,
        names: Option<&zcrx_flowcache::names::Names>,
        seed: u16,
        now_ms: u64,
        patience: Patience,
    ) {
        // The oriented key's, as the JSON object's `community_id` (ICMP's type and code
        // are the first packet's).
        let key = r.stats.community_id(seed).to_string();
        match self {
            Records::Json => publish_with(key.as_bytes(), patience, |out| {
                crate::print::write_flow_json(out, &r.stats, Some(r.end), &key, tcp, names)
            }),
            #[cfg(feature = "kafka")]
            Records::Goflow2(g) => {
                // goflow2's message has no place for the TCP state or the names.
                let now_ns = now_ms.saturating_mul(1_000_000);
                g.messages(&r.stats, now_ns, &mut |m| {
                    publish(key.as_bytes(), m, patience)
                });
            }
        }
    }
}

/// What became of the records, as the relay counts them (and the capture, for `pair_full`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Acknowledged by a broker.
    pub(crate) published: u64,
    /// Refused for good by a broker, or not delivered in time (five minutes; at the end,
    /// what is still held after the relay's last `FLUSH_S`).
    pub(crate) failed: u64,
    /// Dropped: librdkafka's queue was full (the brokers away or behind).
    pub(crate) queue_full: u64,
    /// Dropped: larger than the topic takes (message.max.bytes).
    pub(crate) too_large: u64,
    /// Still waiting for a broker at the last count.
    pub(crate) waiting: u64,
    /// Dropped by the capture: the pair to the relay was full, or the relay gone.
    pub(crate) pair_full: u64,
}

impl Counts {
    const LEN: usize = 6 * 8;

    /// The relay's message (only the relay, built with the feature, sends one).
    #[cfg_attr(not(feature = "kafka"), allow(dead_code))]
    pub(crate) fn encode(&self) -> [u8; Counts::LEN] {
        let mut b = [0u8; Counts::LEN];
        let words = [
            self.published,
            self.failed,
            self.queue_full,
            self.too_large,
            self.waiting,
            self.pair_full,
        ];
        for (i, w) in words.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_be_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Option<Counts> {
        if b.len() != Counts::LEN {
            return None;
        }
        let w = |i: usize| u64::from_be_bytes(b[i * 8..i * 8 + 8].try_into().expect("8"));
        Some(Counts {
            published: w(0),
            failed: w(1),
            queue_full: w(2),
            too_large: w(3),
            waiting: w(4),
            pair_full: w(5),
        })
    }

    /// Records dropped or lost, for whatever reason.
    pub(crate) fn lost(&self) -> u64 {
        self.failed + self.queue_full + self.too_large + self.pair_full
    }
}

/// The capture's side of the relay.
struct Relay {
    process: Child,
    pair: OwnedFd,
    topic: String,
    counts: Counts,
    /// Dropped here (the pair full, the relay gone).
    pair_full: u64,
    /// Dropped here: larger than the pair carries.
    too_large: u64,
    /// Records not sent yet: a flags byte ([`PATIENT`]) and [`entry`]s back to back, at
    /// most [`MAX_BATCH`] bytes.
    batch: Vec<u8>,
    /// Records in `batch`.
    batched: u64,
    /// The largest batch: [`MAX_BATCH`], or less where the pair's send buffer is small.
    batch_max: usize,
    /// How long the records of `batch` may wait (the most patient one's).
    batch_patience: Patience,
    /// Time [`Patience::Bounded`] batches have waited for room so far.
    bounded_waited: Duration,
}

/// A batch's flag: its records may wait for room in librdkafka's queue (a file read, the
/// capture's last records), where a live capture's are dropped when it is full.
pub(crate) const PATIENT: u8 = 1;
/// With [`PATIENT`]: the relay's waits for such records are bounded in all ([`FLUSH_S`]).
pub(crate) const BOUNDED: u8 = 2;

/// One record in a batch: its length (4 bytes, big-endian, what follows), the key's
/// length (1 byte), the key (at most 255 bytes) and the value.
fn entry(batch: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    let key = &key[..key.len().min(255)];
    let len = 1 + key.len() + value.len();
    batch.extend_from_slice(&(len as u32).to_be_bytes());
    batch.push(key.len() as u8);
    batch.extend_from_slice(key);
    batch.extend_from_slice(value);
}

/// The records of a batch, as (key, value); stops at the first entry that does not fit
/// what is left (a batch comes from the less trusted capture: read with bounds).
#[cfg_attr(not(feature = "kafka"), allow(dead_code))]
pub(crate) fn entries(mut batch: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    std::iter::from_fn(move || {
        let (len, rest) = batch.split_first_chunk::<4>()?;
        let (record, rest) = rest.split_at_checked(u32::from_be_bytes(*len) as usize)?;
        batch = rest;
        let (&key_len, record) = record.split_first()?;
        record.split_at_checked(usize::from(key_len))
    })
}

static RELAY: Mutex<Option<Relay>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<Relay>> {
    RELAY.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long librdkafka waits for a batch to fill (linger.ms): a live capture's records
/// in batches ten times fuller, a file's sent as soon as a batch is full or not, as its
/// records wait while librdkafka holds a few batches' worth (a longer linger would have
/// them wait out the linger, not a batch).
const LINGER_MS: (u32, u32) = (50, 5);

/// Starts the relay for `config` (`file`: the records are a file's). Called once, before
/// the sandbox (it starts a process).
pub(crate) fn start(config: &KafkaConfig, file: bool) -> Result<()> {
    if !cfg!(feature = "kafka") {
        bail!("--kafka: this zcap was built without Kafka (cargo's feature `kafka`)");
    }
    let (capture_end, relay_end) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .context("--kafka: socketpair")?;
    // Room for many records on the way: beyond net.core.wmem_max where zcap may (as root).
    use nix::sys::socket::{setsockopt, sockopt};
    if setsockopt(&capture_end, sockopt::SndBufForce, &(8 << 20)).is_err() {
        let _ = setsockopt(&capture_end, sockopt::SndBuf, &(8 << 20));
    }
    // A message must fit the send buffer whole: batches no larger than half of it (the
    // kernel counts its own bookkeeping in it too), where it is small.
    use nix::sys::socket::getsockopt;
    let buffer = getsockopt(&capture_end, sockopt::SndBuf).unwrap_or(MAX_BATCH * 2);
    let batch_max = MAX_BATCH.min(buffer / 2).max(1 << 12);
    let mut command = Command::new("/proc/self/exe");
    command
        .arg(RELAY_FLAG)
        .args([
            &config.brokers,
            &config.topic,
            &config.compression,
            &config.sensor,
        ])
        .arg(
            config
                .properties
                .as_deref()
                .unwrap_or(std::path::Path::new("")),
        )
        .arg(match file {
            false => LINGER_MS.0.to_string(),
            true => LINGER_MS.1.to_string(),
        })
        .stdin(Stdio::from(relay_end))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    crate::system::ordinary_scheduler_in_child(&mut command);
    let process = command
        .spawn()
        .context("--kafka: starting the relay (zcap itself, from /proc/self/exe)")?;
    *lock() = Some(Relay {
        process,
        pair: capture_end,
        topic: config.topic.clone(),
        counts: Counts::default(),
        pair_full: 0,
        too_large: 0,
        batch: Vec::with_capacity(batch_max),
        batch_max,
        batched: 0,
        batch_patience: Patience::None,
        bounded_waited: Duration::ZERO,
    });
    Ok(())
}

/// Whether a relay runs (records are published).
pub(crate) fn running() -> bool {
    lock().is_some()
}

/// Whether a record may wait for room, on the pair and in librdkafka's queue, rather than
/// be dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Patience {
    /// A live capture's record: never waits (the capture must not).
    None,
    /// A live capture's last records: wait, for at most [`FLUSH_S`] in all (the stop
    /// must end within the unit's stop timeout).
    Bounded,
    /// A file's records: nothing waits for the capture; they wait as long as the relay
    /// makes progress.
    Unbounded,
}

/// Hands one record to the relay, in a batch sent when full and on every [`flush`] (the
/// export's tick): a batch the pair cannot take is dropped and counted, unless its records
/// are patient ([`Patience`]), when it waits up to a second for room first.
#[cfg_attr(not(feature = "kafka"), allow(dead_code))]
pub(crate) fn publish(key: &[u8], value: &[u8], patience: Patience) {
    publish_with(key, patience, |out| out.extend_from_slice(value));
}

/// [`publish`] with the value written by `value` straight into the batch (no copy made
/// on the way).
pub(crate) fn publish_with(key: &[u8], patience: Patience, value: impl FnOnce(&mut Vec<u8>)) {
    let mut guard = lock();
    let Some(r) = guard.as_mut() else {
        return;
    };
    match append(&mut r.batch, r.batch_max, key, value) {
        Appended::Batched => {}
        Appended::TooLarge => {
            r.too_large += 1;
            return;
        }
        Appended::Next(record) => {
            r.send_batch();
            r.batch.push(0);
            r.batch.extend_from_slice(&record);
        }
    }
    r.batched += 1;
    r.batch_patience = r.batch_patience.max(patience);
}

/// What [`append`] did with a record.
#[derive(Debug, PartialEq, Eq)]
enum Appended {
    /// In the batch.
    Batched,
    /// Not in the batch, which it would make larger than its most: the record's entry,
    /// for the next batch, once this one is sent.
    Next(Vec<u8>),
    /// Larger than any batch: dropped.
    TooLarge,
}

/// Appends a record's [`entry`] to `batch` (its flags byte first, where it is empty), the
/// value written by `value` in place, keeping `batch` at most `max` bytes.
fn append(
    batch: &mut Vec<u8>,
    max: usize,
    key: &[u8],
    value: impl FnOnce(&mut Vec<u8>),
) -> Appended {
    let empty = batch.is_empty();
    if empty {
        batch.push(0);
    }
    let start = batch.len();
    entry(batch, key, b"");
    value(batch);
    let len = batch.len() - start;
    if 1 + len > max {
        // As it was: an empty batch stays empty (no flags byte alone to send).
        batch.truncate(if empty { 0 } else { start });
        return Appended::TooLarge;
    }
    batch[start..start + 4].copy_from_slice(&((len - 4) as u32).to_be_bytes());
    match batch.len() > max {
        true => Appended::Next(batch.split_off(start)),
        false => Appended::Batched,
    }
}

/// Sends the records batched so far.
pub(crate) fn flush() {
    if let Some(r) = lock().as_mut() {
        r.send_batch();
    }
}

impl Relay {
    /// Sends the batch (see [`publish`]) and reads the relay's latest counts.
    fn send_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        // A bounded batch past its budget waits no more.
        let budget = Duration::from_secs(FLUSH_S);
        let patience = match self.batch_patience {
            Patience::Bounded if self.bounded_waited >= budget => Patience::None,
            p => p,
        };
        self.batch[0] = match patience {
            Patience::None => 0,
            Patience::Bounded => PATIENT | BOUNDED,
            Patience::Unbounded => PATIENT,
        };
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        let mut sent = send(self.pair.as_raw_fd(), &self.batch, flags);
        if patience != Patience::None && sent == Err(nix::errno::Errno::EAGAIN) {
            use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
            let started = Instant::now();
            let mut fds = [PollFd::new(self.pair.as_fd(), PollFlags::POLLOUT)];
            if matches!(poll(&mut fds, PollTimeout::from(1000u16)), Ok(1..)) {
                sent = send(self.pair.as_raw_fd(), &self.batch, flags);
            }
            if patience == Patience::Bounded {
                self.bounded_waited += started.elapsed();
            }
        }
        if sent.is_err() {
            self.pair_full += self.batched;
        }
        self.batch.clear();
        self.batched = 0;
        self.batch_patience = Patience::None;
        self.read_counts();
    }

    /// The relay's latest counts (non-blocking).
    fn read_counts(&mut self) {
        let mut buf = [0u8; Counts::LEN];
        while let Ok(n) = recv(self.pair.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
            match Counts::decode(&buf[..n]) {
                Some(c) => self.counts = c,
                None => break,
            }
        }
    }

    fn counts(&self) -> Counts {
        Counts {
            pair_full: self.pair_full,
            too_large: self.counts.too_large + self.too_large,
            ..self.counts
        }
    }
}

/// The counts so far (for `--metrics`), reading the relay's latest.
pub(crate) fn counts() -> Option<Counts> {
    let mut guard = lock();
    let r = guard.as_mut()?;
    r.send_batch();
    r.read_counts();
    Some(r.counts())
}

/// The capture's end: the pair closed for writing, the relay's final counts awaited (it
/// sends what it holds first, for at most [`FLUSH_S`]; awaited at most [`FINISH_S`]), said
/// on standard error. True if records were lost.
pub(crate) fn finish() -> bool {
    let Some(mut r) = lock().take() else {
        return false;
    };
    r.batch_patience = r.batch_patience.max(Patience::Bounded);
    r.send_batch();
    let _ = nix::sys::socket::shutdown(r.pair.as_raw_fd(), nix::sys::socket::Shutdown::Write);
    let deadline = Instant::now() + Duration::from_secs(FINISH_S);
    let mut buf = [0u8; Counts::LEN];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            eprintln!("zcap: --kafka: the relay did not finish within {FINISH_S} s; counting what it said last");
            break;
        }
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX).max(1);
        let mut fds = [PollFd::new(r.pair.as_fd(), PollFlags::POLLIN)];
        if !matches!(poll(&mut fds, PollTimeout::from(ms)), Ok(1..)) {
            continue;
        }
        match recv(r.pair.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
            Ok(0) => break,
            Ok(n) => {
                if let Some(c) = Counts::decode(&buf[..n]) {
                    r.counts = c;
                }
            }
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    // Reaped if it ended (a capture in its sandbox cannot kill it: then it is left to end).
    let reaped = Instant::now() + Duration::from_secs(2);
    while matches!(r.process.try_wait(), Ok(None)) && Instant::now() < reaped {
        std::thread::sleep(Duration::from_millis(20));
    }
    let c = r.counts();
    eprintln!(
        "{} flow records published to Kafka topic {} ({} lost: {} not delivered, {} queue full, {} too large, {} relay behind)",
        c.published,
        r.topic,
        c.lost(),
        c.failed,
        c.queue_full,
        c.too_large,
        c.pair_full
    );
    c.lost() > 0
}

#[cfg(test)]
mod tests {
    use super::Counts;

    #[test]
    fn the_relays_counts_read_back_and_nothing_else_reads_as_counts() {
        let c = Counts {
            published: 1,
            failed: 2,
            queue_full: 3,
            too_large: 4,
            waiting: 5,
            pair_full: 6,
        };
        assert_eq!(Counts::decode(&c.encode()), Some(c));
        assert_eq!(c.lost(), 2 + 3 + 4 + 6);
        for len in [0, 1, 47, 49, 4096] {
            assert_eq!(Counts::decode(&vec![0xff; len]), None, "{len}");
        }
    }

    /// Records written in place read back whole; one that does not fit waits for the next
    /// batch, and one larger than a batch is refused and leaves the batch as it was.
    #[test]
    fn records_written_in_place_fill_batches_to_their_most_and_no_further() {
        use super::{append, Appended};
        let max = 64;
        let mut b = Vec::new();
        let value = |n: usize| move |out: &mut Vec<u8>| out.extend(std::iter::repeat_n(b'v', n));
        assert_eq!(append(&mut b, max, b"k1", value(20)), Appended::Batched);
        assert_eq!(append(&mut b, max, b"k2", value(20)), Appended::Batched);
        let full = b.clone();
        let Appended::Next(next) = append(&mut b, max, b"k3", value(20)) else {
            panic!("a record past the most must wait for the next batch");
        };
        assert_eq!(b, full);
        assert_eq!(b.len(), 1 + 2 * (4 + 1 + 2 + 20));
        let got: Vec<_> = super::entries(&b[1..]).collect();
        assert_eq!(
            got,
            [(&b"k1"[..], &[b'v'; 20][..]), (&b"k2"[..], &[b'v'; 20][..])]
        );
        assert_eq!(
            super::entries(&next).collect::<Vec<_>>(),
            [(&b"k3"[..], &[b'v'; 20][..])]
        );
        // Exactly the most fits; one byte more than a batch holds is refused.
        let mut one = Vec::new();
        assert_eq!(
            append(&mut one, max, b"", value(max - 1 - 5)),
            Appended::Batched
        );
        assert_eq!(one.len(), max);
        let mut empty = Vec::new();
        assert_eq!(
            append(&mut empty, max, b"", value(max - 5)),
            Appended::TooLarge
        );
        assert!(empty.is_empty());
        let before = b.clone();
        assert_eq!(append(&mut b, max, b"k", value(1000)), Appended::TooLarge);
        assert_eq!(b, before);
    }

    #[test]
    fn a_batch_reads_back_record_by_record_and_a_bad_one_ends_it() {
        let mut b = Vec::new();
        super::entry(&mut b, b"1:abc", b"{\"a\":1}");
        super::entry(&mut b, b"", b"");
        super::entry(&mut b, &[b'k'; 300], b"v");
        let got: Vec<_> = super::entries(&b).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (&b"1:abc"[..], &b"{\"a\":1}"[..]));
        assert_eq!(got[1], (&b""[..], &b""[..]));
        assert_eq!((got[2].0.len(), got[2].1), (255, &b"v"[..]));
        // Cut anywhere, or a length past the end: the whole records before it, nothing after.
        for cut in 0..b.len() {
            assert!(super::entries(&b[..cut]).count() <= 2, "{cut}");
        }
        let mut bad = b.clone();
        bad[0] = 0xff;
        assert_eq!(super::entries(&bad).count(), 0);
        // A key length past its record.
        let hostile = [0, 0, 0, 2, 9, b'x'];
        assert_eq!(super::entries(&hostile).count(), 0);
    }
}
