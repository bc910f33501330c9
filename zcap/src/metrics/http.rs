//! One scraper's connection: the TLS handshake if the endpoint has TLS, one HTTP/1.1
//! request (its head parsed by httparse), one answer, then the connection closes.
//!
//! Its bounds: a first byte within [`FIRST_BYTE_DEADLINE`] of the connection's start, the
//! handshake and the request head within [`REQUEST_DEADLINE`] of it (a client that sends
//! slowly, or nothing, is closed then), the head at
//! most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] headers (431 beyond), no request body (413),
//! the answer written within [`ANSWER_DEADLINE`]. Every read and write waits a slice of
//! [`SLICE`] at most, so a stopping zcap is never kept waiting longer.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rustls::{ServerConfig, ServerConnection};

use super::auth::BasicAuth;
use super::encode::{classic, encode};
use super::sample::Sample;
use crate::tls;

/// From the connection's start to the end of the request head (the TLS handshake
/// included).
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(5);

/// From the connection's start to its first byte (a TLS ClientHello, a request line): a
/// client that connects and sends nothing gives its place back this soon.
pub(crate) const FIRST_BYTE_DEADLINE: Duration = Duration::from_secs(1);

/// From the end of the request head to the end of the answer.
pub(crate) const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

/// The longest request head (request line and headers), bytes.
pub(crate) const MAX_HEAD: usize = 8 * 1024;

/// The most headers a request may have.
pub(crate) const MAX_HEADERS: usize = 32;

/// The longest a read or write waits before the deadline and the stop flag are looked at.
const SLICE: Duration = Duration::from_millis(200);

/// After the answer, what a client still sends is read (and dropped) for at most this long
/// and this much, so that closing does not reset the connection under the answer.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// The OpenMetrics content type (Prometheus asks for it).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The older Prometheus text format, for clients that do not ask for OpenMetrics (curl,
/// `promtool check metrics`, scripts).
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Why a connection got no metrics (the `reason` label of
/// `zcap_metrics_rejected_connections_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// Over `--metrics-max-connections`: closed at accept.
    ConnectionLimit,
    /// The TLS handshake failed (not TLS, no or a wrong client certificate).
    TlsHandshake,
    /// The handshake or the request head did not come in time, or the answer could not be
    /// written in time.
    Deadline,
    /// A request head over [`MAX_HEAD`] bytes or [`MAX_HEADERS`] headers (431).
    HeaderTooLarge,
    /// Not an HTTP request zcap answers: malformed (400), another method (405), a body
    /// (413).
    BadRequest,
    /// No valid basic-authentication credentials (401).
    Unauthorized,
    /// More connections from one address than [`per_address`] allows: closed at accept.
    AddressLimit,
    /// Closed before it had shown what the endpoint asks, to make room for a newer
    /// connection when every place was taken.
    Displaced,
    /// From an address outside `--metrics-allow`: closed at accept.
    NotAllowed,
}

/// The connections one client address may hold at an endpoint: half of the endpoint's (at
/// least one), so that one address cannot take every slot from the others.
pub(crate) fn per_address(max_connections: usize) -> usize {
    max_connections.div_ceil(2)
}

/// What one share of [`per_address`] belongs to: an IPv4 address, or an IPv6 /64 (one
/// host gets a /64 and may use any address in it).
pub(crate) fn share_of(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip.to_canonical() {
        std::net::IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            std::net::IpAddr::V6(prefix.into())
        }
        v4 => v4,
    }
}

impl Rejection {
    pub(crate) const ALL: [Rejection; 9] = [
        Rejection::ConnectionLimit,
        Rejection::TlsHandshake,
        Rejection::Deadline,
        Rejection::HeaderTooLarge,
        Rejection::BadRequest,
        Rejection::Unauthorized,
        Rejection::AddressLimit,
        Rejection::Displaced,
        Rejection::NotAllowed,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Rejection::ConnectionLimit => "connection_limit",
            Rejection::TlsHandshake => "tls_handshake",
            Rejection::Deadline => "deadline",
            Rejection::HeaderTooLarge => "header_too_large",
            Rejection::BadRequest => "bad_request",
            Rejection::Unauthorized => "unauthorized",
            Rejection::AddressLimit => "address_limit",
            Rejection::Displaced => "displaced",
            Rejection::NotAllowed => "address",
        }
    }
}

/// What every connection of an endpoint shares.
pub(crate) struct Endpoint<'a, F> {
    pub(crate) tls: Option<&'a Arc<ServerConfig>>,
    pub(crate) auth: Option<&'a BasicAuth>,
    pub(crate) sample: &'a F,
    pub(crate) start: SystemTime,
    pub(crate) stop: &'a AtomicBool,
}

