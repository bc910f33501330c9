//! Privilege separation, as OpenSSH separates its pre-authentication child: the process
//! that parses hostile bytes is not the one that holds the packet sockets.
//!
//! Once a capture is set up (rings open, listeners bound, `-Z` done) and before any thread
//! starts, [`split`] forks:
//!
//! - the **monitor** (the parent) keeps the packet sockets and nothing else but standard
//!   error: it closes every other descriptor, drops every capability, becomes
//!   non-dumpable (no process of its user may trace it or read its memory), enters a
//!   Landlock domain with no file and no port, and a seccomp filter of
//!   [`crate::confine::MONITOR_ALLOWED`]. It answers two requests of the worker on a `SOCK_SEQPACKET` pair
//!   ([`answer`]: a socket's statistics, its pending error), passes on the signals the
//!   terminal or systemd sends (the worker is in a session of its own), and ends with the
//!   worker's exit status.
//! - the **worker** (the child) runs the capture: the parsers, the printer, the writers,
//!   the endpoints. It starts a session of its own (no controlling terminal: TIOCSTI,
//!   which needs one, fails), closes the packet sockets, waits on epoll instances that
//!   watch them (`zcrx_ring::PacketSocket::watch`), and asks the monitor for what only the
//!   sockets answer. It is then confined ([`crate::sandbox::confine`]).
//!
//! A compromised worker therefore has no socket that can write to the link, set a socket
//! option on it or be handed to another process; what it can ask of the monitor is two
//! reads, each a fixed-size message checked before it is answered.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};
use nix::unistd::Pid;
use zcrx_ring::{PacketSocket, SocketHolder};

/// A request: statistics of socket `index`.
const STATISTICS: u32 = 1;
/// A request: the pending error of socket `index`.
const TAKE_ERROR: u32 = 2;
/// A request's size: the operation and the socket's index (u32 each, native order).
const REQUEST: usize = 8;
/// An answer's size: an errno (0: answered) and three u32.
const ANSWER: usize = 16;

/// What the worker gets for each packet socket: the epoll instance to wait on and the
/// holder to ask.
pub(crate) type Held = (OwnedFd, Arc<dyn SocketHolder>);

