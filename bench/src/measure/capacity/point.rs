//! The capacity measurement's vocabulary: its settings, a point of the report, frame sizes
//! (and the IMIX), and what passes.

use std::time::Duration;

use serde::Serialize;

use crate::lab::handshakes::Traffic;
use crate::measure::run::{Mode, SnifferSpec, Trial};

use super::mlr;

/// A search's settings.
pub struct CapacityConfig {
    /// Modes, in run order (baseline-tx is the ceiling).
    pub modes: Vec<Mode>,
    /// External sniffers (run in the receiving namespace, on the receiving CPU).
    pub sniffers: Vec<SnifferSpec>,
    /// Frame sizes ([`IMIX`] for IMIX).
    pub sizes: Vec<usize>,
    /// Flow counts (a lab is built for each).
    pub flows: Vec<usize>,
    /// One trial's sending time.
    pub trial: Duration,
    /// How long after the sending a receiver still has to read what was sent
    /// ([`Bench::trial`](crate::measure::run::Bench::trial) says why it is bounded): see [`window`].
    pub window: Duration,
    /// Searches per mode, size and flow count (interleaved: every mode once, then again).
    pub searches: usize,
    /// Halvings of the search interval after its first trial at the generator's top rate
    /// (per goal, at most, with the MLRsearch method).
    pub steps: usize,
    /// The search: MLRsearch's (the default) or the binary search.
    pub method: SearchMethod,
    /// The losses searched for (fractions of the frames sent): 0 and 0.001 by default.
    pub losses: Vec<f64>,
    /// Hold /dev/cpu_dma_latency at this many µs throughout.
    pub cpu_dma_latency: Option<u32>,
    /// Move every other task off the receiving CPU throughout ([`crate::lab::isolate`]).
    pub isolate_rx_cpu: bool,
    /// Wait up to this long before each trial for the generator's and the receiving CPU to
    /// be near ([`crate::lab::cpulink::Watch`]), and run a trial again when the link changed
    /// state during it; `None`: trials run as the host places the CPUs.
    pub hold_cpu_link: Option<Duration>,
    /// The sniffers' traffic: the xdp-live generator's UDP flows, or short TLS connections
    /// (`flows` of them, one after another) offered by a paced TX ring.
    pub traffic: Traffic,
    /// Loads to run at instead of searching, Mpps (empty: search): each mode gets the
    /// MLRsearch method's trials at each, judged as a search would judge them.
    pub loads: Vec<f64>,
}

/// How a capacity search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SearchMethod {
    /// MLRsearch ([`mlr`]): these trials per load, this exceed ratio, this precision (the
    /// steps are [`CapacityConfig::steps`]).
    Mlr(mlr::Method),
    /// A binary search per goal, a trial a rate (a second after a sporadic loss).
    Binary,
}

/// What one search found.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityPoint {
    /// Mode name (or the sniffer's).
    pub mode: String,
    /// Frame size, bytes.
    pub frame_bytes: usize,
    /// Flows.
    pub flows: usize,
    /// Which search (0-based) of this mode, size and flow count.
    pub search: usize,
    /// The loss allowed: 0 or 0.001.
    pub loss_allowed: f64,
    /// The highest rate offered that passed, Mpps (0 if none did).
    pub rate_mpps: f64,
    /// The generator's top rate in this search (its first trial), Mpps; with `--loads`, the
    /// highest rate a trial offered.
    pub top_mpps: f64,
    /// Whether the top rate itself passed (then the mode's capacity is at least that).
    pub at_top: bool,
    /// The receiving CPU's busy time per delivered packet at the passing rate, ns.
    pub rx_cpu_ns_per_delivered: f64,
    /// Every trial of the search, in order (the drop curve's points). With the MLRsearch
    /// method the goals share their trials: each goal's point lists them all.
    pub trials: Vec<Trial>,
    /// `mlr` (IETF BMWG's MLRsearch), `fixed` (MLRsearch's judgement of the loads given, no
    /// search) or `binary`.
    pub method: String,
    /// Trials per load, at most (the binary search: 2, a sporadic loss repeated once).
    pub trials_per_load: usize,
    /// Trials at a goal's upper bound, at most (MLRsearch; the binary search: 2).
    pub bound_trials: usize,
    /// The share of a load's trials that may exceed the loss allowed with the load passing
    /// (the binary search: 0, but a sporadic loss followed by a pass passes).
    pub exceed_ratio: f64,
    /// Each load tried, with its trials (indices into `trials`), how many exceeded the loss
    /// allowed and its verdict (MLRsearch only; empty for the binary search).
    pub loads: Vec<mlr::LoadOutcome>,
    /// Whether `trials` are those of the point before (the same search judged for another
    /// loss): the tables and plots count each trial once.
    pub trials_shared: bool,
    /// Whether the frames are IMIX (7:4:1 of 64, 576 and 1500 B; `frame_bytes` is then its
    /// mean, [`IMIX_FRAME_BYTES`]).
    pub imix: bool,
    /// /dev/cpu_dma_latency held at this many µs during the search (0: idle CPUs poll
    /// instead of halting); `None`: not held.
    pub cpu_dma_latency_us: Option<u32>,
    /// Tasks moved off the receiving CPU for the searches ([`crate::lab::isolate`]); `None`: the
    /// CPU was shared with whatever ran there.
    pub rx_cpu_tasks_moved: Option<usize>,
}

impl CapacityPoint {
    /// The trials this point adds (none when it shares the point before's).
    pub fn own_trials(&self) -> &[Trial] {
        if self.trials_shared {
            &[]
        } else {
            &self.trials
        }
    }
}

/// Whether `t` passes with `allowed` loss (a fraction of the frames sent).
pub(super) fn passes(t: &Trial, allowed: f64) -> bool {
    t.sent > 0 && t.lost as f64 <= allowed * t.sent as f64
}

/// `--sizes imix` in [`CapacityConfig::sizes`]: IMIX ([`crate::lab::generator::IMIX`], 7:4:1 of
/// 64, 576 and 1500 B), offered by the xdp-live generator choosing each frame's length.
pub const IMIX: usize = 0;

/// IMIX's frame size in the report: its mean, 354 B (4252 / 12, rounded), with `imix` set.
pub const IMIX_FRAME_BYTES: usize = 354;

/// The frame a size's trials are built from: IMIX's longest for IMIX.
pub(super) fn frame_len(size: usize) -> usize {
    if size == IMIX {
        crate::lab::generator::IMIX[2].0
    } else {
        size
    }
}

/// A size as the progress lines name it.
pub(super) fn size_label(size: usize) -> String {
    if size == IMIX {
        "IMIX".into()
    } else {
        format!("{size} B")
    }
}

/// The window after a trial of `trial` in which the receivers still read: a twentieth of
/// the trial (so a rate that passes is at most 5% above what a receiver sustains), and at
/// least 25 ms (two and a half ring block timeouts of 10 ms: the ring hands over its last,
/// partly filled block when the timeout retires it).
pub fn window(trial: Duration) -> Duration {
    (trial / 20).max(Duration::from_millis(25))
}

/// A trial that lost frames, but fewer than this fraction of those sent, is repeated once
/// before its rate is called a failure.
pub const SPORADIC: f64 = 0.01;

/// The lowest rate a search tries, Mpps: a mode that loses frames even there reads 0.
pub const FLOOR_MPPS: f64 = mlr::FLOOR_MPPS;
