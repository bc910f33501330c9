//! One mode at one frame size: the receivers started, the traffic sent, the wait until
//! every frame is delivered or counted as dropped, and the figures from the counters.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use zcrx_capture::StopToken;

use super::drops::{watch_drops, DropCounters, Watched};
use super::receivers::{ReceiverSpec, Receivers};
use super::tally::{new_histogram, RunTotals};
use super::xdp::XdpRx;
use super::{Bench, Drops, Latency, Mode, ModeResult};
use crate::lab::machine::ProcStat;
use crate::sys;

impl Bench {
    /// Runs one mode at one size.
    pub fn run(&mut self, mode: Mode, size: usize) -> Result<ModeResult> {
        crate::lab::interrupt::check()?;
        let mut frames = self.frames(size, mode.uses_sockets());
        if mode == Mode::SocketsGro {
            frames
                .iter_mut()
                .for_each(|f| super::bench::with_udp_checksum(f));
        }
        let shared = RunTotals::default();
        let rx = self.open_receivers(mode, size)?;
        let base = DropCounters::read(&self.lab)?;
        let busy0 = busy_polled(&self.lab.b)?;
        let stat0 = ProcStat::read();
        let start = Instant::now();
        let (generator_ns, last_delivery) =
            self.traffic(mode, size, &frames, &rx, &shared, &base)?;
        let stat1 = ProcStat::read();
        let busy_polled = busy_polled(&self.lab.b)?.saturating_sub(busy0);
        let drops = base.since(&self.lab, &rx, self.config.packets)?;
        let wall = if mode == Mode::BaselineTx {
            start.elapsed()
        } else {
            last_delivery.duration_since(start)
        };
        let measured = Measured {
            drops,
            wall_s: wall.as_secs_f64(),
            generator_ns,
            busy_ns: stat1.busy_ns.saturating_sub(stat0.busy_ns),
            xdp_hook: rx.xdp.as_ref().map(XdpRx::hook),
            busy_polled,
        };
        // The run a signal fell in is not kept.
        crate::lab::interrupt::check()?;
        Ok(self.result(mode, size, shared, measured))
    }

    /// Starts the receivers, sends the traffic, waits until every frame is delivered or
    /// counted as dropped, stops the receivers. Returns the generator's CPU ns and when the
    /// last frame was delivered.
    fn traffic(
        &mut self,
        mode: Mode,
        size: usize,
        frames: &[Vec<u8>],
        rx: &Receivers,
        shared: &RunTotals,
        base: &DropCounters,
    ) -> Result<(u64, Instant)> {
        let (flows, consumers, sent) = (
            self.config.flows,
            self.config.consumers,
            self.config.packets,
        );
        let stop = StopToken::new();
        let watched = Watched::default();
        let lab = &self.lab;
        let tx = &mut self.tx;
        std::thread::scope(|s| -> Result<(u64, Instant)> {
            watch_drops(s, lab, &watched, &stop);
            let spec = ReceiverSpec {
                mode,
                size,
                flows,
                consumers,
            };
            let receivers = spec.spawn(s, rx, shared, &stop);
            // Generator.
            let (u0, s0) = sys::thread_cpu();
            let n = sent as usize;
            let sent_now = tx.send_batch((0..n).map(|i| frames[i % frames.len()].as_slice()))?;
            let (u1, s1) = sys::thread_cpu();
            if sent_now as u64 != sent {
                bail!("generator sent {sent_now} of {sent}");
            }
            let wait = DeliveryWait { sent, consumers };
            let last_delivery = if mode == Mode::BaselineTx {
                Instant::now()
            } else {
                wait.until_accounted(shared, rx, &watched, base)?
            };
            stop.stop();
            for r in receivers {
                r.join()
                    .map_err(|_| anyhow::anyhow!("receiver panicked"))??;
            }
            Ok(((u1 - u0) + (s1 - s0), last_delivery))
        })
    }

