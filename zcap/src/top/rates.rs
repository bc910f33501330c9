//! Rates from successive snapshots: a shard's history of per-flow byte counters, and the
//! rate of a flow over each window as (counter now − counter then) / (time now − time then),
//! "then" being the kept snapshot closest to the window's start.
//!
//! Bounded: a snapshot is kept for every refresh of the last [`DENSE`], then one every
//! [`SPARSE`] up to the longest window (a few more than 20 snapshots a shard, whatever the
//! refresh interval), each holding the byte counters of the flows that shard had then.

use std::collections::{HashMap, VecDeque};

use zcrx_flowcache::FlowKey;

use super::model::WINDOWS;

/// Snapshots younger than this are all kept, ns.
const DENSE: u64 = 12_000_000_000;
/// Older ones are kept this far apart, ns.
const SPARSE: u64 = 5_000_000_000;
/// Nothing older than the longest window and a spacing is needed.
const KEEP: u64 = (WINDOWS[2] + 6) * 1_000_000_000;

struct Snap {
    at_ns: u64,
    /// Bytes per canonical direction, per flow.
    bytes: HashMap<FlowKey, [u64; 2], foldhash::fast::RandomState>,
}

/// One shard's snapshots, oldest first.
#[derive(Default)]
pub(crate) struct History {
    snaps: VecDeque<Snap>,
}

impl History {
    /// Adds the snapshot taken at `at_ns` (a clock of the caller's, monotonic), unless it is
    /// the one already held; thins the old ones.
    pub(crate) fn push(&mut self, at_ns: u64, flows: impl Iterator<Item = (FlowKey, [u64; 2])>) {
        if self.snaps.back().is_some_and(|s| s.at_ns >= at_ns) {
            return;
        }
        self.snaps.push_back(Snap {
            at_ns,
            bytes: flows.collect(),
        });
        // Thin: of the snapshots older than DENSE, keep one every SPARSE (the oldest of
        // each run); drop those past KEEP.
        let mut kept: VecDeque<Snap> = VecDeque::with_capacity(self.snaps.len());
        let mut last_old: Option<u64> = None;
        for s in self.snaps.drain(..) {
            let age = at_ns - s.at_ns;
            if age > KEEP {
                continue;
            }
            if age > DENSE {
                if last_old.is_some_and(|t| s.at_ns - t < SPARSE) {
                    continue;
                }
                last_old = Some(s.at_ns);
            }
            kept.push_back(s);
        }
        self.snaps = kept;
    }

    /// Whether a snapshot at `at_ns` is held already.
    pub(crate) fn has(&self, at_ns: u64) -> bool {
        self.snaps.back().is_some_and(|s| s.at_ns >= at_ns)
    }

    /// Bit/s of flow `key` (its counters now `now`) over each window, per canonical
    /// direction; 0 until two snapshots are held. A counter smaller than the older
    /// snapshot's (the flow ended and came back, or was reported by an active timeout)
    /// counts from 0.
    pub(crate) fn rates(&self, key: &FlowKey, now: [u64; 2]) -> [[f64; 3]; 2] {
        let mut out = [[0.0; 3]; 2];
        let Some(newest) = self.snaps.back() else {
            return out;
        };
        let older = self.snaps.len() - 1;
        for (w, secs) in WINDOWS.iter().enumerate() {
            let start = newest.at_ns.saturating_sub(secs * 1_000_000_000);
            let Some(then) = self
                .snaps
                .iter()
                .take(older)
                .min_by_key(|s| s.at_ns.abs_diff(start))
            else {
                continue;
            };
            let dt = (newest.at_ns - then.at_ns) as f64 / 1e9;
            let base = then.bytes.get(key).copied().unwrap_or([0, 0]);
            for d in 0..2 {
                let base = if now[d] >= base[d] { base[d] } else { 0 };
                out[d][w] = (now[d] - base) as f64 * 8.0 / dt;
            }
        }
        out
    }

    /// Snapshots held (for the bound's test).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.snaps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const S: u64 = 1_000_000_000;

    fn key(port: u16) -> FlowKey {
        FlowKey::v4(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            17,
            port,
            9,
        )
    }

    #[test]
    fn rates_over_each_window_and_a_bounded_history() {
        let mut h = History::default();
        // Flow 1 sends 1000 bytes a second from t = 0; flow 2 starts at t = 30 s, 500 B/s.
        for t in 0..=60u64 {
            let mut flows = vec![(key(1), [1000 * t, 0])];
            if t >= 30 {
                flows.push((key(2), [0, 500 * (t - 30)]));
            }
            h.push(t * S, flows.into_iter());
            assert!(h.len() <= 12 + 8, "{} snapshots", h.len());
        }
        let r = h.rates(&key(1), [60_000, 0]);
        for w in 0..3 {
            assert!((r[0][w] - 8000.0).abs() < 1e-6, "{r:?}");
            assert_eq!(r[1][w], 0.0);
        }
        // Flow 2, 30 s old: its 40 s window counts from 0 over the window (about 40 s: the
        // kept snapshot nearest its start), the shorter ones its rate.
        let r = h.rates(&key(2), [0, 15_000]);
        assert!((r[1][0] - 4000.0).abs() < 1e-6, "{r:?}");
        assert!((r[1][1] - 4000.0).abs() < 1e-6, "{r:?}");
        assert!(
            (15_000.0 * 8.0 / 43.0..=15_000.0 * 8.0 / 37.0).contains(&r[1][2]),
            "{r:?}"
        );
        // A counter that went back counts from 0; the same snapshot twice is held once.
        let r = h.rates(&key(1), [100, 0]);
        assert!((r[0][0] - 400.0).abs() < 1e-6, "{r:?}");
        let n = h.len();
        h.push(60 * S, std::iter::empty());
        assert_eq!(h.len(), n);
    }
}
