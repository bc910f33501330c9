//! What can go wrong attaching the program or reading its maps.

use std::io;

/// Why [`KernelFlows`](crate::KernelFlows) could not attach or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelFlowsError {
    /// The configuration cannot work.
    #[error("kernel flows: {0}")]
    Config(&'static str),
    /// The interface does not exist.
    #[error("kernel flows: interface {iface:?}: {source}")]
    Interface {
        /// The interface.
        iface: String,
        /// The kernel's error.
        source: io::Error,
    },
    /// A BPF map could not be created.
    #[error("kernel flows: creating the {what} map (needs CAP_BPF or root): {source}")]
    Map {
        /// Which map.
        what: &'static str,
        /// The kernel's error.
        source: io::Error,
    },
    /// The verifier refused the program (its log is kept).
    #[error("kernel flows: the verifier refused the program: {source}; its log:\n{log}")]
    Verifier {
        /// The kernel's error.
        source: io::Error,
        /// The verifier's log.
        log: String,
    },
    /// The program could not be attached.
    #[error("kernel flows: attaching to {iface} {hook} (tcx, Linux 6.6+, needs CAP_NET_ADMIN): {source}")]
    Attach {
        /// The interface.
        iface: String,
        /// "ingress" or "egress".
        hook: &'static str,
        /// The kernel's error.
        source: io::Error,
    },
    /// Reading or deleting map entries failed.
    #[error("kernel flows: reading the flow map: {0}")]
    Read(io::Error),
    /// The XDP program could not be attached ([`Hook::Xdp`](crate::Hook::Xdp)).
    #[error(
        "kernel flows: attaching to {iface} at XDP (Linux 5.18+, needs CAP_NET_ADMIN): {source}"
    )]
    XdpAttach {
        /// The interface.
        iface: String,
        /// The kernel's error.
        source: io::Error,
    },
    /// The interface, or a device above it, has an XDP program already ([`Hook::Xdp`](crate::Hook::Xdp)): an
    /// interface takes one.
    #[error("kernel flows: {iface}, or a device above it (a bond's), has an XDP program already (an interface takes one; `ip link show` names it): detach it, or count at tcx")]
    XdpInUse {
        /// The interface.
        iface: String,
        /// The kernel's error (EBUSY, or EEXIST for one in the other mode).
        source: io::Error,
    },
}
