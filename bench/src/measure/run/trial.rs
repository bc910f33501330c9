//! One capacity trial of a mode: its receivers on the receiving CPU, an offered rate, and a
//! window after sending that bounds what buffering can hide.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use zcrx_capture::StopToken;
use zcrx_ring::lab::Lab;

use super::drops::DropCounters;
use super::receivers::{ReceiverSpec, Receivers};
use super::schema::ReceivePath;
use super::tally::RunTotals;
use super::{Bench, Mode, Trial};
use crate::lab::generator::{received_at, task_cpus, Offered};
use crate::lab::machine::ProcStat;
use crate::sys;

impl Bench {
    /// One capacity trial of `mode` at `size`: the mode's receivers start on `rx_cpu` (the
    /// threads they start inherit it), `offer` sends (given flow 0's frame: the in-kernel
    /// generator cycles the flows itself), then the receivers get `window` more: what they
    /// delivered by then counts, the rest is lost (`late` counts what they read after it,
    /// until nothing moved for 100 ms). `lost` counts the frames the receiving veth dropped
    /// (its rx drop counter) for the generator alone, which has no receiver, and `sent -
    /// delivered` for every mode that receives.
    ///
    /// The window bounds what buffering can hide: a receiver that reads C frames a second
    /// and is offered R for T seconds ends with (R - C) T frames queued, and reads them within
    /// the window W only if R <= C (1 + W / T). A rate that passes is therefore at most W / T
    /// above what the receiver sustains, however much its socket queues or ring hold (RFC
    /// 2544 waits 2 s after a 60 s trial: 3.3%).
    pub fn trial(
        &mut self,
        mode: Mode,
        size: usize,
        rx_cpu: usize,
        window: Duration,
        offer: impl FnOnce(&Lab, &[u8]) -> Result<Offered>,
    ) -> Result<Trial> {
        let frames = self.frames(size, mode.uses_sockets());
        let shared = RunTotals::default();
        let rx = self.open_receivers(mode, size)?;
        let base = DropCounters::read(&self.lab)?;
        let busy0 = super::measure::busy_polled(&self.lab.b)?;
        let b_rx0 = received_at(&self.lab.b)?;
        let stat0 = ProcStat::read_cpu(rx_cpu);
        let steal0 = ProcStat::read().steal_ns;
        let spec = ReceiverSpec {
            mode,
            size,
            flows: self.config.flows,
            consumers: self.config.consumers,
        };
        let old = sys::pin_to_cpu(rx_cpu).context("pinning the receivers")?;
        let sent = self.offer_to(spec, &rx, &shared, window, || offer(&self.lab, &frames[0]));
        sys::set_affinity(&old).context("restoring the CPU set")?;
        let (offered, in_window, receiver_cpus) = sent?;
        let stat1 = ProcStat::read_cpu(rx_cpu);
        let steal1 = ProcStat::read().steal_ns;
        let b_rx1 = received_at(&self.lab.b)?;
        let drops = base.since(&self.lab, &rx, offered.frames)?;
        let all = shared.delivered.load(Ordering::Relaxed);
        let path = self.receive_path(mode, &shared, busy0)?;
        let delivered = if mode == Mode::BaselineTx {
            all
        } else {
            in_window
        };
        let veth_rx_dropped = b_rx1.1.saturating_sub(b_rx0.1);
        let sent = offered.frames;
        Ok(Trial {
            mode: mode.name(),
            frame_bytes: size,
            offered_mpps: offered.pps() / 1e6,
            sent,
            delivered,
            lost: if mode == Mode::BaselineTx {
                veth_rx_dropped
            } else {
                sent.saturating_sub(delivered)
            },
            late: all - delivered,
            written_bytes: None,
            veth_rx_dropped,
            kernel_dropped: drops.total(),
            // Every frame read (late ones too) cost the CPU time measured.
            rx_cpu_ns_per_delivered: if all == 0 {
                0.0
            } else {
                stat1.busy_ns.saturating_sub(stat0.busy_ns) as f64 / all as f64
            },
            steal_ms: steal1.saturating_sub(steal0) as f64 / 1e6,
            generator_cpu: offered.ran_on,
            napi_cpus: Vec::new(),
            receiver_cpus,
            path,
            napi_ns_per_frame: None,
            cpu_link: None,
        })
    }

    /// For the modes that go through the receiving NAPI: what GRO and busy polling did in
    /// the trial (busy-polled packets counted since `busy0`), said on standard error too.
    fn receive_path(
        &self,
        mode: Mode,
        shared: &RunTotals,
        busy0: u64,
    ) -> Result<Option<ReceivePath>> {
        if !mode.needs_napi() {
            return Ok(None);
        }
        let busy = super::measure::busy_polled(&self.lab.b)?.saturating_sub(busy0);
        let p = shared.path(busy);
        eprintln!(
            "  {}: {} datagrams in {} GRO buffers ({} misfits), NAPI id {}, \
             BusyPollRxPackets +{}",
            mode.name(),
            p.gro_datagrams,
            p.gro_buffers,
            p.gro_misfits,
            p.napi_id,
            p.busy_poll_rx_packets
        );
        Ok(Some(p))
    }
}

impl Bench {
    /// The receivers of `spec` started (on the calling thread's CPUs), `offer` run, then the
    /// window after it: what was offered, what was delivered within the window, and the CPUs
    /// the receivers ran on.
    fn offer_to(
        &self,
        spec: ReceiverSpec,
        rx: &Receivers,
        shared: &RunTotals,
        window: Duration,
        offer: impl FnOnce() -> Result<Offered>,
    ) -> Result<(Offered, u64, Vec<usize>)> {
        let stop = StopToken::new();
        std::thread::scope(|s| {
            let receivers = spec.spawn(s, rx, shared, &stop);
            let offered = offer();
            let in_window = after_sending(&shared.delivered, window);
            // The receivers still live (and this thread, pinned with them).
            let receiver_cpus = task_cpus("self");
            stop.stop();
            for r in receivers {
                r.join()
                    .map_err(|_| anyhow::anyhow!("receiver panicked"))??;
            }
            Ok((offered?, in_window, receiver_cpus))
        })
    }
}

/// A trial's end: waits `window`, takes what was `delivered` by then (returned), then waits
/// until nothing has moved for 100 ms (what comes after is the trial's `late`).
fn after_sending(delivered: &AtomicU64, window: Duration) -> u64 {
    std::thread::sleep(window);
    let in_window = delivered.load(Ordering::Relaxed);
    let (mut last, mut since) = (in_window, Instant::now());
    while since.elapsed() < Duration::from_millis(100) {
        std::thread::sleep(Duration::from_millis(10));
        let d = delivered.load(Ordering::Relaxed);
        if d != last {
            (last, since) = (d, Instant::now());
        }
    }
    in_window
}