/// Serves `stream` one request and closes it; `Err` says why it got no metrics. `proven` is
/// set once the client has shown what the endpoint asks (its TLS certificate, a whole
/// request, its password): until then, a newer connection may displace it.
pub(crate) fn connection<F: Fn() -> Sample>(
    stream: &TcpStream,
    at: &Endpoint<'_, F>,
    proven: &AtomicBool,
) -> Result<(), Rejection> {
    first_byte(stream, at.stop)?;
    let deadline = Cell::new(Instant::now() + REQUEST_DEADLINE);
    // Blocking, with time-outs (an accepted socket does not inherit the listener's mode on
    // Linux; said here so it holds anywhere).
    stream
        .set_nonblocking(false)
        .map_err(|_| Rejection::BadRequest)?;
    let mut io = Timed {
        stream,
        deadline: &deadline,
        stop: at.stop,
    };
    let result = match at.tls {
        Some(config) => {
            let mut conn =
                ServerConnection::new(config.clone()).map_err(|_| Rejection::TlsHandshake)?;
            handshake(&mut conn, &mut io)?;
            let mut tls = rustls::Stream::new(&mut conn, &mut io);
            let result = exchange(&mut tls, at, &deadline, proven);
            conn.send_close_notify();
            while conn.wants_write() && conn.write_tls(&mut io).is_ok_and(|n| n > 0) {}
            result
        }
        None => exchange(&mut io, at, &deadline, proven),
    };
    linger(stream, &deadline);
    result
}

/// Waits up to [`FIRST_BYTE_DEADLINE`] for the client's first byte (a slice at a time:
/// a stopping zcap is not kept waiting).
fn first_byte(stream: &TcpStream, stop: &AtomicBool) -> Result<(), Rejection> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let until = Instant::now() + FIRST_BYTE_DEADLINE;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Rejection::Deadline);
        }
        let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLIN)];
        let wait = PollTimeout::try_from(left.min(SLICE)).unwrap_or(PollTimeout::ZERO);
        match poll(&mut fds, wait) {
            Ok(n) if n > 0 => return Ok(()),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return Err(Rejection::BadRequest),
        }
    }
}

/// The TLS handshake; a peer that does not speak TLS gets no alert.
fn handshake(conn: &mut ServerConnection, io: &mut Timed<'_>) -> Result<(), Rejection> {
    let failed = |e: &io::Error| match e.kind() {
        io::ErrorKind::TimedOut => Rejection::Deadline,
        _ => Rejection::TlsHandshake,
    };
    while conn.is_handshaking() {
        while conn.wants_write() {
            conn.write_tls(io).map_err(|e| failed(&e))?;
        }
        if !conn.is_handshaking() {
            break;
        }
        match conn.read_tls(io) {
            Ok(0) => return Err(Rejection::TlsHandshake),
            Ok(_) => {}
            Err(e) => return Err(failed(&e)),
        }
        if let Err(e) = conn.process_new_packets() {
            if tls::peer_spoke_tls(&e) {
                let _ = conn.write_tls(io);
            }
            return Err(Rejection::TlsHandshake);
        }
    }
    while conn.wants_write() {
        conn.write_tls(io).map_err(|e| failed(&e))?;
    }
    Ok(())
}

