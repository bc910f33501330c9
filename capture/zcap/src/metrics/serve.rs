//! The HTTP server a scraper reads: bound before `-Z`, on a thread of the capture's scope,
//! rebinding a port that was taken.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::Scope;
use std::time::{Duration, Instant, SystemTime};

use super::encode::{classic, encode};
use super::sample::Sample;

/// A scraper's socket gives up on a read or a write after this long.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a taken port is tried again.
pub(crate) const REBIND_EVERY: Duration = Duration::from_secs(1);

/// The OpenMetrics content type (Prometheus asks for it).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The older Prometheus text format, for clients that do not ask for OpenMetrics (curl,
/// `promtool check metrics`, scripts).
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The server: answers scrapes until dropped.
pub(crate) struct Serving {
    stop: Arc<AtomicBool>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// Binds `addr` with a send timeout on the listening socket, which the sockets it accepts
/// inherit: an answer to a client that never reads gives up after [`IO_TIMEOUT`]. (Not a
/// receive timeout: on the listener that would end tiny_http's accept loop after
/// [`IO_TIMEOUT`] without a client. A client that connects and sends nothing holds only a
/// thread of tiny_http's pool.)
///
/// Says on standard error where it serves (the port the system chose for port 0).
fn bind(addr: SocketAddr) -> std::io::Result<tiny_http::Server> {
    let listener = TcpListener::bind(addr)?;
    let t = nix::sys::time::TimeVal::new(IO_TIMEOUT.as_secs() as _, 0);
    nix::sys::socket::setsockopt(&listener, nix::sys::socket::sockopt::SendTimeout, &t)?;
    let bound = listener.local_addr()?;
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    eprintln!("zcap: serving metrics on http://{bound}/metrics");
    Ok(server)
}

/// The metrics port, bound (or taken by something else: said once, tried again later).
pub(crate) struct Listening {
    addr: SocketAddr,
    server: Option<tiny_http::Server>,
    start: SystemTime,
}

/// Binds `--metrics`' address now, before `-Z` drops root (a port below 1024 needs it).
/// A port that is taken is said once on standard error, not an error: the capture goes on.
pub(crate) fn listen(addr: Option<SocketAddr>) -> Option<Listening> {
    let addr = addr?;
    let server = match bind(addr) {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!(
                "zcap: --metrics {addr}: {e}; capturing without metrics, trying again every {} s",
                REBIND_EVERY.as_secs()
            );
            None
        }
    };
    Some(Listening {
        addr,
        server,
        start: SystemTime::now(),
    })
}

impl Listening {
    /// Serves `sample()` on a thread of `s` until the returned [`Serving`] is dropped; a
    /// port that was taken is tried again every [`REBIND_EVERY`].
    pub(crate) fn serve<'s, 'e: 's>(
        self,
        s: &'s Scope<'s, 'e>,
        sample: impl Fn() -> Sample + Send + 's,
    ) -> Serving {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        s.spawn(move || self.run(&stopped, sample));
        Serving { stop }
    }

    fn run(mut self, stopped: &AtomicBool, sample: impl Fn() -> Sample) {
        let (addr, start) = (self.addr, self.start);
        let mut last_try = Instant::now();
        while !stopped.load(Relaxed) {
            let Some(sv) = &self.server else {
                std::thread::sleep(Duration::from_millis(100));
                if last_try.elapsed() >= REBIND_EVERY {
                    last_try = Instant::now();
                    if let Ok(sv) = bind(addr) {
                        eprintln!("zcap: --metrics {addr}: serving metrics now");
                        self.server = Some(sv);
                    }
                }
                continue;
            };
            let request = match sv.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                // tiny_http's accept loop ended (out of descriptors, say): bind again.
                Err(e) => {
                    eprintln!("zcap: --metrics {addr}: {e}; serving again as soon as it can");
                    self.server = None;
                    last_try = Instant::now();
                    continue;
                }
            };
            let response = if request.url() == "/metrics" || request.url() == "/" {
                let openmetrics = request.headers().iter().any(|h| {
                    h.field.equiv("Accept")
                        && h.value.as_str().contains("application/openmetrics-text")
                });
                let text = encode(sample(), start);
                let (text, content_type) = match openmetrics {
                    true => (text, OPENMETRICS),
                    false => (classic(&text), PROMETHEUS_TEXT),
                };
                let content_type = tiny_http::Header::from_bytes("Content-Type", content_type)
                    .expect("a valid header");
                tiny_http::Response::from_string(text).with_header(content_type)
            } else {
                tiny_http::Response::from_string("zcap serves /metrics\n").with_status_code(404)
            };
            // A client gone or too slow (the write timed out) is not the capture's concern.
            let _ = request.respond(response);
        }
    }
}
