//! `rxbench sweep`: every receive mode over a range of flow counts (one socket per flow in
//! the socket modes), each flow from its own source address. `text` holds its table and the
//! verdicts drawn from it, `plot` its plot.

pub mod plot;
pub mod text;

use anyhow::{Context, Result};

use crate::measure::run::{Bench, Mode, ModeResult, RunConfig, Skipped};

/// Flow counts of the default sweep.
pub const DEFAULT_FLOWS: [usize; 6] = [1, 16, 64, 256, 1024, 4096];

/// The modes of the default sweep: the generator alone, every receive path once (the ring
/// zero-copy and with its automatic copy).
pub fn default_modes() -> Vec<Mode> {
    [
        "baseline-tx",
        "sockets-recvmsg",
        "sockets-recvmmsg",
        "sockets-io-uring",
        "af-xdp",
        "pnet-datalink",
        "ring-zerocopy",
        "ring-copy-auto",
    ]
    .iter()
    .map(|m| Mode::from_name(m).expect("a mode name"))
    .collect()
}

/// The sweep's settings, as `rxbench sweep` takes them.
pub struct SweepConfig {
    /// Flow counts, in run order.
    pub flows: Vec<usize>,
    /// Modes.
    pub modes: Vec<Mode>,
    /// Frame size.
    pub size: usize,
    /// Frames per mode and flow count.
    pub packets: u64,
    /// Runs of every mode at every flow count (interleaved); tables use the median run.
    pub repeat: usize,
}

/// Runs the sweep: every run's result (refused modes into `skipped`).
pub fn run(c: &SweepConfig, skipped: &mut Vec<Skipped>) -> Result<Vec<ModeResult>> {
    let mut results = Vec::new();
    for &flows in &c.flows {
        let config = RunConfig {
            distinct_sources: true,
            ..RunConfig::new(flows, vec![c.size], c.modes.clone(), c.packets)
        };
        let mut bench = Bench::new(config)?;
        for run in 0..c.repeat {
            for &mode in &c.modes {
                if skipped.iter().any(|s| s.mode == mode.name()) {
                    continue;
                }
                eprintln!("sweep: {} with {flows} flows, run {}", mode.name(), run + 1);
                if let Some(r) = run_or_skip(&mut bench, mode, c.size, flows, skipped)? {
                    results.push(r);
                }
            }
        }
    }
    Ok(results)
}

/// Runs one mode; a mode whose kernel interface is refused (AF_XDP, io_uring) is recorded as
/// skipped with the kernel's reason instead of failing the run. Anything else is an error.
pub fn run_or_skip(
    bench: &mut Bench,
    mode: Mode,
    size: usize,
    flows: usize,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<ModeResult>> {
    if let Mode::Ring(zcrx_capture::Delivery::Copy(r)) = mode {
        if let Err(e) = zcrx_capture::copy::Copier::new(r) {
            // A routine this CPU cannot run (AVX-512 on most machines): said, not hidden.
            eprintln!("{}: skipped: {e}", mode.name());
            skipped.push(Skipped {
                mode: mode.name(),
                frame_bytes: size,
                flows,
                reason: e.to_string(),
            });
            return Ok(None);
        }
    }
    match bench.run(mode, size) {
        Ok(r) => Ok(Some(r)),
        Err(e) if matches!(mode, Mode::AfXdp | Mode::AfXdpBusy | Mode::SocketsIoUring) => {
            let reason = format!("{e:#}");
            if !(reason.contains("AF_XDP:") || reason.contains("io_uring:")) {
                return Err(e).with_context(|| format!("mode {} at {size} B", mode.name()));
            }
            eprintln!("{}: skipped: {reason}", mode.name());
            skipped.push(Skipped {
                mode: mode.name(),
                frame_bytes: size,
                flows,
                reason,
            });
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("mode {} at {size} B", mode.name())),
    }
}
