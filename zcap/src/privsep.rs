//! Privilege separation, as OpenSSH separates its pre-authentication child: the process
//! that parses hostile bytes is not the one that holds the packet sockets.
//!
//! Once a capture is set up (rings open, listeners bound, `-Z` done) and before any thread
//! starts, [`split`] forks:
//!
//! - the **monitor** (the parent) keeps the packet sockets, the endpoints' listening
//!   sockets (`crate::listeners`), their secrets (`crate::secrets`: it reads the TLS keys
//!   from their files now) and nothing else but standard error: it closes every other
//!   descriptor, drops every capability, becomes
//!   non-dumpable (no process of its user may trace it or read its memory), enters a
//!   Landlock domain with no file and no port, and a seccomp filter of
//!   [`crate::confine::MONITOR_ALLOWED`]. It answers six requests of the worker on a
//!   `SOCK_SEQPACKET` pair ([`answer`]: a socket's statistics, its pending error, a
//!   handshake's signature, a password's check, a connection accepted, a listener bound
//!   again), passes on the signals the terminal or
//!   systemd sends (the worker is in a session of its own), and ends with the worker's
//!   exit status. The worker goes on only once the monitor says it is confined.
//! - the **worker** (the child) runs the capture: the parsers, the printer, the writers,
//!   the endpoints. It starts a session of its own (no controlling terminal: TIOCSTI,
//!   which needs one, fails), closes the packet sockets, waits on epoll instances that
//!   watch them (`zcrx_ring::PacketSocket::watch`) and on others that watch the listeners,
//!   and asks the monitor for what only the sockets answer. It is then confined
//!   ([`crate::sandbox::confine`]).
//!
//! A compromised worker therefore has no socket that can write to the link, set a socket
//! option on it or be handed to another process, no listening socket, and no private key;
//! what it can ask of the monitor is two reads, signatures, password checks and the
//! connections that come, each message bounded and checked before it is answered.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};
use nix::unistd::Pid;
use zcrx_ring::{PacketSocket, SocketHolder};

use crate::listeners::{ACCEPT, REBIND};

/// A request: statistics of socket `index`.
const STATISTICS: u32 = 1;
/// A request: the pending error of socket `index`.
const TAKE_ERROR: u32 = 2;
// 3 and 4: `secrets::SIGN` (key `index`) and `secrets::CHECK_PASSWORD`; 5 and 6:
// `listeners::ACCEPT` and `listeners::REBIND` (listener `index`), answered with a
// descriptor.
/// A request's head: the operation and an index (u32 each, native order); a payload
/// follows for the secrets' requests.
const HEAD: usize = 8;
/// The most a payload holds, either way (a TLS handshake's signed content is far smaller;
/// a user and password come from an 8 KiB request head).
const MAX_PAYLOAD: usize = 16 << 10;

/// What the worker gets for each packet socket: the epoll instance to wait on and the
/// holder to ask.
pub(crate) type Held = (OwnedFd, Arc<dyn SocketHolder>);

