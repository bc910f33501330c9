//! The ring modes' receiver: the pipeline over the RX ring, its consumers counting per flow.

use std::time::Duration;

use anyhow::Result;
use zcrx_capture::{
    Consumer, Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig, StopToken,
};
use zcrx_ring::RxRing;

use super::tally::{flow_of_frame, ReceiverTally, RunTotals};

pub(super) fn ring_receiver(
    ring: &RxRing,
    delivery: Delivery,
    consumers: usize,
    shared: &RunTotals,
    flows: usize,
    stop: &StopToken,
) -> Result<()> {
    let config = PipelineConfig::builder()
        .consumers(Consumers::threads(consumers))
        .delivery(delivery)
        .poll_timeout(Duration::from_millis(5))
        .build()?;
    // This thread is the stage: count its CPU like a receiver's.
    let stage = ReceiverTally::started(shared, 0);
    Pipeline::new(ring, config).with_stop(stop.clone()).run(
        |_| RingConsumer(ReceiverTally::new(shared, flows)),
        Hooks::new(),
    )?;
    stage.finish();
    Ok(())
}

/// A ring consumer: counts per flow (our frames: IPv4/UDP, no VLAN; the flow is the source
/// port) and samples latency from the kernel timestamp; merges into [`RunTotals`] at the end.
struct RingConsumer<'a>(ReceiverTally<'a>);

impl Consumer for RingConsumer<'_> {
    type Output = ();
    #[inline]
    fn packet(&mut self, d: &Delivered<'_>) {
        self.0.packet(flow_of_frame(d.data()), Some(d.meta().ts_ns));
    }
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>)
    where
        Self: Sized,
    {
        for d in packets {
            self.packet(&d);
        }
        // A consumer thread's batch (or the rest of a block) is done.
        self.0.idle();
    }
    fn finish(self) {
        self.0.finish();
    }
}
