//! `rxbench generators`: what the TX ring and the xdp-live generator offer.

use anyhow::{bail, Result};

use super::Outcome;
use crate::cli::{FrameSizes, GeneratorsArgs};
use crate::report::Report;

/// Root checked, then [`crate::lab::generator::compare`].
pub fn run(args: GeneratorsArgs, report: &mut Report) -> Result<Outcome> {
    let GeneratorsArgs {
        frames: FrameSizes { sizes },
        flows,
        packets,
        seconds,
        rate,
        runs,
        isolate_rx_cpu,
    } = args;
    if !zcrx_ring::has_cap_net_raw() {
        bail!("generators needs root (network namespaces, AF_PACKET, bpf)");
    }
    report.generators = Some(crate::lab::generator::compare(
        &sizes,
        flows,
        packets,
        std::time::Duration::from_secs_f64(seconds),
        rate.map(|r| r * 1e6),
        runs,
        isolate_rx_cpu,
    )?);
    Ok(Outcome::Measured)
}
