//! Where the flow-counting program runs: a module of its own, below both the program's
//! generator and the API that names it.

/// Where the program runs: the interface's tcx hooks (the default) or its XDP hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Hook {
    /// tcx (Linux 6.6+), on the skb: ingress (received packets) and egress (packets the
    /// host sends), after the skb is built. The program runs beside other tcx programs and
    /// passes every packet on (`TCX_NEXT`).
    #[default]
    Tcx,
    /// XDP (Linux 5.18+), on received frames only, before the skb exists: in the driver
    /// where it has XDP (a veth does), else generic XDP on the skb. It passes every frame on
    /// (`XDP_PASS`). An interface takes one XDP program: one already there is an error
    /// ([`KernelFlowsError::XdpInUse`](super::KernelFlowsError::XdpInUse)).
    ///
    /// It counts the same flows, packets and bytes as [`Hook::Tcx`] at ingress for the same
    /// frames, except:
    /// - no egress: [`KernelFlowsConfig::egress`](super::KernelFlowsConfig::egress) with it is an error;
    /// - a VLAN tag the NIC stripped in hardware (VLAN offload) is not seen, so such a
    ///   frame's key has no VLAN (reading that tag needs a kfunc, which needs BTF); tags left
    ///   in the frame count as at tcx;
    /// - of a multi-buffer frame (jumbo frames, some drivers) only the first buffer is
    ///   parsed: headers beyond it make the frame not a flow (tcx pulls them in);
    /// - in the driver it runs before GRO: where GRO merges TCP segments, it counts the
    ///   frames as they arrived, where tcx (and a packet socket) count fewer, larger packets.
    Xdp,
}
