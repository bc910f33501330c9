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
    /// The per-flow UDP sockets with `UDP_GRO` on, `recvmmsg` batches of 64 coalesced
    /// buffers, each split into its datagrams by the segment size (QUIC stacks' receive path).
    SocketsGro,
    /// `sockets-recvmmsg` with busy polling (`SO_BUSY_POLL`, `SO_PREFER_BUSY_POLL`,
    /// `SO_BUSY_POLL_BUDGET`): the receive call polls the veth's NAPI itself.
    SocketsRecvmmsgBusy,
    /// `af-xdp` with busy polling on its sockets: an empty ring is polled by `recvfrom`.
    AfXdpBusy,
}

/// `SO_BUSY_POLL` of the busy-polling modes, µs.
pub const BUSY_POLL_USEC: i32 = 50;
/// `SO_BUSY_POLL_BUDGET` of the busy-polling modes, packets a poll.
pub const BUSY_POLL_BUDGET: i32 = 64;

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
        v.extend([Mode::SocketsGro, Mode::SocketsRecvmmsgBusy, Mode::AfXdpBusy]);
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
            Mode::SocketsGro => "sockets-gro".into(),
            Mode::SocketsRecvmmsgBusy => "sockets-recvmmsg-busy".into(),
            Mode::AfXdpBusy => "af-xdp-busy".into(),
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
            Mode::SocketsGro => "epoll + recvmmsg x64 of UDP_GRO buffers, split (syscall)",
            Mode::SocketsRecvmmsgBusy => "epoll + recvmmsg x64, SO_BUSY_POLL (syscall)",
            Mode::AfXdpBusy => "XDP redirect to AF_XDP, copy mode, SO_BUSY_POLL (ring)",
        }
    }
    /// Where the packet's bytes are copied on the way to the handler.
    pub fn copied(&self) -> &'static str {
        match self {
            Mode::BaselineTx => "-",
            Mode::SocketsRecvmsg
            | Mode::SocketsRecvmmsg
            | Mode::SocketsGro
            | Mode::SocketsRecvmmsgBusy
            | Mode::PnetDatalink => "kernel (copy_to_user)",
            Mode::SocketsIoUring => "kernel (into provided buffers)",
            Mode::AfXdp | Mode::AfXdpBusy => "kernel (into the UMEM)",
            Mode::Ring(Delivery::ZeroCopy) => "kernel (into the ring)",
            Mode::Ring(_) => "kernel (into the ring) + user space",
        }
    }
    /// Receives through one UDP socket per flow (frames go to the receiver's IP stack).
    pub fn uses_sockets(&self) -> bool {
        matches!(
            self,
            Mode::SocketsRecvmsg
                | Mode::SocketsRecvmmsg
                | Mode::SocketsIoUring
                | Mode::SocketsGro
                | Mode::SocketsRecvmmsgBusy
        )
    }
    /// Polls the device from the receive call (`SO_BUSY_POLL`).
    pub fn busy_polls(&self) -> bool {
        matches!(self, Mode::SocketsRecvmmsgBusy | Mode::AfXdpBusy)
    }
    /// Needs NAPI on the receiving veth, which a veth has only with GRO on (or an XDP
    /// program): GRO to coalesce, busy polling to have a NAPI to poll.
    pub fn needs_napi(&self) -> bool {
        matches!(self, Mode::SocketsGro) || self.busy_polls()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_and_so_the_saturation_study_has_the_gro_and_busy_polling_modes() {
        let names: Vec<String> = Mode::all().iter().map(Mode::name).collect();
        for m in ["sockets-gro", "sockets-recvmmsg-busy", "af-xdp-busy"] {
            assert!(names.iter().any(|n| n == m), "{m} not in {names:?}");
            let mode = Mode::from_name(m).unwrap();
            assert_eq!(mode.name(), m);
            assert!(mode.needs_napi());
        }
        assert!(Mode::SocketsGro.uses_sockets() && !Mode::SocketsGro.busy_polls());
        assert!(Mode::SocketsRecvmmsgBusy.uses_sockets() && Mode::SocketsRecvmmsgBusy.busy_polls());
        assert!(!Mode::AfXdpBusy.uses_sockets() && Mode::AfXdpBusy.busy_polls());
        assert!(!Mode::SocketsRecvmmsg.needs_napi() && !Mode::AfXdp.needs_napi());
        // Names are unique.
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
    }
}
