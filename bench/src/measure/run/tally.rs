//! What receivers count: each receiver's private tally, merged into the run's totals when
//! the receiver finishes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hdrhistogram::Histogram;

use zcrx_ring::frames::{PAYLOAD_MAGIC, SPORT_BASE};

use crate::sys;

/// Record the latency of one packet in this many: a clock read for every packet would add its
/// own cost to each mode's CPU figures. Sampled the same way in every mode.
pub const LATENCY_EVERY: u64 = 8;

/// What receivers share with the measuring thread.
#[derive(Default)]
pub(super) struct RunTotals {
    pub(super) delivered: AtomicU64,
    /// CPU of the receiving threads (user, system ns), added by each when it ends.
    pub(super) rx_user_ns: AtomicU64,
    pub(super) rx_sys_ns: AtomicU64,
    pub(super) histogram: Mutex<Option<Histogram<u64>>>,
    pub(super) per_flow: Mutex<Vec<u64>>,
    /// sockets-gro: buffers read, the datagrams split out of them, and of those the ones
    /// that were not a lab datagram (a wrong split).
    pub(super) gro_buffers: AtomicU64,
    pub(super) gro_datagrams: AtomicU64,
    pub(super) gro_misfits: AtomicU64,
    /// The largest NAPI id a receiving socket recorded (`SO_INCOMING_NAPI_ID`; 0: none).
    pub(super) napi_id: AtomicU64,
}

impl RunTotals {
    /// What a GRO or busy-polling mode did, with the namespace's busy-poll count.
    pub(super) fn path(&self, busy_poll_rx_packets: u64) -> super::schema::ReceivePath {
        super::schema::ReceivePath {
            gro_buffers: self.gro_buffers.load(Ordering::Relaxed),
            gro_datagrams: self.gro_datagrams.load(Ordering::Relaxed),
            gro_misfits: self.gro_misfits.load(Ordering::Relaxed),
            napi_id: self.napi_id.load(Ordering::Relaxed),
            busy_poll_rx_packets,
        }
    }
}

/// A receiver's private counters, merged into [`RunTotals`] by [`ReceiverTally::finish`] at the end of
/// its thread.
pub(super) struct ReceiverTally<'a> {
    shared: &'a RunTotals,
    histogram: Histogram<u64>,
    per_flow: Vec<u64>,
    pending: u64,
    n: u64,
    /// This thread's CPU when it saw its first packet (consumer threads are spawned by the
    /// pipeline; their time before the first packet is thread start-up, ~0).
    cpu_start: Option<(u64, u64)>,
    gro: GroSplit,
    gro_buffers: u64,
}

impl<'a> ReceiverTally<'a> {
    pub(super) fn new(shared: &'a RunTotals, flows: usize) -> Self {
        ReceiverTally {
            shared,
            histogram: new_histogram(),
            per_flow: vec![0; flows],
            pending: 0,
            n: 0,
            cpu_start: None,
            gro: GroSplit::default(),
            gro_buffers: 0,
        }
    }
    /// A tally for a receiver that owns its thread: it counts the thread's CPU from now.
    pub(super) fn started(shared: &'a RunTotals, flows: usize) -> Self {
        let mut tally = ReceiverTally::new(shared, flows);
        tally.start_cpu();
        tally
    }
    /// Starts counting this thread's CPU now (receivers that own their thread call it first).
    pub(super) fn start_cpu(&mut self) {
        self.cpu_start = Some(sys::thread_cpu());
    }

    #[inline]
    pub(super) fn packet(&mut self, flow: usize, kernel_ts: Option<u64>) {
        if self.cpu_start.is_none() {
            self.start_cpu();
        }
        if let Some(c) = self.per_flow.get_mut(flow) {
            *c += 1;
        }
        self.n += 1;
        if self.n % LATENCY_EVERY == 0 {
            if let Some(ts) = kernel_ts {
                let _ = self
                    .histogram
                    .record(sys::realtime_ns().saturating_sub(ts).max(1));
            }
        }
        self.pending += 1;
        if self.pending >= 256 {
            self.flush_count();
        }
    }
    /// One `UDP_GRO` buffer read (its datagrams counted by [`ReceiverTally::packet`]).
    #[inline]
    pub(super) fn gro_buffer(&mut self, split: GroSplit) {
        self.gro_buffers += 1;
        self.gro.datagrams += split.datagrams;
        self.gro.misfits += split.misfits;
    }
    /// A receiving socket's `SO_INCOMING_NAPI_ID` (what busy polling would poll; 0: none).
    pub(super) fn napi_id(&mut self, id: u32) {
        self.shared
            .napi_id
            .fetch_max(u64::from(id), Ordering::Relaxed);
    }
    /// The receiver has nothing to read now (or ended a batch): what it counted becomes
    /// visible to the measuring thread, which reads the count at the end of a trial's window.
    #[inline]
    pub(super) fn idle(&mut self) {
        if self.pending > 0 {
            self.flush_count();
        }
    }
    fn flush_count(&mut self) {
        self.shared
            .delivered
            .fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
    }
}

