//! `rxbench sweep`: every receive mode over a range of flow counts (one socket per flow in
//! the socket modes), each flow from its own source address, and the verdicts on the
//! many-socket claims drawn from it.

use std::fmt::Write as _;

use anyhow::{bail, Context, Result};

use crate::run::{Bench, Mode, ModeResult, RunConfig, Skipped};
use crate::text::{dedup, table};

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

/// Sweep settings.
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
    if c.flows.is_empty() || c.flows.iter().any(|&f| f == 0 || f > 20_000) {
        bail!("--flow-counts: each must be 1..=20000");
    }
    if c.repeat == 0 || c.repeat > 100 {
        bail!("--repeat {}: must be 1..=100", c.repeat);
    }
    if c.packets == 0 || c.packets > 1_000_000_000 {
        bail!("--packets {}: must be 1..=1e9", c.packets);
    }
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
        Err(e) if matches!(mode, Mode::AfXdp | Mode::SocketsIoUring) => {
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

/// CPU per packet as plotted and compared: per delivered packet, per sent for baseline-tx.
pub fn cpu(r: &ModeResult) -> f64 {
    if r.receives {
        r.machine_ns_per_delivered
    } else {
        r.machine_ns_per_sent
    }
}

/// For each mode and flow count, the run with the median CPU per packet (a whole run, so its
/// figures belong together), in the order of first appearance.
pub fn median_runs(results: &[ModeResult]) -> Vec<&ModeResult> {
    let keys = dedup(results.iter().map(|r| (r.mode.clone(), r.flows)));
    keys.iter()
        .map(|(m, f)| {
            let mut runs: Vec<&ModeResult> = results
                .iter()
                .filter(|r| &r.mode == m && r.flows == *f)
                .collect();
            runs.sort_by(|a, b| cpu(a).total_cmp(&cpu(b)));
            runs[runs.len() / 2]
        })
        .collect()
}

/// The sweep's table: one row per mode and flow count (the median run of each).
pub fn table_text(results: &[ModeResult], markdown: bool) -> String {
    let runs = results
        .iter()
        .filter(|r| r.mode == results[0].mode && r.flows == results[0].flows)
        .count();
    let results = median_runs(results);
    let header = [
        "mode",
        "flows",
        "delivered Mpps",
        "dropped",
        "machine ns/deliv",
        "rx-only ns/deliv",
        "p99 µs",
        "runs",
    ];
    let modes = dedup(results.iter().map(|r| r.mode.clone()));
    let mut rows = Vec::new();
    for m in &modes {
        for r in results.iter().filter(|r| &r.mode == m) {
            rows.push(vec![
                r.mode.clone(),
                r.flows.to_string(),
                format!("{:.3}", r.delivered_pps / 1e6),
                r.dropped.to_string(),
                if r.receives {
                    format!("{:.0}", r.machine_ns_per_delivered)
                } else {
                    format!("{:.0} (per sent)", r.machine_ns_per_sent)
                },
                r.receive_ns_per_delivered
                    .map_or("-".into(), |v| format!("{v:.0}")),
                if r.latency.samples == 0 {
                    "n/a".into()
                } else {
                    format!("{:.1}", r.latency.p99_ns as f64 / 1000.0)
                },
                runs.to_string(),
            ]);
        }
    }
    table(&header, &rows, markdown)
}

/// For each receiving mode: its CPU per delivered packet at every flow count relative to its
/// fewest-flows figure, and the first flow count where it doubled.
pub fn verdicts(results: &[ModeResult]) -> String {
    let mut s = String::new();
    let results: Vec<ModeResult> = median_runs(results).into_iter().cloned().collect();
    let modes = dedup(
        results
            .iter()
            .filter(|r| r.receives)
            .map(|r| r.mode.clone()),
    );
    for m in &modes {
        let mut rs: Vec<&ModeResult> = results
            .iter()
            .filter(|r| &r.mode == m && r.delivered > 0)
            .collect();
        rs.sort_by_key(|r| r.flows);
        let Some(first) = rs.first() else { continue };
        let base = first.machine_ns_per_delivered;
        let steps: Vec<String> = rs
            .iter()
            .map(|r| format!("{}: {:.2}x", r.flows, r.machine_ns_per_delivered / base))
            .collect();
        let doubled = rs
            .iter()
            .find(|r| r.machine_ns_per_delivered >= 2.0 * base)
            .map_or("never doubles in this range".to_string(), |r| {
                format!("doubles at {} flows", r.flows)
            });
        let _ = writeln!(
            s,
            "{m}: machine CPU per delivered packet vs {} flow(s) ({base:.0} ns): {}; {doubled}",
            first.flows,
            steps.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Drops, Latency};

    fn result(mode: &str, flows: usize, ns: f64) -> ModeResult {
        ModeResult {
            mode: mode.into(),
            mechanism: "m".into(),
            copied: "kernel".into(),
            receives: mode != "baseline-tx",
            frame_bytes: 64,
            flows,
            consumers: 1,
            sent: 10,
            delivered: 10,
            dropped: 0,
            drops: Drops::default(),
            unaccounted: 0,
            wall_s: 1.0,
            delivered_pps: 10.0,
            receiver_user_ns_per_pkt: 0.0,
            receiver_sys_ns_per_pkt: 0.0,
            generator_ns_per_pkt: 0.0,
            machine_ns_per_delivered: ns,
            machine_ns_per_sent: ns,
            receive_ns_per_delivered: None,
            latency: Latency::default(),
            flow_min: 1,
            flow_max: 1,
        }
    }

    #[test]
    fn the_median_run_is_kept_and_the_doubling_point_found() {
        let rs = vec![
            result("sockets-recvmsg", 1, 100.0),
            result("sockets-recvmsg", 1, 300.0),
            result("sockets-recvmsg", 1, 110.0),
            result("sockets-recvmsg", 64, 150.0),
            result("sockets-recvmsg", 4096, 230.0),
            result("ring-zerocopy", 1, 50.0),
            result("ring-zerocopy", 4096, 60.0),
        ];
        let med = median_runs(&rs);
        assert_eq!(med.len(), 5);
        assert_eq!(med[0].machine_ns_per_delivered, 110.0);
        let v = verdicts(&rs);
        assert!(v.contains("sockets-recvmsg: machine CPU per delivered packet vs 1 flow(s) (110 ns): 1: 1.00x, 64: 1.36x, 4096: 2.09x; doubles at 4096 flows"), "{v}");
        assert!(
            v.contains("ring-zerocopy") && v.contains("never doubles"),
            "{v}"
        );
    }
}
