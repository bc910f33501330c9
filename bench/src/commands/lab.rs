//! `rxbench lab up|down`: a persistent lab for trying things by hand.

use anyhow::{bail, Context, Result};

use super::Outcome;
use crate::cli::LabArgs;

/// Creates or deletes the lab named `bench`, and says so.
pub fn run(args: LabArgs) -> Result<Outcome> {
    const TAG: &str = "bench";
    match args.action.as_str() {
        "up" => {
            let lab = zcrx_ring::lab::Lab::named(TAG)
                .context("creating the lab (needs root and iproute2)")?;
            println!(
                "lab up: {} in netns {} ({}) <-> {} in netns {} ({})",
                lab.a.iface, lab.a.netns, lab.a.ip, lab.b.iface, lab.b.netns, lab.b.ip
            );
            lab.keep();
        }
        "down" => {
            let lab = zcrx_ring::lab::Lab::open(TAG).context("no lab is up")?;
            drop(lab);
            println!("lab down");
        }
        other => bail!("lab {other:?}: say `up` or `down`"),
    }
    Ok(Outcome::Printed)
}
