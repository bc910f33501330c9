//! The receiving link: AF_PACKET sockets and their drops, interface indexes, offloads (GRO,
//! TSO) through ethtool's ioctl, busy-polling counters.

use std::io;
use std::mem::size_of;
use std::mem::zeroed;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::errno::check;

/// An AF_PACKET raw socket for every protocol (the `pnet-datalink` mode hands it to pnet).
pub fn packet_socket() -> io::Result<OwnedFd> {
    let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain syscall.
    let fd = check(unsafe {
        libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto)
    })?;
    // SAFETY: fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An AF_PACKET socket's drops since the last call (PACKET_STATISTICS resets on read).
pub fn packet_drops(fd: RawFd) -> io::Result<u64> {
    // SAFETY: all-zero is a valid tpacket_stats; getsockopt fills it.
    let mut st: libc::tpacket_stats = unsafe { zeroed() };
    let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` and `len` are valid for the call; `fd` is a packet socket the caller keeps
    // open.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    })?;
    Ok(u64::from(st.tp_drops))
}

/// The index of interface `name` in the calling thread's network namespace.
pub fn ifindex(name: &str) -> io::Result<u32> {
    let c =
        std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string living across the call.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(io::Error::last_os_error()),
        i => Ok(i),
    }
}

/// `struct ethtool_value` (linux/ethtool.h).
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// Turns generic receive offload on or off for `iface` in the calling thread's network
/// namespace (what `ethtool -K IFACE gro on|off` does). A veth takes XDP frames redirected
/// to it only with GRO on or an XDP program of its own.
pub fn set_gro(iface: &str, on: bool) -> io::Result<()> {
    const ETHTOOL_SGRO: u32 = 0x2c; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_SGRO, on as u32).map(|_| ())
}

/// Whether generic receive offload is on for `iface` in the calling thread's network
/// namespace (`ethtool -k IFACE`).
pub fn gro(iface: &str) -> io::Result<bool> {
    const ETHTOOL_GGRO: u32 = 0x2b; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_GGRO, 0).map(|v| v != 0)
}

/// One `SIOCETHTOOL` with a `struct ethtool_value` for `iface`: the value the kernel left in it.
fn ethtool_value(iface: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let name = iface.as_bytes();
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: plain syscall.
    let fd =
        check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut value = EthtoolValue { cmd, data };
    // SAFETY: ifreq is plain data; all zero is valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
    // SAFETY: SIOCETHTOOL reads the interface name and the ethtool_value `req` points at, both
    // alive across the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL as _, &mut req) })?;
    Ok(value.data)
}

/// The calling thread's network namespace's `BusyPollRxPackets` (/proc/net/netstat,
/// TcpExt): packets received by busy polling rather than by the device's NAPI.
pub fn busy_poll_rx_packets() -> io::Result<u64> {
    // /proc/net is the process's namespace; thread-self is this thread's.
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat")?;
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        if !names.starts_with("TcpExt:") {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if n == "BusyPollRxPackets" {
                return v
                    .parse()
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData));
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "no TcpExt BusyPollRxPackets in /proc/net/netstat",
    ))
}

/// Whether TCP segmentation offload is on for `iface` in the calling thread's network
/// namespace (`ethtool -k IFACE`: tcp-segmentation-offload).
pub fn tso(iface: &str) -> io::Result<bool> {
    const ETHTOOL_GTSO: u32 = 0x1e; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_GTSO, 0).map(|v| v != 0)
}

/// Turns TCP segmentation offload on or off for `iface` (`ethtool -K IFACE tso on|off`). A
/// veth hands a frame to its peer's NAPI (where GRO and busy polling happen) only when the
/// sending veth has TSO off, or for socket-owned frames when the peer forwards UDP GRO.
pub fn set_tso(iface: &str, on: bool) -> io::Result<()> {
    const ETHTOOL_STSO: u32 = 0x1f; // linux/ethtool.h
    ethtool_value(iface, ETHTOOL_STSO, on as u32).map(|_| ())
}
