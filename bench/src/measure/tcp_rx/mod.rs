//! `rxbench tcp-rx`: TCP receive by `recv` copies against the kernel's remap receive
//! (`TCP_ZEROCOPY_RECEIVE`: received pages mapped into the process) over 1 to 1 000
//! connections at 4 KiB to 1 MiB reads: CPU per byte, the share of bytes really mapped, TLB
//! shootdowns.
//!
//! Sender and receiver run in the lab's receiving namespace and talk over loopback to its
//! address (198.18.0.2; a local address routes through `lo`, MTU 65 536). A page can be
//! mapped only when an skb fragment holds exactly that page of the stream, a whole order-0
//! page at offset 0. The sender's own fragments are compound pages and never qualify, so it
//! sends with `MSG_ZEROCOPY`: the kernel copies zero-copy data looped to a local socket into
//! order-0 pages of its own, filled from offset 0, one skb's payload at a time; with an MSS
//! of 7 pages (the listener's `TCP_MAXSEG` plus the timestamp option) every skb's payload is
//! whole pages. The sender is the same for both methods; only the receive differs.

pub mod plot;
pub mod text;

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use zcrx_ring::lab::Lab;

use crate::lab::machine::ProcStat;
use crate::sys;
use crate::sys::tcp::{Sent, ZcMap};

/// How the receiver reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `recv` into a buffer of the read size (a copy).
    Recv,
    /// `TCP_ZEROCOPY_RECEIVE` into a mapping of the read size, the rest copied.
    Zerocopy,
}

impl Method {
    /// Both, in run order.
    pub const ALL: [Method; 2] = [Method::Recv, Method::Zerocopy];
    /// The name the report shows.
    pub fn name(self) -> &'static str {
        match self {
            Method::Recv => "recv",
            Method::Zerocopy => "zerocopy",
        }
    }
}

/// The sender's chunk: it sends this page-aligned buffer over and over (a 16-page multiple,
/// so a send that completes leaves the next one page-aligned).
const CHUNK: usize = 64 << 10;
/// The MSS the listener asks for: 7 pages of payload plus the 12-byte timestamp option
/// every segment carries (`TCP_MAXSEG` takes at most 32 767).
pub const MSS: i32 = 7 * 4096 + 12;
/// The receiver's reads per connection each time epoll says it is readable (fairness over
/// many connections).
const READS_PER_WAKEUP: usize = 16;

/// One point: a method, a connection count, a read size.
#[derive(Debug, Clone, Serialize)]
pub struct TcpRxPoint {
    /// `recv` or `zerocopy`.
    pub method: String,
    /// TCP connections, all read by one thread.
    pub conns: usize,
    /// Bytes a read asks for (the `recv` buffer, the zero-copy mapping).
    pub read_bytes: usize,
    /// The measured window, s.
    pub secs: f64,
    /// Bytes received in it.
    pub bytes: u64,
    /// Of those, mapped by `TCP_ZEROCOPY_RECEIVE` (whole pages, not copied).
    pub mapped_bytes: u64,
    /// Of those, copied (`recv`; for zerocopy the `recv` of what the call could not map).
    pub copied_bytes: u64,
    /// mapped / bytes.
    pub mapped_share: f64,
    /// bytes / window, Gbit/s.
    pub gbit_s: f64,
    /// The receiving thread's CPU (user + system, getrusage) per KiB received, ns.
    pub rx_thread_ns_per_kib: f64,
    /// Of it, system CPU per KiB, ns.
    pub rx_sys_ns_per_kib: f64,
    /// The receiving CPU's busy time (/proc/stat: user, system, irq, softirq, 10 ms ticks)
    /// per KiB, ns. The receive path's softirq mostly runs in the sender's context on
    /// loopback (on the other CPU), so this is the receiving thread's work and what else ran
    /// there.
    pub rx_cpu_ns_per_kib: f64,
    /// TLB shootdown interrupts over every CPU in the window (/proc/interrupts `TLB:`).
    pub tlb_shootdowns: u64,
    /// Shootdowns per MiB received.
    pub tlb_per_mib: f64,
    /// Bytes whose content was checked against what was sent (every byte with `--verify`,
    /// else the first of each 4 KiB of the stream); a mismatch fails the run.
    pub checked_bytes: u64,
    /// With `--verify`: bytes read after the window, every connection to its end once the
    /// sender stopped (with `recv`, each byte checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drained_bytes: Option<u64>,
    /// With `--verify`: bytes the sender sent, which `bytes` + `drained_bytes` equal (else
    /// the run fails).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_bytes: Option<u64>,
}

