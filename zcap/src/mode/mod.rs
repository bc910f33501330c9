//! The four ways zcap captures, chosen from the command line: `live` (TPACKET_V3 rings,
//! fanout shards, the flow stage), `immediate` (`--immediate-mode`, a TPACKET_V2 ring),
//! `offline` (`-r FILE` through the same stage) and `kflows` (`--flows-in-kernel`: flows
//! counted by an eBPF program, no ring).

mod immediate;
mod kflows;
mod live;
mod offline;
mod setup;

pub(crate) use offline::file_linktype;

use anyhow::Result;

use crate::args::{Config, Source};
use crate::interface::Iface;

/// Runs the capture the configuration asks for. Returns the exit code.
pub(crate) fn run(config: &Config) -> Result<i32> {
    match &config.source {
        Source::File(path) => offline::offline(config, path),
        Source::Immediate(iface) => immediate::live_immediate(config, &Iface::new(iface)),
        Source::Live(iface) if config.flows.in_kernel => {
            kflows::live_kernel(config, &Iface::new(iface))
        }
        Source::Live(iface) => live::live(config, &Iface::new(iface)),
    }
}