/// Forks the monitor off (see the module's doc). Returns, in the worker, what each of
/// `sockets` is replaced with; the monitor never returns. `sockets` must be the process'
/// only packet sockets and the process must have one thread.
pub(crate) fn split(sockets: &[PacketSocket<'_>]) -> Result<Vec<Held>> {
    let epolls = sockets
        .iter()
        .map(|s| s.watch().context("privilege separation: an epoll instance"))
        .collect::<Result<Vec<_>>>()?;
    let (monitor_end, worker_end) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .context("privilege separation: socketpair")?;
    match crate::system::fork().context("privilege separation: fork")? {
        Some(worker) => {
            let keep: Vec<RawFd> = sockets.iter().map(|s| s.as_fd().as_raw_fd()).collect();
            monitor(sockets, &keep, monitor_end, worker)
        }
        None => {
            drop(monitor_end);
            nix::unistd::setsid().context("privilege separation: setsid")?;
            // The sockets close here, before the worker is confined, not when the rings
            // give them up: each descriptor now names its epoll instance (what the ring
            // later drops when it takes the instance itself).
            for (socket, epoll) in sockets.iter().zip(&epolls) {
                crate::system::replace_fd(epoll.as_fd(), socket.as_fd())
                    .context("privilege separation: closing a packet socket")?;
            }
            let channel = Arc::new(Channel(Mutex::new(worker_end)));
            Ok(epolls
                .into_iter()
                .enumerate()
                .map(|(index, epoll)| {
                    let remote: Arc<dyn SocketHolder> = Arc::new(Remote {
                        channel: Arc::clone(&channel),
                        index: index as u32,
                    });
                    (epoll, remote)
                })
                .collect())
        }
    }
}

/// The worker's end of the pair, one request at a time.
#[derive(Debug)]
struct Channel(Mutex<OwnedFd>);

/// One packet socket as the worker sees it: an index into the monitor's.
#[derive(Debug)]
struct Remote {
    channel: Arc<Channel>,
    index: u32,
}

impl Remote {
    fn ask(&self, op: u32) -> std::io::Result<[u32; 3]> {
        let fd = self.channel.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut req = [0u8; REQUEST];
        req[..4].copy_from_slice(&op.to_ne_bytes());
        req[4..].copy_from_slice(&self.index.to_ne_bytes());
        send(fd.as_raw_fd(), &req, MsgFlags::MSG_NOSIGNAL)?;
        let mut ans = [0u8; ANSWER];
        let n = recv(fd.as_raw_fd(), &mut ans, MsgFlags::empty())?;
        if n != ANSWER {
            return Err(std::io::Error::other("the monitor process is gone"));
        }
        let word = |i: usize| u32::from_ne_bytes(ans[i * 4..i * 4 + 4].try_into().expect("4"));
        match word(0) as i32 {
            0 => Ok([word(1), word(2), word(3)]),
            errno => Err(std::io::Error::from_raw_os_error(errno)),
        }
    }
}

impl SocketHolder for Remote {
    fn statistics(&self) -> std::io::Result<[u32; 3]> {
        self.ask(STATISTICS)
    }

    fn take_error(&self) -> std::io::Result<Option<std::io::Error>> {
        let [code, ..] = self.ask(TAKE_ERROR)?;
        Ok((code != 0).then(|| std::io::Error::from_raw_os_error(code as i32)))
    }
}

/// The monitor's answer to `request` (bytes from the worker, which may be compromised):
/// anything but a [`REQUEST`]-byte message naming a known operation and socket gets EINVAL.
pub(crate) fn answer(request: &[u8], sockets: &[PacketSocket<'_>]) -> [u8; ANSWER] {
    let result = (|| {
        let req: [u8; REQUEST] = request.try_into().ok()?;
        let op = u32::from_ne_bytes(req[..4].try_into().ok()?);
        let socket = sockets.get(u32::from_ne_bytes(req[4..].try_into().ok()?) as usize)?;
        Some(match op {
            STATISTICS => socket.statistics(),
            TAKE_ERROR => socket
                .take_error()
                .map(|e| [e.and_then(|e| e.raw_os_error()).unwrap_or(0) as u32, 0, 0]),
            _ => return None,
        })
    })();
    let (errno, words) = match result {
        Some(Ok(words)) => (0, words),
        Some(Err(e)) => (e.raw_os_error().unwrap_or(libc::EIO), [0; 3]),
        None => (libc::EINVAL, [0; 3]),
    };
    let mut out = [0u8; ANSWER];
    out[..4].copy_from_slice(&errno.to_ne_bytes());
    for (i, w) in words.iter().enumerate() {
        out[4 + i * 4..8 + i * 4].copy_from_slice(&w.to_ne_bytes());
    }
    out
}

/// The signals the monitor passes on to the worker: what a terminal or a service manager
/// sends to stop, report (SIGUSR1) or resize a capture.
const PASSED_ON: [nix::sys::signal::Signal; 6] = {
    use nix::sys::signal::Signal::*;
    [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGWINCH]
};

/// The monitor: never returns (see the module's doc).
fn monitor(sockets: &[PacketSocket<'_>], keep: &[RawFd], channel: OwnedFd, worker: Pid) -> ! {
    let code = match serve(sockets, keep, &channel, worker) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("zcap: monitor: {e:#}");
            // The worker must not outlive a monitor that can no longer answer it.
            let _ = nix::sys::signal::kill(worker, nix::sys::signal::Signal::SIGTERM);
            let _ = nix::sys::wait::waitpid(worker, None);
            1
        }
    };
    std::process::exit(code)
}

fn serve(
    sockets: &[PacketSocket<'_>],
    keep: &[RawFd],
    channel: &OwnedFd,
    worker: Pid,
) -> Result<i32> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let mut mask = SigSet::empty();
    for s in PASSED_ON.into_iter().chain([Signal::SIGCHLD]) {
        mask.add(s);
    }
    mask.thread_block().context("blocking the signals")?;
    let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .context("signalfd")?;
    let mut kept: Vec<RawFd> = keep.to_vec();
    kept.extend([2, channel.as_raw_fd(), signals.as_fd().as_raw_fd()]);
    close_all_but(&kept)?;
    crate::confine::confine_monitor(worker.as_raw())?;
    let mut open = true;
    loop {
        if let Some(code) = worker_ended(worker)? {
            return Ok(code);
        }
        let mut fds = vec![PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
        if open {
            fds.push(PollFd::new(channel.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(anyhow!("poll: {e}")),
        }
        let channel_ready = fds.get(1).and_then(PollFd::revents);
        while let Ok(Some(info)) = signals.read_signal() {
            let Ok(sig) = Signal::try_from(info.ssi_signo as i32) else {
                continue;
            };
            if sig != Signal::SIGCHLD {
                let _ = nix::sys::signal::kill(worker, sig);
            }
        }
        if let Some(ready) = channel_ready.filter(|r| !r.is_empty()) {
            open = answer_one(channel.as_fd(), sockets, ready)?;
        }
    }
}

/// Answers one request on `channel`; `false` once the worker's end is closed.
fn answer_one(
    channel: BorrowedFd<'_>,
    sockets: &[PacketSocket<'_>],
    ready: nix::poll::PollFlags,
) -> Result<bool> {
    use nix::poll::PollFlags;
    if !ready.contains(PollFlags::POLLIN) {
        return Ok(false);
    }
    // One byte more than a request: a longer message is seen as such, not cut to size.
    let mut buf = [0u8; REQUEST + 1];
    let n = match recv(channel.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
        Ok(0) => return Ok(false),
        Ok(n) => n,
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => return Ok(true),
        Err(e) => return Err(anyhow!("reading the worker's request: {e}")),
    };
    let reply = answer(&buf[..n], sockets);
    match send(channel.as_raw_fd(), &reply, MsgFlags::MSG_NOSIGNAL) {
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::EPIPE | nix::errno::Errno::ECONNRESET) => Ok(false),
        Err(e) => Err(anyhow!("answering the worker: {e}")),
    }
}

/// The worker's exit code once it ended (128 + the signal that killed it), reaping any
/// other child of the monitor meanwhile.
fn worker_ended(worker: Pid) -> Result<Option<i32>> {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == worker => return Ok(Some(code)),
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == worker => {
                eprintln!("zcap: the capture process was killed by {sig}");
                return Ok(Some(128 + sig as i32));
            }
            Ok(WaitStatus::StillAlive) => return Ok(None),
            Ok(_) => continue,
            Err(nix::errno::Errno::ECHILD) => return Err(anyhow!("the capture process is gone")),
            Err(e) => return Err(anyhow!("waitpid: {e}")),
        }
    }
}

/// Closes every descriptor of the process but `keep`.
fn close_all_but(keep: &[RawFd]) -> Result<()> {
    let open: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")
        .context("listing the descriptors")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open.into_iter().filter(|fd| !keep.contains(fd)) {
        // The directory's own descriptor is listed and gone by now: EBADF is expected.
        let _ = nix::unistd::close(fd);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: u32, index: u32) -> Vec<u8> {
        [op.to_ne_bytes(), index.to_ne_bytes()].concat()
    }

    fn errno(answer: [u8; ANSWER]) -> i32 {
        i32::from_ne_bytes(answer[..4].try_into().unwrap())
    }

    #[test]
    fn the_monitor_answers_nothing_but_its_two_requests_on_its_sockets() {
        // A UDP socket stands for a packet socket: its PACKET_STATISTICS fails with the
        // kernel's errno, which the answer carries.
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let sockets = [PacketSocket::new(udp.as_fd(), true)];
        for hostile in [
            vec![],
            vec![1],
            req(STATISTICS, 0)[..7].to_vec(),
            [req(STATISTICS, 0), vec![0]].concat(),
            req(STATISTICS, 1),
            req(STATISTICS, u32::MAX),
            req(0, 0),
            req(3, 0),
            req(u32::MAX, 0),
        ] {
            assert_eq!(
                errno(answer(&hostile, &sockets)),
                libc::EINVAL,
                "{hostile:?}"
            );
        }
        let stats = answer(&req(STATISTICS, 0), &sockets);
        assert_ne!(errno(stats), 0);
        assert_ne!(errno(stats), libc::EINVAL);
        let pending = answer(&req(TAKE_ERROR, 0), &sockets);
        assert_eq!(errno(pending), 0, "SO_ERROR of a healthy socket");
        assert_eq!(&pending[4..], &[0u8; 12]);
    }
}
