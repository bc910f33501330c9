//! The searches: every goal of one MLRsearch, or a binary search per goal.

use anyhow::Result;

use crate::measure::run::Trial;

use super::mlr;
use super::point::{passes, CapacityConfig, CapacityPoint, SearchMethod, FLOOR_MPPS, SPORADIC};

/// One search of every goal in `c.losses`, a point per goal in that order: with MLRsearch one
/// search judged for each loss, with the binary search a search per loss.
pub(super) fn search_goals(
    trial: &mut impl FnMut(Option<f64>) -> Result<Trial>,
    c: &CapacityConfig,
) -> Result<Vec<CapacityPoint>> {
    match c.method {
        SearchMethod::Binary => c
            .losses
            .iter()
            .map(|&allowed| search_one(trial, c.steps, allowed))
            .collect(),
        SearchMethod::Mlr(m) => {
            let method = mlr::Method {
                steps: c.steps,
                ..m
            };
            let s = if c.loads.is_empty() {
                mlr::search(trial, &method, &c.losses)?
            } else {
                mlr::fixed(trial, &method, &c.losses, &c.loads)?
            };
            let first = &s.trials[0];
            let (mode, frame_bytes) = (first.mode.clone(), first.frame_bytes);
            Ok(s.goals
                .into_iter()
                .enumerate()
                .map(|(i, g)| CapacityPoint {
                    mode: mode.clone(),
                    frame_bytes,
                    flows: 0,
                    search: 0,
                    loss_allowed: g.loss,
                    rate_mpps: g.rate_mpps,
                    top_mpps: s.top_mpps,
                    at_top: g.at_top,
                    rx_cpu_ns_per_delivered: g.rx_cpu_ns_per_delivered,
                    trials: s.trials.clone(),
                    method: if c.loads.is_empty() { "mlr" } else { "fixed" }.into(),
                    trials_per_load: method.trials,
                    bound_trials: method.bound_trials.max(method.trials),
                    exceed_ratio: method.exceed_ratio,
                    loads: g.loads,
                    trials_shared: i > 0,
                    imix: false,
                    cpu_dma_latency_us: None,
                    rx_cpu_tasks_moved: None,
                })
                .collect())
        }
    }
}

/// Whether a rate passes: its trial passes, or lost fewer than [`SPORADIC`] of the frames
/// and a second trial at the same rate passes. On a virtual machine the receiving CPU now
/// and then stalls for a few hundred µs (the hypervisor, a host interrupt), and the veth's
/// queue of 256 XDP frames overflows: a loss of tens to a few thousand frames at any rate,
/// which would make a single-trial search report the stall, not the receiver. One repeat is
/// the "goal exceed ratio" of 50% of IETF BMWG's MLRsearch; every trial is kept.
pub(super) fn rate_passes(
    trial: &mut impl FnMut(Option<f64>) -> Result<Trial>,
    rate: Option<f64>,
    allowed: f64,
    trials: &mut Vec<Trial>,
) -> Result<bool> {
    let t = trial(rate)?;
    let pass = passes(&t, allowed);
    let sporadic = t.sent > 0 && (t.lost as f64) < SPORADIC * t.sent as f64;
    trials.push(t);
    if pass || !sporadic {
        return Ok(pass);
    }
    let again = trial(rate)?;
    let pass = passes(&again, allowed);
    trials.push(again);
    Ok(pass)
}

/// One binary search: a first trial as fast as the generator goes, then `steps` rates each
/// at the geometric mean of the highest rate that passed ([`FLOOR_MPPS`] at first) and the
/// lowest that failed, so each step halves the interval's ratio: the modes' rates span two
/// orders of magnitude, and an arithmetic halving would find the slow modes' rates only to
/// within the fast ones' step. A rate passes as [`rate_passes`] says. `trial` runs one trial
/// at a rate (frames per second; `None`: as fast as the generator goes).
pub(super) fn search_one(
    trial: &mut impl FnMut(Option<f64>) -> Result<Trial>,
    steps: usize,
    allowed: f64,
) -> Result<CapacityPoint> {
    let mut trials = Vec::new();
    let at_top = rate_passes(trial, None, allowed, &mut trials)?;
    let top_mpps = trials[0].offered_mpps;
    // The rate that passed is the highest offered among its trials that passed.
    let passed = |trials: &[Trial]| {
        trials
            .iter()
            .filter(|t| passes(t, allowed))
            .max_by(|a, b| a.offered_mpps.total_cmp(&b.offered_mpps))
            .cloned()
    };
    if !at_top {
        let (mut lo, mut bad) = (FLOOR_MPPS.min(top_mpps / 2.0), top_mpps);
        for _ in 0..steps {
            let rate = (lo * bad).sqrt();
            if rate_passes(trial, Some(rate * 1e6), allowed, &mut trials)? {
                lo = rate;
            } else {
                bad = rate;
            }
        }
    }
    let good = passed(&trials);
    let first = &trials[0];
    Ok(CapacityPoint {
        mode: first.mode.clone(),
        frame_bytes: first.frame_bytes,
        flows: 0,
        search: 0,
        loss_allowed: allowed,
        rate_mpps: good.as_ref().map_or(0.0, |t| t.offered_mpps),
        top_mpps,
        at_top,
        rx_cpu_ns_per_delivered: good.as_ref().map_or(0.0, |t| t.rx_cpu_ns_per_delivered),
        trials,
        method: "binary".into(),
        trials_per_load: 2,
        bound_trials: 2,
        exceed_ratio: 0.0,
        loads: Vec::new(),
        trials_shared: false,
        imix: false,
        cpu_dma_latency_us: None,
        rx_cpu_tasks_moved: None,
    })
}
