//! `rxbench capacity`: the zero-loss throughput of each receive mode (RFC 2544 §26.1), and
//! the rate at which at most 0.1% is lost, found by the search of IETF BMWG's MLRsearch
//! ([`mlr`]): trials of a fixed time, several at a load, a load passing a goal when at most
//! the goal's exceed ratio of its trials lost more than the goal allows, one search serving
//! every goal. `--method binary` keeps the earlier search (a binary search per goal, a
//! trial passing only when every frame sent was delivered, a sporadic loss tried once
//! more). The generator runs on CPU 0; the receiving veth's NAPI thread and the receivers'
//! threads on the last CPU. The ceiling beside the modes is the generator alone
//! (`baseline-tx`: frames to a foreign MAC, nothing receives), passing while the receiving
//! veth drops nothing: what the kernel hands over on this machine at all.
//!
//! The same search runs over flow counts (a socket per flow for the socket modes) and for
//! external sniffers (zcap, tcpdump: a trial passes when the sniffer reports every frame
//! sent as captured).

pub mod mlr;
pub mod plot;
mod point;
mod rig;
mod search;
pub mod text;

use anyhow::{bail, Context, Result};

use crate::lab::generator::{XdpLive, GENERATOR_CPU};
use point::size_label;
pub use point::{window, CapacityConfig, CapacityPoint, SearchMethod, IMIX, IMIX_FRAME_BYTES};
use rig::Rig;

/// Runs every search (needs root; the kernel's refusals are errors), each search's result
/// pushed onto `points` as it ends: a failure keeps what came before it.
pub fn run(c: &CapacityConfig, points: &mut Vec<CapacityPoint>) -> Result<()> {
    if (c.modes.is_empty() && c.sniffers.is_empty())
        || c.sizes.is_empty()
        || c.flows.is_empty()
        || c.searches == 0
        || c.steps == 0
        || c.losses.is_empty()
    {
        bail!("capacity: nothing to search");
    }
    // From the isolation to the last lab's end, a signal stops the searches gracefully.
    let _held_lab = crate::lab::interrupt::Lab::hold();
    let rx_cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let xdp = XdpLive::load()?;
    // Released when the searches end.
    let _held = c
        .cpu_dma_latency
        .map(crate::lab::isolate::hold_cpu_dma_latency)
        .transpose()?;
    // Likewise: every task that may run elsewhere given its CPU set back.
    let isolated = isolate(c, rx_cpu)?;
    let moved = isolated.as_ref().map(crate::lab::isolate::Isolated::moved);
    // One CPU has no link to watch (the generator and the receivers share it).
    let mut link = (rx_cpu != GENERATOR_CPU)
        .then(|| crate::lab::cpulink::Watch::new((GENERATOR_CPU, rx_cpu), c.hold_cpu_link));
    for &flows in &c.flows {
        let mut rig = Rig::new(c, flows, rx_cpu)?;
        for search in 0..c.searches {
            for &size in &c.sizes {
                let contenders = c
                    .modes
                    .iter()
                    .map(|&m| (m.name(), None))
                    .chain(c.sniffers.iter().map(|s| (s.name.clone(), Some(s))));
                for (name, sniffer) in contenders {
                    let (imix, label) = (size == IMIX, size_label(size));
                    eprintln!(
                        "capacity: {name} at {label}, {flows} flows, search {}",
                        search + 1
                    );
                    let found = rig
                        .search(c, &xdp, &name, sniffer, size, link.as_mut())
                        .with_context(|| format!("{name} at {label}, {flows} flows"))?;
                    points.extend(found.into_iter().map(|p| CapacityPoint {
                        mode: name.clone(),
                        frame_bytes: if imix { IMIX_FRAME_BYTES } else { size },
                        flows,
                        search,
                        imix,
                        cpu_dma_latency_us: c.cpu_dma_latency,
                        rx_cpu_tasks_moved: moved,
                        ..p
                    }));
                }
            }
        }
    }
    Ok(())
}

/// The receiving CPU kept for the searches, if `c` asks for it, and what was moved said.
fn isolate(c: &CapacityConfig, rx_cpu: usize) -> Result<Option<crate::lab::isolate::Isolated>> {
    let isolated = c
        .isolate_rx_cpu
        .then(|| crate::lab::isolate::Isolated::cpu(rx_cpu))
        .transpose()?;
    if let Some(i) = &isolated {
        eprintln!(
            "capacity: {} tasks moved off CPU {rx_cpu} for the searches ({} allowed elsewhere the kernel would not move); unbound workqueues {}",
            i.moved(),
            i.refused(),
            if i.workqueues() { "kept off it too" } else { "left as they were" }
        );
    }
    Ok(isolated)
}

