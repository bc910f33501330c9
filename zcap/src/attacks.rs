//! `--sandbox-attacks` (hidden, for the tests): once confined, the capture makes the
//! system calls a compromised parser would make, and says on standard error how each
//! ended ("refused (...)" or "SUCCEEDED"). The tests read those lines; the calls are the
//! ones a security review of zcap made from inside a running capture: the terminal
//! (TIOCSTI), the packet socket (writing a frame, a socket option), new sockets, a
//! datagram to an address, a listening port of its own, descriptor passing, executable
//! memory, prctl, signals and ptrace to the monitor, a file outside `-w`, and execve.
//!
//! The only other module of zcap with unsafe code beside `system`: each call is a raw
//! system call on arguments built here, and nothing it returns is used but its result.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A frame that no host would take for its own: broadcast, the experimental EtherType.
const FRAME: [u8; 60] = {
    let mut f = [0u8; 60];
    let mut i = 0;
    while i < 6 {
        f[i] = 0xff;
        i += 1;
    }
    f[12] = 0x88;
    f[13] = 0xb5;
    f
};

/// An attack: its name, and the calls.
type Attack = (&'static str, fn() -> io::Result<()>);

/// Runs every attack and reports each.
pub(crate) fn run() {
    let attacks: [Attack; 15] = [
        ("tiocsti", tiocsti),
        ("packet-socket-write", packet_socket_write),
        ("packet-socket-option", packet_socket_option),
        ("packet-socket-new", || {
            socket(libc::AF_PACKET, libc::SOCK_RAW).map(drop)
        }),
        ("netlink-socket", || {
            socket(libc::AF_NETLINK, libc::SOCK_RAW).map(drop)
        }),
        ("udp-socket", udp_send),
        ("tcp-listen", || {
            // A port of the worker's own: socket, bind, listen.
            std::net::TcpListener::bind("127.0.0.1:0").map(drop)
        }),
        ("unix-datagram-to", unix_datagram_to),
        ("descriptor-passing", descriptor_passing),
        ("exec-memory", exec_memory),
        ("prctl-dumpable", || {
            // SAFETY: integer arguments only.
            check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })
        }),
        ("signal-monitor", signal_parent),
        ("ptrace-monitor", || {
            // SAFETY: integer arguments and null pointers, as PTRACE_ATTACH takes them.
            check(unsafe {
                libc::ptrace(
                    libc::PTRACE_ATTACH,
                    libc::getppid(),
                    std::ptr::null_mut::<libc::c_void>(),
                    std::ptr::null_mut::<libc::c_void>(),
                ) as libc::c_int
            })
        }),
        ("file-in-etc", file_in_etc),
        ("execve", execve),
    ];
    for (name, attack) in attacks {
        match attack() {
            Ok(()) => eprintln!("zcap: sandbox attack {name}: SUCCEEDED"),
            Err(e) => eprintln!("zcap: sandbox attack {name}: refused ({e})"),
        }
    }
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn socket(family: libc::c_int, kind: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let fd = unsafe { libc::socket(family, kind | libc::SOCK_CLOEXEC, 0) };
    check(fd)?;
    // SAFETY: a descriptor the call just made, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Pushes "#" into the input of the terminal on standard input, output or error.
fn tiocsti() -> io::Result<()> {
    let tty = (0..=2)
        // SAFETY: isatty reads nothing but its integer argument.
        .find(|fd| unsafe { libc::isatty(*fd) } == 1)
        .ok_or_else(|| io::Error::other("no terminal on 0, 1 or 2"))?;
    let c: u8 = b'#';
    // SAFETY: TIOCSTI reads one byte at the pointer, which lives across the call.
    check(unsafe { libc::ioctl(tty, libc::TIOCSTI, &c) })
}

/// The process' packet sockets: every descriptor whose SO_DOMAIN is AF_PACKET.
fn packet_sockets() -> Vec<RawFd> {
    (0..4096)
        .filter(|fd| {
            let mut domain: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `domain` and `len` are valid for the call and sized as it expects.
            let r = unsafe {
                libc::getsockopt(
                    *fd,
                    libc::SOL_SOCKET,
                    libc::SO_DOMAIN,
                    (&mut domain as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            r == 0 && domain == libc::AF_PACKET
        })
        .collect()
}

fn packet_socket_write() -> io::Result<()> {
    let fds = packet_sockets();
    let fd = fds
        .first()
        .ok_or_else(|| io::Error::other("no packet socket among the descriptors"))?;
    // SAFETY: FRAME is valid for its length.
    let n = unsafe { libc::write(*fd, FRAME.as_ptr().cast(), FRAME.len()) };
    check(n as libc::c_int)
}

/// PACKET_ADD_MEMBERSHIP's level, then SO_DETACH_FILTER, on the process' packet socket
/// (on standard input when it has none: the filter refuses the level whatever the socket).
fn packet_socket_option() -> io::Result<()> {
    let fd = packet_sockets().first().copied().unwrap_or(0);
    let zero: libc::c_int = 0;
    let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    for (level, name) in [
        (libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP),
        (libc::SOL_SOCKET, libc::SO_DETACH_FILTER),
    ] {
        // SAFETY: `zero` lives across the call and `size` is its size.
        check(unsafe {
            libc::setsockopt(fd, level, name, (&zero as *const libc::c_int).cast(), size)
        })?;
    }
    Ok(())
}

/// A UDP datagram to the benchmarking range (198.18.0.1:9, discard).
fn udp_send() -> io::Result<()> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM)?;
    let to = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 9u16.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([198, 18, 0, 1]).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `to` is a valid sockaddr_in for its size; FRAME is valid for its length.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            FRAME.as_ptr().cast(),
            FRAME.len(),
            0,
            (&to as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    check(n as libc::c_int)
}

/// A datagram to a UNIX socket named by the worker (journald's).
fn unix_datagram_to() -> io::Result<()> {
    let fd = socket(libc::AF_UNIX, libc::SOCK_DGRAM)?;
    let addr = nix::sys::socket::UnixAddr::new("/run/systemd/journal/socket")?;
    nix::sys::socket::sendto(
        fd.as_raw_fd(),
        b"zcap",
        &addr,
        nix::sys::socket::MsgFlags::empty(),
    )
    .map(drop)
    .map_err(io::Error::from)
}

/// Standard input handed over a UNIX socket (SCM_RIGHTS).
fn descriptor_passing() -> io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, UnixAddr};
    let fd = socket(libc::AF_UNIX, libc::SOCK_DGRAM)?;
    let fds = [0];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    let iov = [io::IoSlice::new(b"fd")];
    sendmsg::<UnixAddr>(fd.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None)
        .map(drop)
        .map_err(io::Error::from)
}

/// Memory both writable and executable, then executable memory by mprotect.
fn exec_memory() -> io::Result<()> {
    let rwx = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: a fresh anonymous mapping; nothing reads or runs it.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), 4096, rwx, flags, -1, 0) };
    if p != libc::MAP_FAILED {
        // SAFETY: the mapping made above, of that size.
        unsafe { libc::munmap(p, 4096) };
        return Ok(());
    }
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: as above.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), 4096, rw, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the mapping made above, of that size.
    let r = check(unsafe { libc::mprotect(p, 4096, libc::PROT_READ | libc::PROT_EXEC) });
    // SAFETY: as above.
    unsafe { libc::munmap(p, 4096) };
    r
}

/// Signal 0 (a probe, harmless if it gets through) to the parent: kill, then tgkill.
fn signal_parent() -> io::Result<()> {
    // SAFETY: integer arguments only.
    let parent = unsafe { libc::getppid() };
    // SAFETY: integer arguments only.
    check(unsafe { libc::kill(parent, 0) }).or_else(|_| {
        // SAFETY: integer arguments only.
        check(unsafe { libc::syscall(libc::SYS_tgkill, parent, parent, 0) } as libc::c_int)
    })
}

/// A file created in /etc (removed at once if it was).
fn file_in_etc() -> io::Result<()> {
    let path = "/etc/zcap-sandbox-attack";
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let _ = std::fs::remove_file(path);
    Ok(())
}

fn execve() -> io::Result<()> {
    let prog = CString::new("/bin/true").expect("no NUL");
    let argv = [prog.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null()];
    // SAFETY: NUL-terminated program name, NULL-terminated argv and envp that live across
    // the call; on success the process is replaced (the test then sees no report after).
    check(unsafe { libc::execve(prog.as_ptr(), argv.as_ptr(), envp.as_ptr()) })
}
