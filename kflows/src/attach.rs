//! The program attached at the hook the configuration names: tcx ingress and egress, or XDP.

use std::os::fd::OwnedFd;

use crate::bpf;
use crate::config::KernelFlowsConfig;
use crate::error::KernelFlowsError;
use crate::hook::Hook;

/// `prog` attached to interface `ifindex` (named `iface`) at `config`'s hooks: the links
/// (the program stays attached while they are open) and where it runs, for people.
pub(crate) fn link(
    prog: &OwnedFd,
    ifindex: u32,
    iface: &str,
    config: &KernelFlowsConfig,
) -> Result<(Vec<OwnedFd>, &'static str), KernelFlowsError> {
    let mut links = Vec::new();
    let attached_at = match config.hook {
        Hook::Tcx => {
            for (on, hook, ty) in [
                (config.ingress, "ingress", bpf::BPF_TCX_INGRESS),
                (config.egress, "egress", bpf::BPF_TCX_EGRESS),
            ] {
                if on {
                    let link = bpf::tcx_attach(prog, ifindex, ty).map_err(|source| {
                        KernelFlowsError::Attach {
                            iface: iface.to_string(),
                            hook,
                            source,
                        }
                    })?;
                    links.push(link);
                }
            }
            match (config.ingress, config.egress) {
                (true, true) => "tcx ingress and egress",
                (true, false) => "tcx ingress",
                _ => "tcx egress",
            }
        }
        Hook::Xdp => {
            let (link, mode) = bpf::xdp_attach(prog, ifindex).map_err(|source| {
                let iface = iface.to_string();
                match source.raw_os_error() {
                    Some(libc::EBUSY | libc::EEXIST) => {
                        KernelFlowsError::XdpInUse { iface, source }
                    }
                    _ => KernelFlowsError::XdpAttach { iface, source },
                }
            })?;
            links.push(link);
            match mode {
                bpf::XdpMode::Native => "XDP (native)",
                bpf::XdpMode::Generic => "XDP (generic)",
            }
        }
    };
    Ok((links, attached_at))
}
