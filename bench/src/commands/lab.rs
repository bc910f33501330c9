//! `rxbench lab up|down`: a persistent lab for trying things by hand.

use anyhow::{Context, Result};

use super::Outcome;
use crate::cli::{LabAction, LabArgs};

/// Creates or deletes the lab named `bench`, and says so.
pub fn run(args: LabArgs) -> Result<Outcome> {
    const TAG: &str = "bench";
    match args.action {
        LabAction::Up => {
            let lab = zcrx_ring::lab::Lab::named(TAG)
                .context("creating the lab (needs root and iproute2)")?;
            println!(
                "lab up: {} in netns {} ({}) <-> {} in netns {} ({})",
                lab.a.iface, lab.a.netns, lab.a.ip, lab.b.iface, lab.b.netns, lab.b.ip
            );
            lab.keep();
        }
        LabAction::Down => {
            let lab = zcrx_ring::lab::Lab::open(TAG).context("no lab is up")?;
            drop(lab);
            println!("lab down");
        }
    }
    Ok(Outcome::Printed)
}
