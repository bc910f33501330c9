//! The rig a search runs its trials on: the lab, the generator and the receivers, a trial
//! run again while the CPUs' link moved or nothing was sent.

use anyhow::Result;

use crate::lab::generator::{offer_tx_ring_paced, Receiver, XdpLive, GENERATOR_CPU};
use crate::lab::handshakes::{self, Traffic};
use crate::measure::run::{Bench, Mode, RunConfig, SnifferSpec, Trial};

use super::point::{frame_len, CapacityConfig, CapacityPoint, IMIX, IMIX_FRAME_BYTES};
use super::search::search_goals;

/// One flow count's lab and what its trials offer with: the receivers' bench, the receiving
/// veth's NAPI threads, and for TLS handshakes their frames and the TX ring that paces them.
pub(super) struct Rig {
    /// The handshakes' frames, and the TX ring in the sender's namespace that offers them
    /// (first, so that the ring is closed before its lab goes).
    pub(super) handshakes: Option<(Vec<Vec<u8>>, zcrx_ring::TxRing)>,
    pub(super) bench: Bench,
    pub(super) receiver: Receiver,
    pub(super) flows: usize,
    pub(super) rx_cpu: usize,
}

impl Rig {
    pub(super) fn new(c: &CapacityConfig, flows: usize, rx_cpu: usize) -> Result<Rig> {
        // The trials count the frames the generator sent: `packets` is not used.
        let bench = Bench::new(RunConfig::new(
            flows,
            c.sizes.iter().map(|&s| frame_len(s)).collect(),
            c.modes.clone(),
            1,
        ))?;
        let receiver = Receiver::prepare(&bench.lab().b, rx_cpu)?;
        let handshakes = match c.traffic {
            Traffic::TlsHandshakes => {
                let iface = bench.lab().a.iface.clone();
                let tx = bench
                    .lab()
                    .a
                    .run(move || zcrx_ring::TxRing::builder(iface).frame_count(8192).build())??;
                Some((handshakes::frames(flows), tx))
            }
            _ => None,
        };
        Ok(Rig {
            handshakes,
            bench,
            receiver,
            flows,
            rx_cpu,
        })
    }

    /// One search of every goal for mode `name` (or `sniffer`) at `size`.
    pub(super) fn search(
        &mut self,
        c: &CapacityConfig,
        xdp: &XdpLive,
        name: &str,
        sniffer: Option<&SnifferSpec>,
        size: usize,
        mut link: Option<&mut crate::lab::cpulink::Watch>,
    ) -> Result<Vec<CapacityPoint>> {
        let imix = size == IMIX;
        // A trial, and whether the CPUs' link crossed between near and far during it (only
        // when the link is held).
        let mut one = |rate: Option<f64>| -> Result<(Trial, bool)> {
            let Rig {
                handshakes,
                bench,
                receiver,
                flows,
                rx_cpu,
            } = self;
            let (flows, rx_cpu) = (*flows, *rx_cpu);
            crate::lab::interrupt::check()?;
            let ready = match link.as_deref_mut() {
                Some(w) => w.ready_or_none()?,
                None => None,
            };
            // After the wait: only the trial's NAPI time counts.
            let napi0 = receiver.run_ns();
            let offer = |lab: &zcrx_ring::lab::Lab, frame: &[u8]| match handshakes {
                Some((frames, tx)) => offer_tx_ring_paced(tx, frames, c.trial, rate, GENERATOR_CPU),
                None if imix => xdp.offer_imix(&lab.a, frame, flows, c.trial, rate, GENERATOR_CPU),
                None => xdp.offer(&lab.a, frame, flows, c.trial, rate, GENERATOR_CPU),
            };
            // IMIX: receivers for its longest frame, which the generator trims.
            let size = frame_len(size);
            let mut t = match sniffer {
                None => {
                    let mode = Mode::from_name(name).expect("a mode's name");
                    bench.trial(mode, size, rx_cpu, c.window, offer)?
                }
                Some(spec) => bench.sniff_trial(spec, size, rx_cpu, offer)?,
            };
            // The trial a signal fell in is not kept.
            crate::lab::interrupt::check()?;
            t.napi_cpus = receiver.napi_cpus(&napi0);
            let napi_ns = receiver.run_ns_since(&napi0);
            t.napi_ns_per_frame = (t.sent > 0).then(|| napi_ns as f64 / t.sent as f64);
            if imix {
                t.frame_bytes = IMIX_FRAME_BYTES;
            }
            let around = link.as_deref_mut().zip(ready).and_then(|(w, r)| w.after(r));
            let switched = around.is_some_and(|(_, crossed)| crossed);
            t.cpu_link = around.map(|(l, _)| l);
            Ok((t, switched))
        };
        let mut trial = |rate: Option<f64>| -> Result<Trial> {
            settle(|| one(rate), |t: &Trial| t.sent, |t: &Trial| t.cpu_link)
        };
        search_goals(&mut trial, c)
    }
}

/// A trial as it counts, from `one` run as often as needed. A trial in which the generator
/// sent nothing (its thread ran only after the trial's end, on a busy host) says nothing of
/// the receiver: it is run again, and counts as failed only if it stays empty. Likewise a
/// trial during which the generator's and the receiving CPU moved nearer or apart (with the
/// link held): part of it ran in each state. A try that sent nothing never replaces an
/// earlier one that sent frames: the last of those counts then, moved or not.
pub(super) fn settle<T>(
    mut one: impl FnMut() -> Result<(T, bool)>,
    sent: impl Fn(&T) -> u64,
    link: impl Fn(&T) -> Option<crate::lab::cpulink::Link>,
) -> Result<T> {
    let (mut t, mut switched) = one()?;
    let (mut empty, mut moved) = (1, 1);
    let mut sent_some: Option<T> = None;
    loop {
        if sent(&t) == 0 && empty < EMPTY_TRIAL_TRIES {
            eprintln!("  the generator sent nothing in this trial: once more");
            empty += 1;
        } else if sent(&t) > 0 && switched && moved < LINK_SWITCH_TRIES {
            if let Some(l) = link(&t) {
                eprintln!(
                    "  the CPUs' link changed during the trial ({:.0} ns before, {:.0} after): once more",
                    l.before_ns, l.after_ns
                );
            }
            moved += 1;
            sent_some = Some(t);
        } else {
            break;
        }
        (t, switched) = one()?;
    }
    Ok(match sent_some {
        Some(earlier) if sent(&t) == 0 => earlier,
        _ => t,
    })
}

/// Tries of a trial in which the generator sent nothing, before it counts (as a failure).
pub(super) const EMPTY_TRIAL_TRIES: usize = 3;

/// Tries of a trial during which the CPUs' link changed state, before it counts as it is.
pub(super) const LINK_SWITCH_TRIES: usize = 3;