/// Reads the request head and answers it.
fn exchange<F: Fn() -> Sample, S: Read + Write>(
    s: &mut S,
    at: &Endpoint<'_, F>,
    deadline: &Cell<Instant>,
    proven: &AtomicBool,
) -> Result<(), Rejection> {
    let mut buf = vec![0u8; MAX_HEAD];
    let mut len = 0;
    loop {
        if len == MAX_HEAD {
            return refuse(s, deadline, 431, Rejection::HeaderTooLarge);
        }
        match s.read(&mut buf[len..]) {
            // Closed before a whole head: nothing to answer.
            Ok(0) => return Err(Rejection::BadRequest),
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(Rejection::Deadline),
            Err(_) => return Err(Rejection::BadRequest),
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match httparse::Request::new(&mut headers).parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => break,
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => {
                return refuse(s, deadline, 431, Rejection::HeaderTooLarge)
            }
            Err(_) => return refuse(s, deadline, 400, Rejection::BadRequest),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    req.parse(&buf[..len]).map_err(|_| Rejection::BadRequest)?;
    answer(s, &req, at, deadline, proven)
}

/// The answer to a whole request head.
fn answer<F: Fn() -> Sample, S: Write>(
    s: &mut S,
    req: &httparse::Request<'_, '_>,
    at: &Endpoint<'_, F>,
    deadline: &Cell<Instant>,
    proven: &AtomicBool,
) -> Result<(), Rejection> {
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let head_only = match req.method {
        Some("GET") => false,
        Some("HEAD") => true,
        _ => return refuse(s, deadline, 405, Rejection::BadRequest),
    };
    let body = header("transfer-encoding").is_some()
        || header("content-length").is_some_and(|v| v.trim_ascii() != b"0");
    if body {
        return refuse(s, deadline, 413, Rejection::BadRequest);
    }
    if let Some(auth) = at.auth {
        if !auth.admits(header("authorization")) {
            return refuse(s, deadline, 401, Rejection::Unauthorized);
        }
    }
    proven.store(true, std::sync::atomic::Ordering::Relaxed);
    let path = req.path.unwrap_or("").split('?').next().unwrap_or("");
    deadline.set(Instant::now() + ANSWER_DEADLINE);
    if path != "/metrics" && path != "/" {
        let r = respond(
            s,
            404,
            "text/plain; charset=utf-8",
            b"zcap serves /metrics\n",
            head_only,
        );
        return r.map_err(|_| Rejection::Deadline);
    }
    let openmetrics = header("accept").is_some_and(|v| {
        v.windows(b"application/openmetrics-text".len())
            .any(|w| w == b"application/openmetrics-text")
    });
    let text = encode((at.sample)(), at.start);
    let (text, content_type) = match openmetrics {
        true => (text, OPENMETRICS),
        false => (classic(&text), PROMETHEUS_TEXT),
    };
    respond(s, 200, content_type, text.as_bytes(), head_only).map_err(|_| Rejection::Deadline)
}

/// Answers `status` with a short text, and says why.
fn refuse<S: Write>(
    s: &mut S,
    deadline: &Cell<Instant>,
    status: u16,
    why: Rejection,
) -> Result<(), Rejection> {
    deadline.set(Instant::now() + ANSWER_DEADLINE);
    let text = format!("{} {}\n", status, reason(status));
    let _ = respond(
        s,
        status,
        "text/plain; charset=utf-8",
        text.as_bytes(),
        false,
    );
    Err(why)
}

/// The reason phrase of the statuses zcap answers with.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "",
    }
}

/// One answer, head and body in one write; the connection closes after it.
fn respond<S: Write>(
    s: &mut S,
    status: u16,
    content_type: &str,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    match status {
        401 => out.push_str("WWW-Authenticate: Basic realm=\"zcap\", charset=\"UTF-8\"\r\n"),
        405 => out.push_str("Allow: GET, HEAD\r\n"),
        _ => {}
    }
    out.push_str("\r\n");
    let mut all = out.into_bytes();
    if !head_only {
        all.extend_from_slice(body);
    }
    s.write_all(&all)?;
    s.flush()
}

/// Ends the connection: no more writes, and what the client still sends read and dropped
/// for a little while (bounded in time and bytes).
fn linger(stream: &TcpStream, deadline: &Cell<Instant>) {
    let _ = stream.shutdown(Shutdown::Write);
    deadline.set(deadline.get().min(Instant::now() + LINGER));
    let stop = AtomicBool::new(false);
    let mut io = Timed {
        stream,
        deadline,
        stop: &stop,
    };
    let mut sink = [0u8; 4096];
    let mut dropped = 0;
    while dropped < LINGER_BYTES {
        match io.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => dropped += n,
        }
    }
}

/// A connection's socket whose reads and writes end with `TimedOut` at the deadline or
/// when zcap stops.
struct Timed<'a> {
    stream: &'a TcpStream,
    deadline: &'a Cell<Instant>,
    stop: &'a AtomicBool,
}

impl Timed<'_> {
    /// The wait for the next read or write, or `TimedOut`.
    fn wait(&self) -> io::Result<Duration> {
        let left = self
            .deadline
            .get()
            .saturating_duration_since(Instant::now());
        if left.is_zero() || self.stop.load(Relaxed) {
            return Err(io::ErrorKind::TimedOut.into());
        }
        Ok(left.min(SLICE))
    }

    /// `op` again until it does something, the deadline passes or zcap stops.
    fn retry<T>(
        &mut self,
        set: fn(&TcpStream, Option<Duration>) -> io::Result<()>,
        mut op: impl FnMut(&mut &TcpStream) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            set(self.stream, Some(self.wait()?))?;
            let mut s = self.stream;
            match op(&mut s) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                other => return other,
            }
        }
    }
}

impl Read for Timed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.retry(TcpStream::set_read_timeout, |s| s.read(buf))
    }
}

