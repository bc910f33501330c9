//! The receive modes: what each receives with, where it copies, and its name.

use zcrx_capture::Delivery;

/// A receive mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The generator alone: frames to a foreign MAC, nobody receives. What every other mode
    /// costs beyond this is the cost of receiving.
    BaselineTx,
    /// One UDP socket per flow, epoll, one `recvmsg` per datagram.
    SocketsRecvmsg,
    /// Same sockets, `recvmmsg` batches of 64.
    SocketsRecvmmsg,
    /// Same sockets, a multishot `recvmsg` each on an io_uring with provided buffers.
    SocketsIoUring,
    /// AF_XDP sockets (copy mode) fed by an XDP redirect program on the receiving veth.
    AfXdp,
    /// pnet's datalink channel (an AF_PACKET socket, `recvfrom` per frame).
    PnetDatalink,
    /// TPACKET_V3 ring, stage, consumers with this delivery.
    Ring(Delivery),
}

impl Mode {
    /// Every mode, in run order.
    pub fn all() -> Vec<Mode> {
        let mut v = vec![
            Mode::BaselineTx,
            Mode::SocketsRecvmsg,
            Mode::SocketsRecvmmsg,
            Mode::SocketsIoUring,
            Mode::AfXdp,
            Mode::PnetDatalink,
        ];
        v.extend(Delivery::ALL.into_iter().map(Mode::Ring));
        v
    }
    /// The name `--modes` takes and the tables show: `baseline-tx`, `sockets-recvmsg`,
    /// `ring-zerocopy`, `ring-copy-avx2`, ...
    pub fn name(&self) -> String {
        match self {
            Mode::BaselineTx => "baseline-tx".into(),
            Mode::SocketsRecvmsg => "sockets-recvmsg".into(),
            Mode::SocketsRecvmmsg => "sockets-recvmmsg".into(),
            Mode::SocketsIoUring => "sockets-io-uring".into(),
            Mode::AfXdp => "af-xdp".into(),
            Mode::PnetDatalink => "pnet-datalink".into(),
            Mode::Ring(d) => format!("ring-{}", d.name()),
        }
    }
    /// How it receives: the mechanism, and whether a system call per packet or batch
    /// (syscall) or a shared ring carries the packets to user space.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Mode::BaselineTx => "none (generator only)",
            Mode::SocketsRecvmsg => "epoll + recvmsg per datagram (syscall)",
            Mode::SocketsRecvmmsg => "epoll + recvmmsg x64 (syscall)",
            Mode::SocketsIoUring => "io_uring multishot recvmsg, provided buffers (ring)",
            Mode::AfXdp => "XDP redirect to AF_XDP, copy mode (ring)",
            Mode::PnetDatalink => "pnet datalink: AF_PACKET, poll + recvfrom per frame (syscall)",
            Mode::Ring(_) => "TPACKET_V3 mmap ring + stage (ring)",
        }
    }
    /// Where the packet's bytes are copied on the way to the handler.
    pub fn copied(&self) -> &'static str {
        match self {
            Mode::BaselineTx => "-",
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::PnetDatalink => {
                "kernel (copy_to_user)"
            }
            Mode::SocketsIoUring => "kernel (into provided buffers)",
            Mode::AfXdp => "kernel (into the UMEM)",
            Mode::Ring(Delivery::ZeroCopy) => "kernel (into the ring)",
            Mode::Ring(_) => "kernel (into the ring) + user space",
        }
    }
    /// Receives through one UDP socket per flow (frames go to the receiver's IP stack).
    pub fn uses_sockets(&self) -> bool {
        matches!(
            self,
            Mode::SocketsRecvmsg | Mode::SocketsRecvmmsg | Mode::SocketsIoUring
        )
    }
    /// Parses [`Mode::name`].
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::all().into_iter().find(|m| m.name() == s)
    }
}

/// Serialises modes by [`Mode::name`].
pub(super) fn mode_names<S: serde::Serializer>(m: &[Mode], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.iter().map(|m| m.name()))
}
