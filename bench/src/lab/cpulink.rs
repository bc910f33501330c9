//! How far apart two CPUs are: the round trip of one cache line between them, a thread
//! pinned to each bouncing a counter.
//!
//! On a virtual machine the hypervisor places the vCPUs where it likes and moves them while
//! the guest runs. Two vCPUs that share a last-level cache pass a line in tens of
//! nanoseconds; two on different dies (Zen's CCDs) or sockets take several times that. The
//! capacity trials' traffic crosses between the generator's CPU and the receiving CPU for
//! every frame (the frame written by one and read by the other, its page returned to the
//! generator's pool), so the receive path's cost per frame follows the distance, and a
//! search whose trials fall on both sides of a move does not hold ([`Watch`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// Batches of round trips a probe times (its result: their median).
const BATCHES: usize = 9;
/// Round trips a batch.
const TRIPS: u64 = 256;
/// A probe gives up when a batch of round trips has taken this long (the other thread could
/// not run: its CPU taken by a real-time thread, or the vCPU paused). The echo thread is
/// then told to stop and joined, which waits until it runs again.
const ANSWER_TIMEOUT: Duration = Duration::from_millis(200);
/// The echo thread stops when it reads this (even: it answers only odd values).
const STOP: u64 = u64::MAX - 1;

/// A counter alone on its cache line (and the next, against the adjacent-line prefetcher).
#[repr(align(128))]
struct Line(AtomicU64);

/// The median round trip of a cache line between CPU `a` (the calling thread, pinned there
/// for the probe and given its CPU set back after) and CPU `b` (a thread of its own), ns.
/// About a millisecond.
pub fn round_trip_ns(a: usize, b: usize) -> Result<f64> {
    if a == b {
        bail!("a cache line's round trip needs two CPUs (both were {a})");
    }
    let line = Line(AtomicU64::new(0));
    let old = crate::sys::pin_to_cpu(a).with_context(|| format!("pinning to CPU {a}"))?;
    let timed = std::thread::scope(|s| {
        let echo = s.spawn(|| -> Result<()> {
            crate::sys::pin_to_cpu(b).with_context(|| format!("pinning to CPU {b}"))?;
            loop {
                let v = line.0.load(Ordering::Acquire);
                if v == STOP {
                    return Ok(());
                }
                // Only the value read is answered: a STOP written meanwhile (the prober
                // gave up) is never overwritten, so the loop always sees it.
                if v & 1 == 1 {
                    let _ = line
                        .0
                        .compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Acquire);
                }
            }
        });
        let timed = bounce(&line);
        line.0.store(STOP, Ordering::Release);
        let echoed = echo
            .join()
            .map_err(|_| anyhow::anyhow!("the echo thread panicked"))?;
        echoed.and(timed)
    });
    crate::sys::set_affinity(&old).context("restoring the CPU set")?;
    let mut batches = timed?;
    batches.sort_by(f64::total_cmp);
    Ok(batches[batches.len() / 2])
}

/// The timed batches (ns a round trip each), or an error when the echo thread does not
/// answer (it could not run, or failed to pin itself and ended).
fn bounce(line: &Line) -> Result<Vec<f64>> {
    let mut v = 0u64;
    let mut batches = Vec::with_capacity(BATCHES);
    // One batch untimed first: the echo thread starting and the line's first trips.
    for batch in 0..=BATCHES {
        let start = Instant::now();
        for _ in 0..TRIPS {
            v += 1;
            line.0.store(v, Ordering::Release);
            let mut spins = 0u32;
            while line.0.load(Ordering::Acquire) != v + 1 {
                spins = spins.wrapping_add(1);
                if spins % 4096 == 0 && start.elapsed() > ANSWER_TIMEOUT {
                    bail!("no answer from the other CPU within {ANSWER_TIMEOUT:?}");
                }
                std::hint::spin_loop();
            }
            v += 1;
        }
        if batch > 0 {
            batches.push(start.elapsed().as_nanos() as f64 / TRIPS as f64);
        }
    }
    Ok(batches)
}

/// The link between two CPUs around one trial.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Link {
    /// The round trip just before the trial, ns.
    pub before_ns: f64,
    /// Just after it, ns.
    pub after_ns: f64,
    /// Time from the first probe before the trial to its start (the probes, and the wait
    /// for the CPUs to be near again), ms.
    pub waited_ms: f64,
}

/// A round trip within this factor of the shortest seen in the run is "near": the two
/// states on a host that moves vCPUs between dies lie several times apart.
pub const NEAR_FACTOR: f64 = 2.0;

