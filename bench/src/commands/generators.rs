//! `rxbench generators`: what the TX ring and the xdp-live generator offer.

use anyhow::{bail, Result};

use super::Outcome;
use crate::cli::GeneratorsArgs;
use crate::report::Report;

/// The checks, then [`crate::generator::compare`].
pub fn run(args: GeneratorsArgs, report: &mut Report) -> Result<Outcome> {
    let GeneratorsArgs {
        sizes,
        flows,
        packets,
        seconds,
        rate,
        runs,
    } = args;
    if sizes.is_empty() || sizes.iter().any(|s| !(60..=1514).contains(s)) {
        bail!("generators: --sizes must be within 60..=1514");
    }
    if !(1..=4096).contains(&flows) || packets == 0 || !(1..=100).contains(&runs) {
        bail!("generators: --flows 1..=4096, --packets > 0, --runs 1..=100");
    }
    if !(0.01..=600.0).contains(&seconds) {
        bail!("generators: --seconds {seconds}: must be 0.01..=600");
    }
    if rate.is_some_and(|r| !(0.001..=100.0).contains(&r)) {
        bail!("generators: --rate is in million frames per second: 0.001..=100");
    }
    if !zcrx_ring::has_cap_net_raw() {
        bail!("generators needs root (network namespaces, AF_PACKET, bpf)");
    }
    report.generators = Some(crate::generator::compare(
        &sizes,
        flows,
        packets,
        std::time::Duration::from_secs_f64(seconds),
        rate.map(|r| r * 1e6),
        runs,
    )?);
    Ok(Outcome::Measured)
}