/// The `tcp-rx` report.
#[derive(Debug, Clone, Serialize)]
pub struct TcpRxReport {
    /// The MSS the listener asked for (`TCP_MAXSEG`).
    pub mss_requested: i32,
    /// The MSS the connections got (`TCP_MAXSEG` read back on an accepted socket).
    pub mss: i32,
    /// Every byte's content checked (`--verify`).
    pub verified: bool,
    /// Every point, in run order.
    pub points: Vec<TcpRxPoint>,
}

/// What `rxbench tcp-rx` measures.
#[derive(Debug, Clone)]
pub struct TcpRxConfig {
    /// Connection counts.
    pub conns: Vec<usize>,
    /// Read sizes, bytes (page multiples).
    pub reads: Vec<usize>,
    /// The window of each point.
    pub secs: f64,
    /// Check every byte (else one a page).
    pub verify: bool,
}

/// The byte at offset `i` of every connection's stream.
#[inline]
pub fn pattern(i: usize) -> u8 {
    let i = (i % CHUNK) as u32;
    (i.wrapping_mul(0x9e37_79b1) >> 24) as u8 ^ (i >> 12) as u8
}

/// Every point: for each connection count and read size, `recv` then `zerocopy`.
pub fn run(cfg: &TcpRxConfig) -> Result<TcpRxReport> {
    for &r in &cfg.reads {
        if r == 0 || r % 4096 != 0 {
            bail!("--reads: {r} is not a multiple of 4096 (the zero-copy mapping is whole pages)");
        }
    }
    sys::raise_nofile().context("raising the open-file limit")?;
    let _held = crate::lab::interrupt::Lab::hold();
    let lab = Lab::new().context("creating the lab (needs root)")?;
    lab.b
        .ip(&["link", "set", "lo", "up"])
        .context("bringing lo up in the receiving namespace")?;
    let mut report = TcpRxReport {
        mss_requested: MSS,
        mss: 0,
        verified: cfg.verify,
        points: Vec::new(),
    };
    for &conns in &cfg.conns {
        for &read in &cfg.reads {
            for method in Method::ALL {
                crate::lab::interrupt::check()?;
                eprintln!(
                    "tcp-rx: {} with {conns} connections, {} reads",
                    method.name(),
                    crate::report::text::human(read)
                );
                let (p, mss) = point(&lab, method, conns, read, cfg)
                    .with_context(|| format!("tcp-rx: {} {conns} x {read}", method.name()))?;
                report.mss = mss;
                report.points.push(p);
            }
        }
    }
    Ok(report)
}

/// One point in namespace b.
fn point(
    lab: &Lab,
    method: Method,
    conns: usize,
    read: usize,
    cfg: &TcpRxConfig,
) -> Result<(TcpRxPoint, i32)> {
    let ip = lab.b.ip;
    let (secs, verify) = (cfg.secs, cfg.verify);
    lab.b.run(move || -> Result<(TcpRxPoint, i32)> {
        let listener = std::net::TcpListener::bind((ip, 0)).context("binding the listener")?;
        sys::tcp::set_maxseg(listener.as_raw_fd(), MSS).context("TCP_MAXSEG")?;
        let addr = listener.local_addr()?;
        let stop = AtomicBool::new(false);
        let end = SenderEnd::default();
        let rx_cpu = sys::last_cpu();
        std::thread::scope(|s| {
            let sender = s.spawn(|| send(addr, conns, &stop, verify.then_some(&end)));
            let got = receive(
                &listener,
                method,
                Shape { conns, read, secs },
                verify,
                rx_cpu,
                &stop,
                &end,
            );
            stop.store(true, Ordering::Relaxed);
            let sent = sender
                .join()
                .map_err(|_| anyhow::anyhow!("the sender panicked"))?;
            let (p, mss) = got?;
            sent.context("the sender")?;
            Ok((p, mss))
        })
    })?
}

/// What the sender did, for the receiver to read everything with `--verify`.
#[derive(Default)]
struct SenderEnd {
    /// The sender has stopped and shut its side of every connection down.
    done: AtomicBool,
    /// Bytes it sent over every connection.
    sent: AtomicU64,
}

