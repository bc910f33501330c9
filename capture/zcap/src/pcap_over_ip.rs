//! `--pcap-over-ip ADDR:PORT`: every TCP client that connects gets a pcap file header and
//! then the packets as they are captured — the "PCAP-over-IP" convention of Arkime, Malcolm
//! and NetworkMiner (`nc HOST PORT | tcpdump -r -` reads it too) — beside whatever else
//! zcap writes.
//!
//! The capture thread formats each packet's record once ([`TeeSink`], behind the same
//! `SaveFile` as the `-w` files: VLAN tags put back, `-i any` as LINUX_SLL2) and appends it
//! to a shared buffer; a server thread of its own accepts clients and, every few
//! milliseconds, hands each client what came, with non-blocking writes. A client that
//! reads too slowly (more than [`CLIENT_BACKLOG`] bytes waiting for it) is cut off and
//! counted; it never slows the capture. Clients come and go at any time: one that connects
//! late gets the header, then the records from the next one on (records are never split).

use std::io::{self, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use zcrx_capture::pcapfile::{Format, SaveFile};

/// Bytes that may wait for one client before it is cut off (about 60 000 full-size frames'
/// worth of small ones; a second of 1 Gbit/s).
pub(crate) const CLIENT_BACKLOG: usize = 128 << 20;

/// Bytes the capture may leave for the server thread before it drops records (the thread
/// takes them every few milliseconds; reached only if it is starved of CPU).
const PENDING_MAX: usize = 256 << 20;

#[derive(Default)]
struct Shared {
    /// Whole records not yet handed to the clients.
    pending: Mutex<Vec<u8>>,
    stop: AtomicBool,
    /// Records dropped because `pending` was full.
    dropped: AtomicU64,
    /// Clients connected now: with none, the capture formats no records.
    clients: AtomicUsize,
    /// Clients cut off so far (`--metrics`).
    cut_off: AtomicU64,
}

/// What the server did, for the final report.
pub(crate) struct Served {
    pub(crate) clients: u64,
    pub(crate) cut_off: u64,
    pub(crate) dropped: u64,
}

/// `--pcap-over-ip`'s server on `addr`, if asked (live captures only).
pub(crate) fn start(addr: Option<&str>, linktype: u32, snaplen: u32) -> Result<Option<Server>> {
    addr.map(|addr| Server::start(addr, linktype, snaplen))
        .transpose()
}

/// Stops the server (its clients get what is left) and says what it did.
pub(crate) fn report(server: Option<Server>) {
    if let Some(s) = server {
        let r = s.finish();
        eprintln!(
            "{} PCAP-over-IP client(s) served, {} cut off for reading too slowly",
            r.clients, r.cut_off
        );
        if r.dropped > 0 {
            eprintln!(
                "{} packets not served: the server thread fell behind",
                r.dropped
            );
        }
    }
}

/// The listening server.
pub(crate) struct Server {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<(u64, u64)>>,
}

impl Server {
    /// Listens on `addr` (`HOST:PORT`) for pcap of link type `linktype` (LINKTYPE_*) and
    /// `snaplen`, and says where on standard error (the port the system chose for port 0).
    /// An address in use or not this host's is an error here, before the capture.
    pub(crate) fn start(addr: &str, linktype: u32, snaplen: u32) -> Result<Server> {
        // The file header each client gets first: the one a capture file starts with.
        let mut head = SaveFile::new(Vec::new(), Format::Pcap, linktype, snaplen);
        head.flush().context("--pcap-over-ip: the pcap header")?;
        let header = std::mem::take(head.get_mut());
        let listener = TcpListener::bind(addr)
            .with_context(|| format!("--pcap-over-ip {addr}: cannot listen"))?;
        listener
            .set_nonblocking(true)
            .context("--pcap-over-ip: a non-blocking listener")?;
        let bound = listener
            .local_addr()
            .context("--pcap-over-ip: the address bound")?;
        eprintln!("zcap: serving PCAP-over-IP on {bound}");
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("zcap-pcap-over-ip".into())
            .spawn(move || serve(&listener, &header, &s))
            .context("--pcap-over-ip: starting its thread")?;
        Ok(Server {
            shared,
            thread: Some(thread),
        })
    }

    /// Where the capture writes the records: a pcap writer whose own file header is left
    /// out (each client gets one when it connects).
    pub(crate) fn writer(&self, linktype: u32, snaplen: u32) -> SaveFile<TeeSink> {
        let sink = TeeSink {
            shared: self.shared.clone(),
            skip: PCAP_HEADER,
        };
        SaveFile::new(sink, Format::Pcap, linktype, snaplen).flush_every(1)
    }

    /// What the server has done so far (`--metrics`).
    pub(crate) fn sample(&self) -> crate::metrics::ServedSample {
        crate::metrics::ServedSample {
            clients: self.shared.clients.load(Ordering::Relaxed) as u64,
            cut_off: self.shared.cut_off.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
        }
    }

    /// Stops: the clients get what is left (for up to a second), then their connections
    /// close.
    pub(crate) fn finish(mut self) -> Served {
        self.shared.stop.store(true, Ordering::Relaxed);
        let (clients, cut_off) = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or((0, 0));
        Served {
            clients,
            cut_off,
            dropped: self.shared.dropped.load(Ordering::Relaxed),
        }
    }
}

/// A pcap file header's length.
const PCAP_HEADER: usize = 24;

/// The capture side: takes whole records (its `SaveFile` hands over after each one), the
/// first `skip` bytes (the writer's own file header) left out.
pub(crate) struct TeeSink {
    shared: Arc<Shared>,
    skip: usize,
}

impl TeeSink {
    /// Whether any client is connected (if none, records need not be made: one that
    /// connects later starts at the next record).
    #[inline]
    pub(crate) fn wanted(&self) -> bool {
        self.shared.clients.load(Ordering::Relaxed) > 0
    }
}

impl Write for TeeSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let skip = self.skip.min(buf.len());
        self.skip -= skip;
        let record = &buf[skip..];
        let mut p = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if p.len() + record.len() > PENDING_MAX {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            p.extend_from_slice(record);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One connected client and the bytes waiting for it (`sent` of them already written).
struct Client {
    stream: TcpStream,
    waiting: Vec<u8>,
    sent: usize,
}

impl Client {
    /// Writes what it can without blocking; false when the client is gone.
    fn push(&mut self) -> bool {
        while self.sent < self.waiting.len() {
            match self.stream.write(&self.waiting[self.sent..]) {
                Ok(0) => return false,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        if self.sent == self.waiting.len() {
            self.waiting.clear();
            self.sent = 0;
        } else if self.sent > self.waiting.len() / 2 {
            self.waiting.drain(..self.sent);
            self.sent = 0;
        }
        true
    }

    fn backlog(&self) -> usize {
        self.waiting.len() - self.sent
    }
}

/// The server thread: accept, hand out, write, until told to stop. Returns the clients
/// served and those cut off.
fn serve(listener: &TcpListener, header: &[u8], shared: &Shared) -> (u64, u64) {
    let mut clients: Vec<Client> = Vec::new();
    let (mut served, mut cut_off) = (0u64, 0u64);
    let mut stopping: Option<Instant> = None;
    // What the capture left, swapped out each round (its memory kept: no allocation).
    let mut new: Vec<u8> = Vec::new();
    loop {
        while let Ok((stream, _)) = listener.accept() {
            if stream.set_nonblocking(true).is_ok() {
                let _ = stream.set_nodelay(true);
                served += 1;
                clients.push(Client {
                    stream,
                    waiting: header.to_vec(),
                    sent: 0,
                });
            }
        }
        new.clear();
        std::mem::swap(
            &mut new,
            &mut *shared.pending.lock().unwrap_or_else(|p| p.into_inner()),
        );
        clients.retain_mut(|c| {
            if c.backlog() + new.len() > CLIENT_BACKLOG {
                // Too slow: cut off, never waited for.
                let _ = c.stream.shutdown(Shutdown::Both);
                cut_off += 1;
                shared.cut_off.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            c.waiting.extend_from_slice(&new);
            c.push()
        });
        shared.clients.store(clients.len(), Ordering::Relaxed);
        if shared.stop.load(Ordering::Relaxed) {
            let since = *stopping.get_or_insert_with(Instant::now);
            let all_out = clients.iter().all(|c| c.backlog() == 0);
            if all_out || since.elapsed() > Duration::from_secs(1) {
                for c in &clients {
                    let _ = c.stream.shutdown(Shutdown::Both);
                }
                return (served, cut_off);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