impl Write for Timed<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.retry(TcpStream::set_write_timeout, |s| s.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn an_ipv6_slash_64_holds_one_share_and_an_ipv4_address_one() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(share_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            share_of(ip("2001:db8:1:2:ffff:1:2:3")),
            ip("2001:db8:1:2::")
        );
        assert_ne!(share_of(ip("2001:db8:1:3::1")), ip("2001:db8:1:2::"));
        assert_eq!(share_of(ip("198.18.0.7")), ip("198.18.0.7"));
        assert_eq!(share_of(ip("::ffff:198.18.0.7")), ip("198.18.0.7"));
    }

    /// A client that sends `input` then waits (reads past it time out) and keeps what it
    /// is sent.
    struct Client {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Client {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.input.read(buf)? {
                0 => Err(io::ErrorKind::TimedOut.into()),
                n => Ok(n),
            }
        }
    }

    impl Write for Client {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// What zcap answers `input` (with basic authentication of alice:pw if `auth`), and why
    /// it gave no metrics.
    fn ask(input: &[u8], auth: Option<&BasicAuth>) -> (String, Result<(), Rejection>) {
        let mut c = Client {
            input: io::Cursor::new(input.to_vec()),
            output: Vec::new(),
        };
        let stop = AtomicBool::new(false);
        let sample = Sample::default;
        let at = Endpoint {
            tls: None,
            auth,
            sample: &sample,
            start: SystemTime::UNIX_EPOCH,
            stop: &stop,
        };
        let deadline = Cell::new(Instant::now() + REQUEST_DEADLINE);
        let r = exchange(&mut c, &at, &deadline, &AtomicBool::new(false));
        (String::from_utf8_lossy(&c.output).into_owned(), r)
    }

    #[test]
    fn a_scrape_gets_the_metrics_and_other_paths_404() {
        let (out, r) = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", None);
        assert!(r.is_ok() && out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(
            out.contains("text/plain; version=0.0.4") && out.contains("zcap_start_time_seconds"),
            "{out}"
        );
        let (out, _) = ask(
            b"GET /?x=1 HTTP/1.0\r\nAccept: application/openmetrics-text\r\n\r\n",
            None,
        );
        assert!(
            out.contains("application/openmetrics-text") && out.ends_with("# EOF\n"),
            "{out}"
        );
        let (out, r) = ask(b"HEAD /metrics HTTP/1.1\r\n\r\n", None);
        assert!(r.is_ok() && out.ends_with("\r\n\r\n"), "{out}");
        let (out, r) = ask(b"GET /other HTTP/1.1\r\n\r\n", None);
        assert!(r.is_ok() && out.starts_with("HTTP/1.1 404 "), "{out}");
    }

    #[test]
    fn bad_requests_get_their_status_and_no_metrics() {
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        let headers = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: y\r\n".repeat(MAX_HEADERS + 1)
        );
        for (input, status, why) in [
            (big.as_bytes(), "431", Rejection::HeaderTooLarge),
            (headers.as_bytes(), "431", Rejection::HeaderTooLarge),
            (
                &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n"[..],
                "400",
                Rejection::BadRequest,
            ),
            (
                b"POST /metrics HTTP/1.1\r\n\r\n",
                "405",
                Rejection::BadRequest,
            ),
            (
                b"GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
                "413",
                Rejection::BadRequest,
            ),
            (
                b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "413",
                Rejection::BadRequest,
            ),
        ] {
            let (out, r) = ask(input, None);
            assert_eq!(r, Err(why), "{out}");
            assert!(out.starts_with(&format!("HTTP/1.1 {status} ")), "{out}");
            assert!(!out.contains("zcap_"), "{out}");
        }
        // A head that never ends: no answer, the deadline's reason.
        let (out, r) = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n", None);
        assert_eq!((out.as_str(), r), ("", Err(Rejection::Deadline)));
    }

    #[test]
    fn without_valid_credentials_the_answer_is_401_with_a_basic_challenge() {
        let hash = bcrypt::hash("pw", 4).unwrap();
        let auth = BasicAuth::new(BTreeMap::from([("alice".to_string(), hash)])).unwrap();
        for input in [
            &b"GET /metrics HTTP/1.1\r\n\r\n"[..],
            b"GET /metrics HTTP/1.1\r\nAuthorization: Basic YWxpY2U6d3Jvbmc=\r\n\r\n",
        ] {
            let (out, r) = ask(input, Some(&auth));
            assert_eq!(r, Err(Rejection::Unauthorized));
            assert!(
                out.starts_with("HTTP/1.1 401 ") && out.contains("\r\nWWW-Authenticate: Basic "),
                "{out}"
            );
            assert!(!out.contains("zcap_"), "{out}");
        }
        let ok = b"GET /metrics HTTP/1.1\r\nAuthorization: Basic YWxpY2U6cHc=\r\n\r\n";
        let (out, r) = ask(ok, Some(&auth));
        assert!(
            r.is_ok() && out.contains("zcap_start_time_seconds"),
            "{out}"
        );
    }
}