/// A point's connection count, read size and window.
#[derive(Clone, Copy)]
struct Shape {
    conns: usize,
    read: usize,
    secs: f64,
}

/// The sender: `conns` connections to `addr`, each sent the pattern with `MSG_ZEROCOPY`
/// until `stop`, from CPU 0. With `end` (`--verify`) it then shuts its side of each
/// connection down and says how much it sent.
fn send(
    addr: std::net::SocketAddr,
    conns: usize,
    stop: &AtomicBool,
    end: Option<&SenderEnd>,
) -> Result<()> {
    let _ = sys::pin_to_cpu(0);
    let mut buf = sys::Anon::new(CHUNK)?;
    for (i, b) in buf.as_mut_slice().iter_mut().enumerate() {
        *b = pattern(i);
    }
    let streams: Vec<std::net::TcpStream> = (0..conns)
        .map(|_| std::net::TcpStream::connect(addr))
        .collect::<Result<_, _>>()
        .context("connecting")?;
    let ep = sys::Epoll::new()?;
    for (i, s) in streams.iter().enumerate() {
        s.set_nonblocking(true)?;
        sys::tcp::set_zerocopy(s.as_raw_fd()).context("SO_ZEROCOPY")?;
        ep.add_out(s.as_raw_fd(), i as u64)?;
    }
    let mut offset = vec![0usize; conns];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while !stop.load(Ordering::Relaxed) {
        let n = ep.wait(&mut events, 10)?;
        for ev in &events[..n] {
            let i = ev.u64 as usize;
            let fd = streams[i].as_raw_fd();
            if ev.events & libc::EPOLLERR as u32 != 0 {
                sys::tcp::drain_completions(fd)?;
            }
            loop {
                let at = offset[i] % CHUNK;
                match sys::tcp::send(fd, &buf.as_slice()[at..], true) {
                    Ok(Sent::Bytes(n)) => offset[i] += n,
                    Ok(Sent::Full) => break,
                    Ok(Sent::Completions) => {
                        if sys::tcp::drain_completions(fd)? == 0 {
                            break;
                        }
                    }
                    // The receiver closed first at the end of the window.
                    Err(_) if stop.load(Ordering::Relaxed) && end.is_none() => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    if let Some(end) = end {
        for s in &streams {
            s.shutdown(std::net::Shutdown::Write)
                .context("shutting a connection down")?;
        }
        end.sent
            .store(offset.iter().map(|&o| o as u64).sum(), Ordering::Relaxed);
        end.done.store(true, Ordering::Release);
    }
    Ok(())
}

/// One receiving connection.
struct Conn {
    stream: std::net::TcpStream,
    map: Option<ZcMap>,
    /// Stream bytes read so far.
    offset: usize,
}

/// Counts over the window.
#[derive(Default)]
struct Counts {
    mapped: u64,
    copied: u64,
    checked: u64,
}

/// The receiver: accepts the connections, reads them with `method` for the window on `cpu`,
/// then sets `stop` (before its connections close, so that the sender takes their reset as
/// the end). With `verify` it then waits for the sender's `end`, reads every connection to
/// its end, and checks that it read every byte sent.
fn receive(
    listener: &std::net::TcpListener,
    method: Method,
    shape: Shape,
    verify: bool,
    cpu: usize,
    stop: &AtomicBool,
    end: &SenderEnd,
) -> Result<(TcpRxPoint, i32)> {
    let got = receive_window(listener, method, shape, verify, cpu);
    stop.store(true, Ordering::Relaxed);
    let (mut point, mss, mut all) = got?;
    if verify {
        let wait = Instant::now();
        while !end.done.load(Ordering::Acquire) {
            if wait.elapsed() > Duration::from_secs(10) {
                bail!("the sender did not stop");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let drained = drain(&mut all, shape.read)?;
        let sent = end.sent.load(Ordering::Relaxed);
        if point.bytes + drained != sent {
            bail!(
                "read {} bytes in the window and {drained} after it, sent {sent}",
                point.bytes
            );
        }
        point.drained_bytes = Some(drained);
        point.sent_bytes = Some(sent);
    }
    Ok((point, mss))
}

/// Reads every connection to its end with `recv` (its content checked byte by byte);
/// returns the bytes read.
fn drain(all: &mut [Conn], read: usize) -> Result<u64> {
    let mut buf = vec![0u8; read];
    let mut total = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    for c in all.iter_mut() {
        c.stream.set_nonblocking(false)?;
        c.stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .context("setting a read timeout")?;
        loop {
            if Instant::now() > deadline {
                bail!("draining the connections took over 30 s");
            }
            let n = std::io::Read::read(&mut c.stream, &mut buf).context("draining")?;
            if n == 0 {
                break;
            }
            check(&buf[..n], c.offset, true)?;
            c.offset += n;
            total += n as u64;
        }
    }
    Ok(total)
}

/// The `conns` connections, accepted and non-blocking, each with its mapping of `read`
/// bytes for the remap receive.
fn accept(
    listener: &std::net::TcpListener,
    method: Method,
    conns: usize,
    read: usize,
) -> Result<Vec<Conn>> {
    let mut all = Vec::with_capacity(conns);
    for _ in 0..conns {
        let (stream, _) = listener.accept().context("accepting")?;
        stream.set_nonblocking(true)?;
        let map = match method {
            Method::Zerocopy => Some(
                ZcMap::new(stream.as_raw_fd(), read)
                    .context("mmap of the socket (TCP_ZEROCOPY_RECEIVE)")?,
            ),
            Method::Recv => None,
        };
        all.push(Conn {
            stream,
            map,
            offset: 0,
        });
    }
    Ok(all)
}

/// One window of receive on `cpu`: the connections accepted, then read by `method` for the
/// shape's seconds; the point measured, the MSS, and the connections.
fn receive_window(
    listener: &std::net::TcpListener,
    method: Method,
    shape: Shape,
    verify: bool,
    cpu: usize,
) -> Result<(TcpRxPoint, i32, Vec<Conn>)> {
    let Shape { conns, read, secs } = shape;
    let _ = sys::pin_to_cpu(cpu);
    let mut all = accept(listener, method, conns, read)?;
    let mss = sys::tcp::maxseg(all[0].stream.as_raw_fd()).context("reading TCP_MAXSEG")?;
    let ep = sys::Epoll::new()?;
    for (i, c) in all.iter().enumerate() {
        ep.add(c.stream.as_raw_fd(), i as u64)?;
    }
    let mut buf = sys::Anon::new(read)?;
    // No copy buffer: given one, the kernel copies into it whatever follows the pages it
    // mapped up to the end of the current skb (as much as fits), even when the next call
    // could map those pages, and every later call then starts mid-page and copies too.
    // Without it, what cannot be mapped (a tail shorter than a page) comes back as
    // `recv_skip_hint` and is read with `recv`.
    let mut copybuf: Vec<u8> = Vec::new();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut counts = Counts::default();
    let window = Duration::from_secs_f64(secs);
    let (u0, s0) = sys::thread_cpu();
    let stat0 = ProcStat::read_cpu(cpu);
    let tlb0 = tlb_shootdowns();
    let start = Instant::now();
    while start.elapsed() < window {
        let n = ep.wait(&mut events, 10)?;
        for ev in &events[..n] {
            let c = &mut all[ev.u64 as usize];
            for _ in 0..READS_PER_WAKEUP {
                let got = match method {
                    Method::Recv => recv_once(c, buf.as_mut_slice(), verify, &mut counts)?,
                    Method::Zerocopy => {
                        zc_once(c, &mut copybuf, buf.as_mut_slice(), verify, &mut counts)?
                    }
                };
                if !got {
                    break;
                }
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let tlb = tlb_shootdowns().saturating_sub(tlb0);
    let stat1 = ProcStat::read_cpu(cpu);
    let (u1, s1) = sys::thread_cpu();
    let bytes = counts.mapped + counts.copied;
    if bytes == 0 {
        bail!("nothing received in {secs} s");
    }
    let kib = bytes as f64 / 1024.0;
    let point = TcpRxPoint {
        method: method.name().into(),
        conns,
        read_bytes: read,
        secs: wall,
        bytes,
        mapped_bytes: counts.mapped,
        copied_bytes: counts.copied,
        mapped_share: counts.mapped as f64 / bytes as f64,
        gbit_s: bytes as f64 * 8.0 / wall / 1e9,
        rx_thread_ns_per_kib: ((u1 - u0) + (s1 - s0)) as f64 / kib,
        rx_sys_ns_per_kib: (s1 - s0) as f64 / kib,
        rx_cpu_ns_per_kib: stat1.busy_ns.saturating_sub(stat0.busy_ns) as f64 / kib,
        tlb_shootdowns: tlb,
        tlb_per_mib: tlb as f64 / (bytes as f64 / f64::from(1 << 20)),
        checked_bytes: counts.checked,
        drained_bytes: None,
        sent_bytes: None,
    };
    Ok((point, mss, all))
}

/// One `recv`; false when nothing was queued.
fn recv_once(c: &mut Conn, buf: &mut [u8], verify: bool, counts: &mut Counts) -> Result<bool> {
    match sys::tcp::recv(c.stream.as_raw_fd(), buf)? {
        None => Ok(false),
        Some(0) => bail!("a connection ended early"),
        Some(n) => {
            counts.checked += check(&buf[..n], c.offset, verify)?;
            c.offset += n;
            counts.copied += n as u64;
            Ok(true)
        }
    }
}

/// One `TCP_ZEROCOPY_RECEIVE` and, when it says so, a `recv` of what it could not map or
/// copy; false when nothing was queued.
fn zc_once(
    c: &mut Conn,
    copybuf: &mut [u8],
    buf: &mut [u8],
    verify: bool,
    counts: &mut Counts,
) -> Result<bool> {
    let map = c.map.as_mut().expect("a zerocopy connection has a mapping");
    let mut offset = c.offset;
    let mut checked = 0;
    let mut failed = None;
    let r = map.receive(copybuf, |bytes| {
        match check(bytes, offset, verify) {
            Ok(n) => checked += n,
            Err(e) => failed = Some(e),
        }
        offset += bytes.len();
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    c.offset = offset;
    counts.checked += checked;
    counts.mapped += r.mapped as u64;
    counts.copied += r.copied as u64;
    let mut got = r.mapped + r.copied > 0;
    if r.skip > 0 {
        let want = r.skip.min(buf.len());
        if let Some(n) = sys::tcp::recv(c.stream.as_raw_fd(), &mut buf[..want])? {
            if n == 0 {
                bail!("a connection ended early");
            }
            counts.checked += check(&buf[..n], c.offset, verify)?;
            c.offset += n;
            counts.copied += n as u64;
            got = true;
        }
    }
    Ok(got)
}

/// Checks `bytes`, at stream offset `offset`, against the pattern: every byte with `all`,
/// else the first of each 4 KiB of the stream. Returns how many were checked.
fn check(bytes: &[u8], offset: usize, all: bool) -> Result<u64> {
    let step = if all { 1 } else { 4096 };
    let first = (step - offset % step) % step;
    let mut n = 0;
    for j in (first..bytes.len()).step_by(step) {
        if bytes[j] != pattern(offset + j) {
            bail!(
                "received byte {} of the stream is {:#04x}, sent {:#04x}",
                offset + j,
                bytes[j],
                pattern(offset + j)
            );
        }
        n += 1;
    }
    Ok(n)
}

/// TLB shootdown interrupts so far, summed over the CPUs (/proc/interrupts `TLB:`).
pub fn tlb_shootdowns() -> u64 {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix("TLB:"))
        .map(|rest| {
            rest.split_whitespace()
                .map_while(|w| w.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_samples_each_page_of_the_stream_and_finds_a_wrong_byte() {
        let stream: Vec<u8> = (0..3 * 4096 + 100).map(pattern).collect();
        // From offset 100 to 12 388: the stream's pages at 4096, 8192 and 12 288.
        assert_eq!(check(&stream[100..], 100, false).unwrap(), 3);
        assert_eq!(
            check(&stream[100..], 100, true).unwrap(),
            stream.len() as u64 - 100
        );
        let mut bad = stream.clone();
        bad[5000] ^= 1;
        assert!(check(&bad, 0, true).is_err());
        assert!(check(&bad, 0, false).is_ok(), "5000 is not sampled");
        bad[4096] ^= 1;
        assert!(check(&bad, 0, false).is_err());
    }

    #[test]
    fn the_pattern_repeats_with_the_senders_chunk() {
        assert_eq!(pattern(7), pattern(CHUNK + 7));
        let distinct: std::collections::HashSet<u8> = (0..4096).map(pattern).collect();
        assert!(distinct.len() > 200);
    }
}