    /// The mode's figures from the counters.
    fn result(&self, mode: Mode, size: usize, shared: RunTotals, m: Measured) -> ModeResult {
        let Measured {
            drops,
            wall_s: wall,
            generator_ns,
            busy_ns: busy,
            xdp_hook,
            busy_polled,
        } = m;
        let (flows, consumers, sent) = (
            self.config.flows,
            self.config.consumers,
            self.config.packets,
        );
        let delivered = shared.delivered.load(Ordering::Relaxed);
        let dropped = drops.total();
        let per = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 };
        let receiver_user = shared.rx_user_ns.load(Ordering::Relaxed);
        let receiver_sys = shared.rx_sys_ns.load(Ordering::Relaxed);
        let path = mode.needs_napi().then(|| shared.path(busy_polled));
        let hist = shared
            .histogram
            .into_inner()
            .unwrap()
            .unwrap_or_else(new_histogram);
        let per_flow = shared.per_flow.into_inner().unwrap();
        ModeResult {
            mode: mode.name(),
            mechanism: match xdp_hook {
                Some(hook) => format!("{} at the {hook} hook", mode.mechanism()),
                None => mode.mechanism().into(),
            },
            copied: mode.copied().into(),
            receives: mode != Mode::BaselineTx,
            frame_bytes: size,
            flows,
            consumers,
            sent,
            delivered,
            dropped,
            unaccounted: sent as i64 - delivered as i64 - dropped as i64,
            drops,
            wall_s: wall,
            delivered_pps: if wall > 0.0 {
                delivered as f64 / wall
            } else {
                0.0
            },
            receiver_user_ns_per_pkt: per(receiver_user, delivered),
            receiver_sys_ns_per_pkt: per(receiver_sys, delivered),
            generator_ns_per_pkt: per(generator_ns, sent),
            machine_ns_per_delivered: per(busy, delivered),
            machine_ns_per_sent: per(busy, sent),
            receive_ns_per_delivered: None,
            latency: Latency::from(&hist),
            flow_min: if delivered == 0 {
                0
            } else {
                per_flow.iter().copied().min().unwrap_or(0)
            },
            flow_max: per_flow.iter().copied().max().unwrap_or(0),
            path,
        }
    }
}

/// What was measured around a mode, besides the receivers' own counters.
struct Measured {
    drops: Drops,
    /// First frame sent to last delivered.
    wall_s: f64,
    /// The generator thread's CPU.
    generator_ns: u64,
    /// Whole-machine busy CPU.
    busy_ns: u64,
    /// af-xdp: where the program ran ("native" or "generic").
    xdp_hook: Option<&'static str>,
    /// The receiving namespace's BusyPollRxPackets over the run.
    busy_polled: u64,
}

/// `side`'s `BusyPollRxPackets` now.
pub(super) fn busy_polled(side: &zcrx_ring::lab::Side) -> Result<u64> {
    side.run(sys::busy_poll_rx_packets)?
        .map_err(|e| anyhow::anyhow!("reading BusyPollRxPackets in {}: {e}", side.netns))
}

/// Waiting for the receivers after the generator is done.
struct DeliveryWait {
    sent: u64,
    consumers: usize,
}

impl DeliveryWait {
    /// Waits until every frame is delivered or counted as dropped, or nothing moves; returns
    /// when the last delivery was seen.
    fn until_accounted(
        &self,
        shared: &RunTotals,
        rx: &Receivers,
        watched: &Watched,
        base: &DropCounters,
    ) -> Result<Instant> {
        let mut last = shared.delivered.load(Ordering::Relaxed);
        let mut last_change = Instant::now();
        let mut veth_rx = Watched::UNREAD;
        let mut veth_rx_change = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let d = shared.delivered.load(Ordering::Relaxed);
            if d != last {
                last = d;
                last_change = Instant::now();
            }
            let in_err = watched
                .udp_in_errors
                .load(Ordering::Relaxed)
                .max(base.udp_in_errors);
            let dropped = rx.socket_drops()? + (in_err - base.udp_in_errors);
            let rx_now = watched.veth_rx.load(Ordering::Relaxed);
            if rx_now != veth_rx {
                veth_rx = rx_now;
                veth_rx_change = Instant::now();
            }
            // The frames the receiving veth never counted, once the watcher has read its
            // count and the count has stood still (frames still in its queue are not yet
            // counted): only to tell that the end is near, since a NAPI can hold its queue
            // longer than that.
            let veth = if veth_rx != Watched::UNREAD
                && veth_rx_change.elapsed() > Duration::from_millis(30)
            {
                super::drops::veth_lost(self.sent, veth_rx.saturating_sub(base.veth_rx))
            } else {
                0
            };
            // Receivers publish their count every 256 packets, so up to 256 per receiver
            // are only counted when they stop: near the end, 50 ms of quiet is enough.
            // Otherwise be generous: on a loaded machine a receiver can stall, and an early
            // stop would leave frames unaccounted for.
            let near = d + dropped + veth + 256 * self.consumers as u64 >= self.sent;
            let quiet = Duration::from_millis(if near { 50 } else { 1000 });
            if d + dropped >= self.sent || last_change.elapsed() > quiet {
                return Ok(last_change);
            }
        }
    }
}
