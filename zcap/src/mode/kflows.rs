//! `-i IFACE --flows-in-kernel`: flows counted in the kernel's receive path
//! (`zcrx_kflows`: an eBPF program at the interface's tcx hooks, or at its XDP
//! hook with `--flows-in-kernel-hook xdp`) instead of a ring; no packet crosses into user
//! space. The program is attached before `-Z` and the sandbox (it needs CAP_BPF,
//! CAP_PERFMON and CAP_NET_ADMIN); afterwards zcap only reads and deletes map
//! entries through the map's fd (the sandbox lets those `bpf` commands through). Every
//! second the map is read: flows idle past their timeouts end and long flows are reported
//! (`--active-timeout`), to the IPFIX export and into `--flows`' table; at the end every flow left is flushed, the table printed and the
//! counts said as tcpdump's, "packets captured" being the packets the program saw.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use zcrx_flowcache::FlowRecord;
use zcrx_kflows::{KernelCounters, KernelFlows, KernelFlowsConfig};

use crate::interface::Iface;

use super::setup::{set_up, SetUp, Wants};
use crate::args::{Config, Direction};
use crate::export::{self, Export};
use crate::print::{print_flows, FlowLine};
use crate::signals;
use crate::totals::{FlowTotals, KEYS_PER_SLOT};

/// How often the map is read for flows that ended.
const READ_EVERY: Duration = Duration::from_secs(1);

/// The capture: attach, drop privileges, confine; read the map until a signal or `-c`; then
/// the flows, the export's report and the counts. Returns the exit code.
pub(crate) fn live_kernel(config: &Config, iface: &Iface) -> Result<i32> {
    let cap = &config.capture;
    let (ingress, egress) = match cap.direction {
        Direction::In => (true, false),
        Direction::Out => (false, true),
        Direction::InOut => (true, true),
    };
    // Idle timeouts and --active-timeout as the ring's table has them.
    let timeouts = config.flows.table.timeouts;
    // One entry per flow and direction: room for --max-flows flows both ways.
    let entries = u32::try_from(config.flows.table.capacity.saturating_mul(2)).unwrap_or(u32::MAX);
    let mut kernel = KernelFlows::attach(
        iface.name(),
        KernelFlowsConfig::new()
            .ingress(ingress)
            .egress(egress)
            .max_entries(entries)
            .timeouts(timeouts)
            .hook(config.flows.kernel_hook),
    )?;
    let SetUp {
        stop, usr1, export, ..
    } = set_up(config, Wants::kernel())?;
    let usr1 = usr1.ok_or_else(|| anyhow!("SIGUSR1 was not caught"))?;
    eprintln!(
        "zcap: listening on {iface} in the kernel: flows counted at {} in a map of {entries} entries (flows x directions); no packet is captured",
        kernel.attached_at()
    );
    let most = KEYS_PER_SLOT * config.flows.table.capacity;
    let mut totals = FlowTotals::new(most);
    let seen = AtomicU64::new(0);
    let mut ended = |records: Vec<FlowRecord>, export: &Option<Mutex<Export>>| {
        for r in &records {
            if let Some(x) = export {
                x.lock().unwrap().record(r, None, None);
            }
            if config.flows.print {
                totals.add(r, None, None);
            }
        }
        if let Some(x) = export {
            x.lock().unwrap().flush();
        }
    };
    let result = std::thread::scope(|s| -> Result<()> {
        let _answering = usr1.answer(s, || {
            let n = seen.load(Ordering::Relaxed);
            signals::tcpdump_counts(n, n, 0)
        });
        let started = Instant::now();
        let mut next_read = started + READ_EVERY;
        let every = config.flows.every;
        let mut next_table = every.map(|e| started + e);
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let c = kernel.counters()?;
            seen.store(c.packets(), Ordering::Relaxed);
            if stop.is_stopped() || cap.count.is_some_and(|n| c.packets() >= n) {
                return Ok(());
            }
            let now = Instant::now();
            if now >= next_read {
                ended(kernel.poll()?, &export);
                next_read += READ_EVERY;
            }
            if let (Some(t), Some(e)) = (next_table, every) {
                if now >= t {
                    let mut lines: Vec<FlowLine> = kernel
                        .active()?
                        .into_iter()
                        .map(|s| (s, None, None, None))
                        .collect();
                    let title = format!("flows after {:.0} s", started.elapsed().as_secs_f64());
                    print_flows(
                        &mut lines,
                        config.flows.json,
                        config.flows.community_id_seed,
                        &title,
                        false,
                    );
                    next_table = Some(t + e);
                }
            }
        }
    });
    if let Err(e) = &result {
        eprintln!("zcap: {e:#}");
    }
    // The flows left, then the counts: a packet counted after the last read still counts.
    let flushed = kernel.flush();
    let counters = kernel.counters();
    let flushed_ok = match flushed {
        Ok(records) => {
            ended(records, &export);
            true
        }
        Err(e) => {
            eprintln!("zcap: {e}");
            false
        }
    };
    if config.flows.print {
        let note = totals.note();
        print_flows(
            &mut totals.into_lines(),
            config.flows.json,
            config.flows.community_id_seed,
            "flows",
            false,
        );
        if let Some(note) = note {
            eprintln!("{note}");
        }
    }
    let export_failed = export::report(export);
    let counters = counters.map_err(|e| anyhow!("{e}"))?;
    if config.count_only {
        println!("{} packets", counters.packets());
    }
    eprint!("{}", final_counts(&counters));
    Ok(if result.is_err() || !flushed_ok || export_failed {
        1
    } else {
        0
    })
}

/// tcpdump's counts (the packets the program saw as captured and received), then what
/// was not counted in a flow.
fn final_counts(c: &KernelCounters) -> String {
    format!(
        "{}{} packets counted in flows, {} not a flow, {} without room in the flow map\n",
        signals::tcpdump_counts(c.packets(), c.packets(), 0),
        c.counted,
        c.not_a_flow,
        c.overflow
    )
}
