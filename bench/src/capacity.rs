//! `rxbench capacity`: the zero-loss throughput of each receive mode (RFC 2544 §26.1): a
//! binary search on the rate the in-kernel generator offers, trials of a fixed time, a trial
//! passing only when every frame sent was delivered; and the same search for at most 0.1%
//! loss. The generator runs on CPU 0; the receiving veth's NAPI thread and the receivers'
//! threads on the last CPU. The ceiling beside the modes is the generator alone
//! (`baseline-tx`: frames to a foreign MAC, nothing receives), passing while the receiving
//! veth drops nothing: what the kernel hands over on this machine at all.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::generator::{Receiver, XdpLive, GENERATOR_CPU};
use crate::run::{Bench, Mode, RunConfig, Trial};

/// A search's settings.
pub struct CapacityConfig {
    /// Modes, in run order (baseline-tx is the ceiling).
    pub modes: Vec<Mode>,
    /// Frame sizes.
    pub sizes: Vec<usize>,
    /// Flows.
    pub flows: usize,
    /// One trial's sending time.
    pub trial: Duration,
    /// Searches per mode and size (interleaved: every mode once, then again).
    pub searches: usize,
    /// Halvings of the search interval after its first trial at the generator's top rate.
    pub steps: usize,
}

/// What one search found.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityPoint {
    /// Mode name.
    pub mode: String,
    /// Frame size, bytes.
    pub frame_bytes: usize,
    /// Flows.
    pub flows: usize,
    /// Which search (0-based) of this mode and size.
    pub search: usize,
    /// The loss allowed: 0 or 0.001.
    pub loss_allowed: f64,
    /// The highest rate offered that passed, Mpps (0 if none did).
    pub rate_mpps: f64,
    /// The generator's top rate in this search (its first trial), Mpps.
    pub top_mpps: f64,
    /// Whether the top rate itself passed (then the mode's capacity is at least that).
    pub at_top: bool,
    /// The receiving CPU's busy time per delivered packet at the passing rate, ns.
    pub rx_cpu_ns_per_delivered: f64,
    /// Every trial of the search, in order (the drop curve's points).
    pub trials: Vec<Trial>,
}

/// Whether `t` passes with `allowed` loss (a fraction of the frames sent).
fn passes(t: &Trial, allowed: f64) -> bool {
    t.sent > 0 && t.lost as f64 <= allowed * t.sent as f64
}

/// Runs every search (needs root; the kernel's refusals are errors).
pub fn run(c: &CapacityConfig) -> Result<Vec<CapacityPoint>> {
    if c.modes.is_empty() || c.sizes.is_empty() || c.searches == 0 || c.steps == 0 {
        bail!("capacity: nothing to search");
    }
    // The trials count the frames the generator sent: `packets` is not used.
    let mut bench = Bench::new(RunConfig::new(c.flows, c.sizes.clone(), c.modes.clone(), 1))?;
    let rx_cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    Receiver::prepare(&bench.lab().b, rx_cpu)?;
    let xdp = XdpLive::load()?;
    let mut points = Vec::new();
    for search in 0..c.searches {
        for &size in &c.sizes {
            for &mode in &c.modes {
                for allowed in [0.0, 0.001] {
                    eprintln!(
                        "capacity: {} at {size} B, loss <= {}%, search {}",
                        mode.name(),
                        allowed * 100.0,
                        search + 1
                    );
                    let p = search_one(&mut bench, &xdp, c, mode, size, allowed, rx_cpu)
                        .with_context(|| format!("{} at {size} B", mode.name()))?;
                    points.push(CapacityPoint { search, ..p });
                }
            }
        }
    }
    Ok(points)
}

/// One binary search: a first trial as fast as the generator goes, then `steps` halvings
/// between the highest rate that passed (0 at first) and the lowest that failed.
fn search_one(
    bench: &mut Bench,
    xdp: &XdpLive,
    c: &CapacityConfig,
    mode: Mode,
    size: usize,
    allowed: f64,
    rx_cpu: usize,
) -> Result<CapacityPoint> {
    let flows = c.flows;
    let mut trial = |rate: Option<f64>| {
        bench.trial(mode, size, rx_cpu, |lab, frame| {
            xdp.offer(&lab.a, frame, flows, c.trial, rate, GENERATOR_CPU)
        })
    };
    let top = trial(None)?;
    let top_mpps = top.offered_mpps;
    let mut trials = vec![top.clone()];
    let (mut good, mut bad): (Option<Trial>, f64) = if passes(&top, allowed) {
        (Some(top), top_mpps)
    } else {
        (None, top_mpps)
    };
    let at_top = good.is_some();
    if !at_top {
        let mut lo = 0.0;
        for _ in 0..c.steps {
            let rate = (lo + bad) / 2.0;
            let t = trial(Some(rate * 1e6))?;
            trials.push(t.clone());
            if passes(&t, allowed) {
                lo = rate;
                good = Some(t);
            } else {
                bad = rate;
            }
        }
    }
    Ok(CapacityPoint {
        mode: mode.name(),
        frame_bytes: size,
        flows,
        search: 0,
        loss_allowed: allowed,
        rate_mpps: good.as_ref().map_or(0.0, |t| t.offered_mpps),
        top_mpps,
        at_top,
        rx_cpu_ns_per_delivered: good.as_ref().map_or(0.0, |t| t.rx_cpu_ns_per_delivered),
        trials,
    })
}

#[cfg(test)]
mod test {
    use super::*;

    fn t(sent: u64, lost: u64) -> Trial {
        Trial {
            mode: "ring-zerocopy".into(),
            frame_bytes: 64,
            offered_mpps: 1.0,
            sent,
            delivered: sent - lost,
            lost,
            veth_rx_dropped: 0,
            kernel_dropped: lost,
            rx_cpu_ns_per_delivered: 100.0,
        }
    }

    #[test]
    fn a_trial_passes_with_no_more_loss_than_allowed_and_never_when_nothing_was_sent() {
        assert!(passes(&t(1000, 0), 0.0));
        assert!(!passes(&t(1000, 1), 0.0));
        assert!(passes(&t(1000, 1), 0.001));
        assert!(!passes(&t(1000, 2), 0.001));
        assert!(!passes(&t(0, 0), 0.0));
    }
}