#[cfg(test)]
pub(super) mod test {
    use super::point::*;
    use super::rig::*;
    use super::search::*;
    use super::*;
    use crate::lab::handshakes::Traffic;
    use crate::measure::run::{Mode, Trial};
    use std::time::Duration;

    /// `settle` over scripted tries (frames sent, whether the link moved): which try counts
    /// (its index) and how many ran.
    fn settled(tries: &[(u64, bool)]) -> (usize, usize) {
        let mut next = tries.iter().copied().enumerate();
        let mut ran = 0;
        let (i, _) = settle(
            || {
                ran += 1;
                let (i, (sent, moved)) = next.next().expect("more tries than scripted");
                Ok(((i, sent), moved))
            },
            |&(_, sent): &(usize, u64)| sent,
            |_| None,
        )
        .unwrap();
        (i, ran)
    }

    /// An empty try is tried three times in all, and so is a moved one; a try that sent
    /// nothing never stands in for an earlier one that sent frames.
    #[test]
    fn settle_reruns_empty_and_moved_trials_and_keeps_one_that_sent() {
        assert_eq!(settled(&[(10, false)]), (0, 1));
        assert_eq!(settled(&[(0, false), (0, false), (5, false)]), (2, 3));
        assert_eq!(settled(&[(0, false), (0, false), (0, false)]), (2, 3));
        assert_eq!(settled(&[(9, true), (8, true), (7, true)]), (2, 3));
        assert_eq!(settled(&[(9, true), (8, false)]), (1, 2));
        // Moved, then nothing sent three times: the try that sent frames counts.
        assert_eq!(
            settled(&[(9, true), (0, false), (0, false), (0, false)]),
            (0, 4)
        );
        assert_eq!(settled(&[(9, true), (0, false), (7, false)]), (2, 3));
        let moved_twice_then_empty = [(9, true), (6, true), (0, false), (0, false), (0, false)];
        assert_eq!(settled(&moved_twice_then_empty), (1, 5));
    }

    /// A trial of ring-zerocopy at 64 B that sent `sent` frames and lost `lost` of them.
    pub(in crate::measure::capacity) fn t(offered_mpps: f64, sent: u64, lost: u64) -> Trial {
        Trial {
            mode: "ring-zerocopy".into(),
            frame_bytes: 64,
            offered_mpps,
            sent,
            delivered: sent - lost,
            lost,
            late: 0,
            written_bytes: None,
            veth_rx_dropped: 0,
            kernel_dropped: lost,
            rx_cpu_ns_per_delivered: 100.0,
            steal_ms: 0.0,
            generator_cpu: Some(0),
            napi_cpus: vec![Some(1)],
            receiver_cpus: vec![1],
            path: None,
            napi_ns_per_frame: None,
            cpu_link: None,
        }
    }

    #[test]
    fn the_window_is_a_twentieth_of_the_trial_and_at_least_25_ms() {
        assert_eq!(
            window(Duration::from_millis(500)),
            Duration::from_millis(25)
        );
        assert_eq!(window(Duration::from_secs(2)), Duration::from_millis(100));
        assert_eq!(
            window(Duration::from_millis(100)),
            Duration::from_millis(25)
        );
    }

    #[test]
    fn a_trial_passes_with_no_more_loss_than_allowed_and_never_when_nothing_was_sent() {
        assert!(passes(&t(1.0, 1000, 0), 0.0));
        assert!(!passes(&t(1.0, 1000, 1), 0.0));
        assert!(passes(&t(1.0, 1000, 1), 0.001));
        assert!(!passes(&t(1.0, 1000, 2), 0.001));
        assert!(!passes(&t(1.0, 0, 0), 0.0));
    }

    /// A receiver that loses 10% of the frames above 1.3 Mpps, a generator whose top is
    /// 4 Mpps: the search steps geometrically from [0.02, 4] and reports the highest rate it
    /// tried that passed, every trial kept in order (no repeats: no loss was sporadic).
    #[test]
    fn the_search_converges_on_the_highest_passing_rate_it_tried() {
        let mut offered = Vec::new();
        let mut trial = |rate: Option<f64>| -> Result<Trial> {
            let mpps = rate.map_or(4.0, |r| r / 1e6);
            offered.push(mpps);
            let lost = if mpps > 1.3 { 100_000 } else { 0 };
            Ok(t(mpps, 1_000_000, lost))
        };
        let p = search_one(&mut trial, 7, 0.0).unwrap();
        assert_eq!(offered.len(), 8);
        assert_eq!(offered[0], 4.0);
        assert!((offered[1] - (0.02f64 * 4.0).sqrt()).abs() < 1e-9);
        // Seven steps narrow [0.02, 4] (a ratio of 200) to within 2^(log2(200)/128) = 4%.
        assert!(
            p.rate_mpps <= 1.3 && p.rate_mpps > 1.3 / 1.05,
            "{}",
            p.rate_mpps
        );
        assert_eq!(p.top_mpps, 4.0);
        assert!(!p.at_top);
        assert_eq!(p.trials.len(), 8);
        // A receiver that loses everywhere reads 0.
        let p = search_one(
            &mut |r| Ok(t(r.map_or(4.0, |r| r / 1e6), 1000, 100)),
            3,
            0.0,
        )
        .unwrap();
        assert_eq!(p.rate_mpps, 0.0);
        // With 0.1% allowed, 10 lost of a million passes at the top: one trial.
        let p = search_one(
            &mut |r| Ok(t(r.map_or(4.0, |r| r / 1e6), 1_000_000, 10)),
            4,
            0.001,
        )
        .unwrap();
        assert!(p.at_top);
        assert_eq!((p.rate_mpps, p.trials.len()), (4.0, 1));
    }