/// The link's state over a run: the shortest round trip seen, and whether trials wait for
/// the near state.
#[derive(Debug)]
pub struct Watch {
    /// The CPUs probed (the generator's, the receiving one).
    pub cpus: (usize, usize),
    /// Wait for the near state before each trial, this long at most (`None`: never wait).
    pub hold: Option<Duration>,
    shortest: f64,
}

impl Watch {
    /// A watch of the link between `cpus` (see [`Watch::hold`]).
    pub fn new(cpus: (usize, usize), hold: Option<Duration>) -> Watch {
        Watch {
            cpus,
            hold,
            shortest: f64::INFINITY,
        }
    }

    /// One probe, which also lowers the run's shortest round trip.
    pub fn probe(&mut self) -> Result<f64> {
        let ns = round_trip_ns(self.cpus.0, self.cpus.1)?;
        self.shortest = self.shortest.min(ns);
        Ok(ns)
    }

    /// Whether `ns` is near: within [`NEAR_FACTOR`] of the shortest round trip seen.
    pub fn near(&self, ns: f64) -> bool {
        is_near(ns, self.shortest)
    }

    /// A probe before a trial: with [`Watch::hold`], probes again every 100 ms while the
    /// link is far, up to the hold's time (the trial then runs far, as its record shows).
    /// The round trip last read, and the time waited.
    pub fn ready(&mut self) -> Result<(f64, Duration)> {
        let start = Instant::now();
        let mut ns = self.probe()?;
        if let Some(hold) = self.hold {
            while !self.near(ns) && start.elapsed() < hold {
                crate::lab::interrupt::check()?;
                std::thread::sleep(Duration::from_millis(100));
                ns = self.probe()?;
            }
        }
        Ok((ns, start.elapsed()))
    }

    /// [`Watch::ready`], with a probe that fails (a signal aside) said and taken as no
    /// reading: the link is extra information, not a reason to end a run.
    pub fn ready_or_none(&mut self) -> Result<Option<(f64, Duration)>> {
        match self.ready() {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                crate::lab::interrupt::check()?;
                eprintln!("  the CPUs' link not probed: {e:#}");
                Ok(None)
            }
        }
    }

    /// The link around a trial that began with `ready`'s reading: the probe after it, and
    /// whether the link crossed between near and far meanwhile (only when held); `None`
    /// when that probe fails (said).
    pub fn after(&mut self, (before_ns, waited): (f64, Duration)) -> Option<(Link, bool)> {
        let after_ns = match self.probe() {
            Ok(ns) => ns,
            Err(e) => {
                eprintln!("  the CPUs' link not probed after the trial: {e:#}");
                return None;
            }
        };
        let crossed = self.hold.is_some() && self.near(before_ns) != self.near(after_ns);
        let link = Link {
            before_ns,
            after_ns,
            waited_ms: waited.as_secs_f64() * 1e3,
        };
        Some((link, crossed))
    }
}

/// Whether round trip `ns` is near, against the `shortest` seen.
pub fn is_near(ns: f64, shortest: f64) -> bool {
    ns <= shortest * NEAR_FACTOR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_is_within_the_factor_of_the_shortest_round_trip() {
        // The two states seen on a Zen 4 host: ~50 ns on one die, ~320 ns across.
        assert!(is_near(52.0, 48.0));
        assert!(is_near(96.0, 48.0));
        assert!(!is_near(97.0, 48.0));
        assert!(!is_near(320.0, 48.0));
        // A run that has seen only the far state calls it near until it sees better.
        assert!(is_near(330.0, 305.0));
    }

    #[test]
    fn a_probe_between_two_cpus_reads_a_round_trip() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        if n < 2 {
            assert!(round_trip_ns(0, 0).is_err(), "one CPU has no link to probe");
            return;
        }
        let before = crate::sys::task_affinity(0).expect("own CPU set");
        let mut w = Watch::new((0, n - 1), None);
        let ns = w.probe().expect("a probe");
        // A line cannot go and come back in under a nanosecond, and the probe gives up
        // after its timeout rather than report one longer.
        assert!(ns > 1.0 && ns < ANSWER_TIMEOUT.as_nanos() as f64, "{ns} ns");
        assert!(w.near(ns));
        assert_eq!(
            crate::sys::task_affinity(0).expect("own CPU set"),
            before,
            "the probe gives the thread its CPU set back"
        );
    }
}
