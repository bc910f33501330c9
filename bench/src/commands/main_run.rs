//! The main run (no sub-command): every mode at every size, then a short capacity search
//! with `--quick`, or the copy sweep for the plots without it.

use std::io::IsTerminal;

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use zcrx_capture::Delivery;

use super::Outcome;
use crate::cli::{RunArgs, SearchArgs};
use crate::measure::run::{Bench, Mode, RunConfig};
use crate::report::Report;

/// The checks, the modes, then the search or the copy sweep.
pub fn run(args: &RunArgs, report: &mut Report) -> Result<Outcome> {
    // The main run's --flows goes to 20 000; --quick's capacity search stops at 4096 flows.
    if args.quick && !(1..=4096).contains(&args.flows) {
        bail!("capacity: --flows must be within 1..=4096");
    }
    let config = config(args)?;
    modes(&config, report)?;
    report.config = Some(config);
    if args.quick {
        quick_capacity(args.flows, report)?;
    } else if !args.no_copy {
        eprintln!("copy sweep (for the copy plot; --no-copy skips it)");
        report.copy = Some(crate::measure::micro::copy(
            &zcrx_capture::copy::BENCH_SIZES,
            16 << 20,
            1,
        ));
    }
    Ok(Outcome::Measured)
}

/// The run's settings (`--quick`: 64-byte frames, fewer frames).
fn config(args: &RunArgs) -> Result<RunConfig> {
    let modes = if args.modes.is_empty() {
        Mode::all()
    } else {
        args.modes.clone()
    };
    let (sizes, packets) = if args.quick {
        (vec![64], 40_000)
    } else {
        (args.sizes.clone(), args.packets)
    };
    Ok(RunConfig {
        flows: args.flows,
        sizes,
        modes,
        consumers: args.consumers,
        packets,
        block_size: args.block_size,
        block_count: args.block_count,
        block_timeout_ms: args.block_timeout,
        distinct_sources: args.distinct_sources,
    })
}

/// Every mode at every size (a refused mode into the report's skipped), with a progress bar
/// on a terminal.
fn modes(config: &RunConfig, report: &mut Report) -> Result<()> {
    let mut bench = Bench::new(config.clone())?;
    let total = (config.sizes.len() * config.modes.len()) as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("valid template"),
        );
        b
    });
    for &size in &config.sizes {
        for &mode in &config.modes {
            match &bar {
                Some(b) => b.set_message(format!("{} {size} B", mode.name())),
                None => eprintln!("running {} at {size} B", mode.name()),
            }
            let skipped = &mut report.skipped;
            if let Some(r) =
                crate::measure::sweep::run_or_skip(&mut bench, mode, size, config.flows, skipped)?
            {
                report.results.push(r);
            }
            if let Some(b) = &bar {
                b.inc(1);
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// `--quick`'s short search for two modes: the machinery proven, nothing measured.
fn quick_capacity(flows: usize, report: &mut Report) -> Result<()> {
    eprintln!("capacity: a short search (sockets-recvmmsg, ring-zerocopy)");
    let search = SearchArgs {
        seconds: 0.1,
        searches: 1,
        steps: 2,
        cpu_dma_latency: crate::cli::DmaLatency(None),
        isolate_rx_cpu: true,
        hold_cpu_link: crate::cli::HoldLink(None),
        method: crate::cli::SearchKind::Mlr,
        trials: crate::measure::capacity::mlr::Method::DEFAULT.trials,
        bound_trials: crate::measure::capacity::mlr::Method::DEFAULT.bound_trials,
        exceed_ratio: crate::measure::capacity::mlr::Method::DEFAULT.exceed_ratio,
        precision: crate::measure::capacity::mlr::Method::DEFAULT.precision * 100.0,
    };
    let modes = vec![Mode::SocketsRecvmmsg, Mode::Ring(Delivery::ZeroCopy)];
    let c = super::capacity::config(search, modes, Vec::new(), vec![64], vec![flows], &[0.0])?;
    // A kernel that refuses the generator's live frames even with the privileges to ask (a
    // sandboxed kernel's policy): nothing to search with, in CI too; said, and the report
    // has no capacity section.
    if let Some(why) = live_frames_refused_by_policy() {
        eprintln!("capacity: skipped: this kernel refuses BPF_F_TEST_XDP_LIVE_FRAMES ({why})");
        return Ok(());
    }
    let mut points = Vec::new();
    match crate::measure::capacity::run(&c, &mut points) {
        Ok(()) => report.capacity = Some(points),
        // A kernel without BPF_PROG_TEST_RUN's live frames (before 5.18), or no CAP_BPF:
        // said, not fatal, except in CI (root, a kernel that has them).
        Err(e) if std::env::var("CI").map_or(true, |v| v != "true") => {
            eprintln!("capacity: skipped: {e:#}")
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The kernel's refusal of live frames (EPERM) to a process that has the privileges to ask
/// (CAP_NET_RAW stands for root here): its policy, not a missing set-up.
fn live_frames_refused_by_policy() -> Option<std::io::Error> {
    zcrx_kflows::bpf::live_frames_refused().filter(|_| zcrx_ring::has_cap_net_raw())
}