impl ReceiverTally<'_> {
    /// The receiver is done: its counts, CPU time, latencies and per-flow counts go into
    /// [`RunTotals`].
    pub(super) fn finish(mut self) {
        self.flush_count();
        let add = |a: &AtomicU64, v: u64| a.fetch_add(v, Ordering::Relaxed);
        add(&self.shared.gro_buffers, self.gro_buffers);
        add(&self.shared.gro_datagrams, self.gro.datagrams);
        add(&self.shared.gro_misfits, self.gro.misfits);
        if let Some((u0, s0)) = self.cpu_start {
            let (u1, s1) = sys::thread_cpu();
            self.shared
                .rx_user_ns
                .fetch_add(u1.saturating_sub(u0), Ordering::Relaxed);
            self.shared
                .rx_sys_ns
                .fetch_add(s1.saturating_sub(s0), Ordering::Relaxed);
        }
        let mut h = self
            .shared
            .histogram
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match h.as_mut() {
            Some(h) => {
                let _ = h.add(&self.histogram);
            }
            None => *h = Some(self.histogram.clone()),
        }
        let mut f = self
            .shared
            .per_flow
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if f.len() < self.per_flow.len() {
            f.resize(self.per_flow.len(), 0);
        }
        for (a, b) in f.iter_mut().zip(&self.per_flow) {
            *a += b;
        }
    }
}

pub(super) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// The flow of a lab frame seen at the link layer (IPv4/UDP, no VLAN: the flow is the source
/// port minus [`SPORT_BASE`]); `usize::MAX` (counted nowhere) for anything else.
#[inline]
pub(super) fn flow_of_frame(b: &[u8]) -> usize {
    if b.len() >= 36 {
        usize::from(u16::from_be_bytes([b[34], b[35]])).wrapping_sub(usize::from(SPORT_BASE))
    } else {
        usize::MAX
    }
}

/// One `UDP_GRO` buffer split into its datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct GroSplit {
    /// Datagrams in the buffer.
    pub(super) datagrams: u64,
    /// Of them, those whose length is not the lab's payload length or that do not start
    /// with the lab's payload magic (a wrong split shows here).
    pub(super) misfits: u64,
}

/// Splits `buf` by `segment` (its datagrams are `segment` bytes each, the last one possibly
/// shorter; no segment: one datagram) and checks each against the lab's `payload` length and
/// magic.
pub(super) fn split_gro(buf: &[u8], segment: Option<usize>, payload: usize) -> GroSplit {
    let seg = segment.unwrap_or(buf.len()).max(1);
    let mut split = GroSplit::default();
    for d in buf.chunks(seg) {
        split.datagrams += 1;
        if d.len() != payload || d.get(..4) != Some(&PAYLOAD_MAGIC.to_be_bytes()[..]) {
            split.misfits += 1;
        }
    }
    if buf.is_empty() {
        split.datagrams = 1;
        split.misfits = 1;
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(len: usize) -> Vec<u8> {
        let mut d = PAYLOAD_MAGIC.to_be_bytes().to_vec();
        d.resize(len, 7);
        d
    }

    #[test]
    fn a_coalesced_buffer_splits_into_its_datagrams() {
        let buf: Vec<u8> = (0..5).flat_map(|_| datagram(1358)).collect();
        let s = split_gro(&buf, Some(1358), 1358);
        assert_eq!(
            s,
            GroSplit {
                datagrams: 5,
                misfits: 0
            }
        );
        // Without the control message the buffer is one datagram.
        let s = split_gro(&datagram(22), None, 22);
        assert_eq!(
            s,
            GroSplit {
                datagrams: 1,
                misfits: 0
            }
        );
        // A wrong segment size shows as misfits.
        let s = split_gro(&buf, Some(1000), 1358);
        assert_eq!(s.datagrams, 7);
        assert_eq!(s.misfits, 7);
    }
}
