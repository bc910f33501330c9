//! `rxbench saturation`: the generators compared, then the capacity searches of every mode,
//! of the sweep's modes over flow counts, and of the sniffers (see its help).

use anyhow::{Context, Result};

use super::capacity::{config, kernel_flow_sniffers, sniffers};
use super::{Failed, Outcome};
use crate::cli::SaturationArgs;
use crate::measure::capacity::CapacityConfig;
use crate::measure::run::Mode;
use crate::report::Report;

/// The study; a phase that fails ends it, and the report is written as far as it got (even
/// when a setting was refused before the first trial).
pub fn run(args: SaturationArgs, report: &mut Report) -> Result<Outcome, Failed> {
    study(args, report).map_err(Failed::after_measuring)?;
    Ok(Outcome::Measured)
}

/// Every setting checked before the first trial, then the phases in turn.
fn study(args: SaturationArgs, report: &mut Report) -> Result<()> {
    let sizes = vec![64, 512, 1400];
    let [all, sweep, sniff, flow_counters] = phase_configs(&args, &sizes)?;
    eprintln!("saturation: the generators");
    let generators = crate::lab::generator::compare(
        &sizes,
        256,
        2_000_000,
        std::time::Duration::from_secs(1),
        None,
        3,
        args.search.isolate_rx_cpu,
    );
    report.generators = Some(generators?);
    let phases = [
        ("every mode at every size, 256 flows", &all),
        (
            "the sweep's modes over flow counts, 64 B, no loss (256 flows: above)",
            &sweep,
        ),
        ("the sniffers, 64 B, 256 flows", &sniff),
        (
            "zcap's flows on the ring and in the kernel, 64 B, 256 and 4096 flows",
            &flow_counters,
        ),
    ];
    report.capacity = Some(Vec::new());
    for (what, config) in phases {
        eprintln!("saturation: {what}");
        let points = report.capacity.get_or_insert_with(Vec::new);
        crate::measure::capacity::run(config, points)
            .with_context(|| format!("saturation: {what}"))?;
    }
    Ok(())
}

/// The searches of the study's four phases: every mode at every size (and IMIX), the
/// sweep's modes over flow counts, the sniffers, and zcap's flows on the ring and in the
/// kernel.
fn phase_configs(args: &SaturationArgs, sizes: &[usize]) -> Result<[CapacityConfig; 4]> {
    // Idle CPUs poll rather than halt unless told otherwise (`--cpu-dma-latency`'s default):
    // a halted vCPU takes long enough to wake that the veth's queue overflows at rates the
    // receiver keeps up with.
    let search = args.search;
    // IMIX beside the fixed sizes (the generators are compared at the fixed sizes only).
    let all = config(
        search,
        Mode::all(),
        Vec::new(),
        sizes
            .iter()
            .copied()
            .chain([crate::measure::capacity::IMIX])
            .collect(),
        vec![256],
        &[0.0, 0.1],
    )?;
    let flows: Vec<usize> = crate::measure::sweep::DEFAULT_FLOWS
        .iter()
        .copied()
        .filter(|&f| f != 256)
        .collect();
    let sweep = config(
        search,
        crate::measure::sweep::default_modes(),
        Vec::new(),
        vec![64],
        flows,
        &[0.0],
    )?;
    let sniff = config(
        search,
        Vec::new(),
        sniffers(&args.sniffer)?,
        vec![64],
        vec![256],
        &[0.0, 0.1],
    )?;
    // Flows counted by zcap: on the ring against the kernel's receive path (eBPF at tcx and
    // at XDP).
    let flow_counters = config(
        search,
        Vec::new(),
        kernel_flow_sniffers(&args.sniffer)?,
        vec![64],
        vec![256, 4096],
        &[0.0, 0.1],
    )?;
    Ok([all, sweep, sniff, flow_counters])
}