/// Forks the monitor off (see the module's doc). Returns, in the worker, what each of
/// `sockets` is replaced with; the monitor never returns. `sockets` must be the process'
/// only packet sockets and the process must have one thread.
pub(crate) fn split(
    sockets: &[PacketSocket<'_>],
    auth: Option<&crate::metrics::BasicAuth>,
) -> Result<Vec<Held>> {
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
            let mut keep: Vec<RawFd> = sockets.iter().map(|s| s.as_fd().as_raw_fd()).collect();
            keep.extend(crate::secrets::source_fds());
            keep.extend(auth.and_then(crate::metrics::BasicAuth::source_fd));
            keep.extend(crate::listeners::kept_fds());
            monitor(sockets, auth, &keep, monitor_end, worker)
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
            // The secrets' sources closed, the hashes zeroed: the monitor answers for them.
            let asked = Arc::clone(&channel);
            crate::secrets::forget_all(Box::new(move |op, index, payload| {
                asked.ask(op, index, payload)
            }));
            if let Some(auth) = auth {
                auth.forget();
            }
            let asked = Arc::clone(&channel);
            crate::listeners::hand_over(Box::new(move |op, index| asked.ask_for_fd(op, index)))
                .context("privilege separation: the listeners")?;
            // The monitor says when it is confined, its keys read: only then does the
            // capture go on (and say it listens).
            let mut ready = [0u8; 4];
            let n = recv(
                channel
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_raw_fd(),
                &mut ready,
                MsgFlags::empty(),
            )
            .context("privilege separation: waiting for the monitor")?;
            if n != 4 || ready != [0; 4] {
                anyhow::bail!("privilege separation: the monitor did not start");
            }
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

impl Channel {
    /// Sends request `op` on `index` with `payload` and waits for the answer's payload
    /// (an errno in its place when the monitor refused).
    fn ask(&self, op: u32, index: u32, payload: &[u8]) -> std::io::Result<Vec<u8>> {
        self.exchange(op, index, payload).map(|(answer, _)| answer)
    }

    /// Sends request `op` on `index` and waits for the descriptor the answer carries.
    fn ask_for_fd(&self, op: u32, index: u32) -> std::io::Result<OwnedFd> {
        let (_, fd) = self.exchange(op, index, &[])?;
        fd.ok_or_else(|| std::io::Error::other("the monitor answered without a descriptor"))
    }

    fn exchange(
        &self,
        op: u32,
        index: u32,
        payload: &[u8],
    ) -> std::io::Result<(Vec<u8>, Option<OwnedFd>)> {
        use nix::sys::socket::{recvmsg, ControlMessageOwned};
        if payload.len() > MAX_PAYLOAD {
            return Err(std::io::Error::from_raw_os_error(libc::EMSGSIZE));
        }
        let fd = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut req = Vec::with_capacity(HEAD + payload.len());
        req.extend_from_slice(&op.to_ne_bytes());
        req.extend_from_slice(&index.to_ne_bytes());
        req.extend_from_slice(payload);
        send(fd.as_raw_fd(), &req, MsgFlags::MSG_NOSIGNAL)?;
        let mut ans = vec![0u8; 4 + MAX_PAYLOAD];
        let mut space = nix::cmsg_space!(RawFd);
        let mut iov = [std::io::IoSliceMut::new(&mut ans)];
        let msg = recvmsg::<()>(
            fd.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )?;
        let n = msg.bytes;
        let mut passed = Vec::new();
        for c in msg.cmsgs()? {
            if let ControlMessageOwned::ScmRights(fds) = c {
                passed.extend(crate::system::owned_fds(&fds));
            }
        }
        if n < 4 {
            return Err(std::io::Error::other("the monitor process is gone"));
        }
        ans.truncate(n);
        match i32::from_ne_bytes(ans[..4].try_into().expect("4")) {
            0 => Ok((ans.split_off(4), passed.into_iter().next())),
            errno => Err(std::io::Error::from_raw_os_error(errno)),
        }
    }
}

impl Remote {
    fn ask(&self, op: u32) -> std::io::Result<[u32; 3]> {
        let ans = self.channel.ask(op, self.index, &[])?;
        let word = |i: usize| {
            ans.get(i * 4..i * 4 + 4)
                .map_or(0, |b| u32::from_ne_bytes(b.try_into().expect("4")))
        };
        Ok([word(0), word(1), word(2)])
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
/// an errno (0: answered) and the answer's payload, and the descriptor it carries (a
/// connection accepted, a listener's epoll instance). A message shorter than its head, a
/// payload where none goes, an unknown operation, socket, key or listener, or credentials
/// that do not decode get EINVAL; a statistics or error read or an accept that fails, its
/// errno.
pub(crate) fn answer(
    request: &[u8],
    sockets: &[PacketSocket<'_>],
    auth: Option<&crate::metrics::BasicAuth>,
) -> (Vec<u8>, Option<OwnedFd>) {
    let result: Option<std::io::Result<(Vec<u8>, Option<OwnedFd>)>> = (|| {
        let (head, payload) = request.split_at_checked(HEAD)?;
        if payload.len() > MAX_PAYLOAD {
            return None;
        }
        let op = u32::from_ne_bytes(head[..4].try_into().ok()?);
        let index = u32::from_ne_bytes(head[4..].try_into().ok()?);
        let words = |w: [u32; 3]| w.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let bytes = Some(match op {
            STATISTICS | TAKE_ERROR | ACCEPT | REBIND if !payload.is_empty() => return None,
            ACCEPT | REBIND => {
                return Some(crate::listeners::answer(op, index)?.map(|fd| (vec![], Some(fd))))
            }
            STATISTICS => sockets.get(index as usize)?.statistics().map(words),
            TAKE_ERROR => sockets
                .get(index as usize)?
                .take_error()
                .map(|e| words([e.and_then(|e| e.raw_os_error()).unwrap_or(0) as u32, 0, 0])),
            crate::secrets::SIGN => Ok(crate::secrets::answer_sign(index, payload)?),
            crate::secrets::CHECK_PASSWORD => {
                let (user, password) = crate::secrets::decode_credentials(payload)?;
                Ok(vec![u8::from(auth?.check(user, password))])
            }
            _ => return None,
        });
        bytes.map(|r| r.map(|b| (b, None)))
    })();
    let (errno, payload, fd) = match result {
        Some(Ok((payload, fd))) => (0, payload, fd),
        Some(Err(e)) => (e.raw_os_error().unwrap_or(libc::EIO), Vec::new(), None),
        None => (libc::EINVAL, Vec::new(), None),
    };
    let mut out = errno.to_ne_bytes().to_vec();
    out.extend_from_slice(&payload);
    (out, fd)
}

/// The signals the monitor passes on to the worker: what a terminal or a service manager
/// sends to stop, report (SIGUSR1) or resize a capture. (Ctrl-Z's SIGTSTP stops both, and
/// SIGCONT, passed on too, makes both go on.)
const PASSED_ON: [nix::sys::signal::Signal; 6] = {
    use nix::sys::signal::Signal::*;
    [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGWINCH]
};

/// The monitor: never returns (see the module's doc).
fn monitor(
    sockets: &[PacketSocket<'_>],
    auth: Option<&crate::metrics::BasicAuth>,
    keep: &[RawFd],
    channel: OwnedFd,
    worker: Pid,
) -> ! {
    let code = match serve(sockets, auth, keep, &channel, worker) {
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
    auth: Option<&crate::metrics::BasicAuth>,
    keep: &[RawFd],
    channel: &OwnedFd,
    worker: Pid,
) -> Result<i32> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let mut mask = SigSet::empty();
    for s in PASSED_ON
        .into_iter()
        .chain([Signal::SIGCHLD, Signal::SIGTSTP, Signal::SIGCONT])
    {
        mask.add(s);
    }
    mask.thread_block().context("blocking the signals")?;
    let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .context("signalfd")?;
    // Its own pid, while getpid is allowed (Ctrl-Z stops it with SIGSTOP to itself).
    let me = nix::unistd::getpid();
    let mut kept: Vec<RawFd> = keep.to_vec();
    kept.extend([2, channel.as_raw_fd(), signals.as_fd().as_raw_fd()]);
    close_all_but(&kept)?;
    // The keys and users read from their files, which close: before the filter.
    crate::secrets::load_all()?;
    if let Some(auth) = auth {
        auth.load().context("--web-config: basic_auth_users")?;
    }
    let listeners = crate::listeners::kept_fds();
    crate::confine::confine_monitor(&crate::confine::MonitorReach {
        worker: worker.as_raw(),
        channel: channel.as_raw_fd(),
        listeners: &listeners,
        rebind: crate::listeners::port_to_rebind(),
    })?;
    send(channel.as_raw_fd(), &[0u8; 4], MsgFlags::MSG_NOSIGNAL)
        .context("telling the worker the monitor is ready")?;
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
            match sig {
                Signal::SIGCHLD => {}
                // Ctrl-Z: the worker (in a session of its own, out of the terminal's reach)
                // stops with the monitor, and goes on with it.
                Signal::SIGTSTP => {
                    let _ = nix::sys::signal::kill(worker, Signal::SIGSTOP);
                    let _ = nix::sys::signal::kill(me, Signal::SIGSTOP);
                }
                _ => {
                    let _ = nix::sys::signal::kill(worker, sig);
                }
            }
        }
        if let Some(ready) = channel_ready.filter(|r| !r.is_empty()) {
            open = answer_one(channel.as_fd(), sockets, auth, ready)?;
        }
    }
}

/// Answers one request on `channel`; `false` once the worker's end is closed.
fn answer_one(
    channel: BorrowedFd<'_>,
    sockets: &[PacketSocket<'_>],
    auth: Option<&crate::metrics::BasicAuth>,
    ready: nix::poll::PollFlags,
) -> Result<bool> {
    use nix::poll::PollFlags;
    if !ready.contains(PollFlags::POLLIN) {
        return Ok(false);
    }
    // One byte more than a request: a longer message is seen as such, not cut to size.
    let mut buf = vec![0u8; HEAD + MAX_PAYLOAD + 1];
    let n = match recv(channel.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
        Ok(0) => return Ok(false),
        Ok(n) => n,
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => return Ok(true),
        Err(e) => return Err(anyhow!("reading the worker's request: {e}")),
    };
    let (reply, fd) = answer(&buf[..n], sockets, auth);
    buf.fill(0);
    let raw: Vec<RawFd> = fd.iter().map(AsRawFd::as_raw_fd).collect();
    let rights = [nix::sys::socket::ControlMessage::ScmRights(&raw)];
    let cmsgs = if raw.is_empty() { &[][..] } else { &rights[..] };
    let iov = [std::io::IoSlice::new(&reply)];
    // The descriptor, sent, is the worker's: the monitor's copy closes when `fd` drops.
    match nix::sys::socket::sendmsg::<()>(
        channel.as_raw_fd(),
        &iov,
        cmsgs,
        MsgFlags::MSG_NOSIGNAL,
        None,
    ) {
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
    use crate::secrets::{encode_credentials, CHECK_PASSWORD, SIGN};

    fn req(op: u32, index: u32) -> Vec<u8> {
        [op.to_ne_bytes(), index.to_ne_bytes()].concat()
    }

    fn errno(answer: &[u8]) -> i32 {
        i32::from_ne_bytes(answer[..4].try_into().unwrap())
    }

    #[test]
    fn the_monitor_answers_nothing_but_its_requests_on_its_sockets_keys_and_users() {
        // A UDP socket stands for a packet socket: its PACKET_STATISTICS fails with the
        // kernel's errno, which the answer carries.
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let sockets = [PacketSocket::new(udp.as_fd(), true)];
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let users = std::collections::BTreeMap::from([("alice".to_string(), hash)]);
        let auth = crate::metrics::BasicAuth::new(users).unwrap();
        let oversized = [req(SIGN, 0), vec![0; MAX_PAYLOAD + 1]].concat();
        for hostile in [
            vec![],
            vec![1],
            req(STATISTICS, 0)[..7].to_vec(),
            [req(STATISTICS, 0), vec![0]].concat(),
            req(STATISTICS, 1),
            req(STATISTICS, u32::MAX),
            req(0, 0),
            req(7, 0),
            req(u32::MAX, 0),
            // Listeners: none registered at this index; no payload goes with them.
            req(ACCEPT, u32::MAX),
            req(REBIND, u32::MAX),
            [req(ACCEPT, 0), vec![0]].concat(),
            // No key registered in this process: any slot is unknown.
            [req(SIGN, 0), vec![0x08, 0x04], b"message".to_vec()].concat(),
            req(SIGN, 0),
            oversized,
            // Credentials that do not decode: a user longer than the payload.
            [
                req(CHECK_PASSWORD, 0),
                100u32.to_be_bytes().to_vec(),
                b"ab".to_vec(),
            ]
            .concat(),
        ] {
            let (a, fd) = answer(&hostile, &sockets, Some(&auth));
            assert!(fd.is_none());
            assert_eq!(
                errno(&a),
                libc::EINVAL,
                "{:?}",
                &hostile[..hostile.len().min(16)]
            );
        }
        let (stats, _) = answer(&req(STATISTICS, 0), &sockets, None);
        assert_ne!(errno(&stats), 0);
        assert_ne!(errno(&stats), libc::EINVAL);
        let (pending, _) = answer(&req(TAKE_ERROR, 0), &sockets, None);
        assert_eq!(errno(&pending), 0, "SO_ERROR of a healthy socket");
        assert_eq!(&pending[4..], &[0u8; 12]);
        // Passwords: checked here, answered as one byte; without users, refused.
        let check = |user: &[u8], password: &[u8], auth| {
            let r = [req(CHECK_PASSWORD, 0), encode_credentials(user, password)].concat();
            answer(&r, &sockets, auth).0
        };
        assert_eq!(check(b"alice", b"s3cret", Some(&auth)), [0, 0, 0, 0, 1]);
        assert_eq!(check(b"alice", b"wrong", Some(&auth)), [0, 0, 0, 0, 0]);
        assert_eq!(check(b"mallory", b"s3cret", Some(&auth)), [0, 0, 0, 0, 0]);
        assert_eq!(errno(&check(b"alice", b"s3cret", None)), libc::EINVAL);
    }
}