    fn config(method: SearchMethod, losses: Vec<f64>) -> CapacityConfig {
        CapacityConfig {
            modes: vec![Mode::BaselineTx],
            sniffers: Vec::new(),
            sizes: vec![64],
            flows: vec![16],
            trial: Duration::from_millis(100),
            window: Duration::from_millis(25),
            searches: 1,
            steps: 7,
            method,
            losses,
            cpu_dma_latency: None,
            isolate_rx_cpu: false,
            hold_cpu_link: None,
            traffic: Traffic::Udp,
            loads: Vec::new(),
        }
    }

    /// With MLRsearch, one search makes a point per loss, in the order given, sharing its
    /// trials (the later points say so); with the binary search, a search per loss. A
    /// receiver losing 0.05% above 1 Mpps and 5% above 2: zero loss reads about 1, 0.1%
    /// about 2.
    #[test]
    fn each_method_makes_a_point_per_loss() {
        let device = |r: Option<f64>| -> Result<Trial> {
            let mpps = r.map_or(4.0, |r| r / 1e6);
            let lost = if mpps > 2.0 {
                50_000
            } else if mpps > 1.0 {
                500
            } else {
                0
            };
            Ok(t(mpps, 1_000_000, lost))
        };
        let mlr = config(SearchMethod::Mlr(mlr::Method::DEFAULT), vec![0.001, 0.0]);
        let ps = search_goals(&mut device.clone(), &mlr).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!((ps[0].loss_allowed, ps[1].loss_allowed), (0.001, 0.0));
        assert_eq!((ps[0].trials_shared, ps[1].trials_shared), (false, true));
        assert_eq!(ps[0].trials.len(), ps[1].trials.len());
        assert!(ps
            .iter()
            .all(|p| p.method == "mlr" && p.trials_per_load == 3));
        assert!(
            (1.0 / 1.05..=1.0).contains(&ps[1].rate_mpps),
            "{}",
            ps[1].rate_mpps
        );
        assert!(
            (2.0 / 1.05..=2.0).contains(&ps[0].rate_mpps),
            "{}",
            ps[0].rate_mpps
        );
        assert!(ps[0].own_trials().len() == ps[0].trials.len() && ps[1].own_trials().is_empty());

        let binary = config(SearchMethod::Binary, vec![0.0, 0.001]);
        let ps = search_goals(&mut device.clone(), &binary).unwrap();
        assert_eq!(ps.len(), 2);
        assert!(ps.iter().all(|p| p.method == "binary" && !p.trials_shared));
        assert!(ps[1].rate_mpps >= ps[0].rate_mpps);
    }

    /// A sporadic loss (under 1%) is tried again at the same rate, and the rate passes when
    /// the repeat does; a heavy loss is not repeated; a repeat that fails again fails.
    #[test]
    fn a_sporadic_loss_is_repeated_once_and_a_heavy_one_is_not() {
        let mut calls = 0;
        let mut flaky = |_: Option<f64>| -> Result<Trial> {
            calls += 1;
            Ok(t(1.0, 100_000, if calls == 1 { 50 } else { 0 }))
        };
        let mut trials = Vec::new();
        assert!(rate_passes(&mut flaky, Some(1e6), 0.0, &mut trials).unwrap());
        assert_eq!(trials.iter().map(|t| t.lost).collect::<Vec<_>>(), [50, 0]);

        let mut trials = Vec::new();
        let mut heavy = |_: Option<f64>| Ok(t(1.0, 100_000, 5_000));
        assert!(!rate_passes(&mut heavy, Some(1e6), 0.0, &mut trials).unwrap());
        assert_eq!(trials.len(), 1);

        let mut trials = Vec::new();
        let mut stalls = |_: Option<f64>| Ok(t(1.0, 100_000, 50));
        assert!(!rate_passes(&mut stalls, Some(1e6), 0.0, &mut trials).unwrap());
        assert_eq!(trials.len(), 2);
    }
}
