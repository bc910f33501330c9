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
use zcrx_capture::StopToken;
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
    let (mut kernel, entries) = attach(config, iface)?;
    let SetUp {
        stop, usr1, export, ..
    } = set_up(config, Wants::kernel(), &[])?;
    let usr1 = usr1.ok_or_else(|| anyhow!("SIGUSR1 was not caught"))?;
    eprintln!(
        "zcap: listening on {iface} in the kernel: flows counted at {} in a map of {entries} entries (flows x directions); no packet is captured",
        kernel.attached_at()
    );
    let most = KEYS_PER_SLOT * config.flows.table.capacity;
    let mut ended = EndedFlows {
        config,
        export,
        totals: FlowTotals::new(most),
    };
    let seen = AtomicU64::new(0);
    let result = std::thread::scope(|s| -> Result<()> {
        let _answering = usr1.answer(s, || {
            let n = seen.load(Ordering::Relaxed);
            signals::tcpdump_counts(n, n, 0)
        });
        read_map(&mut kernel, config, &stop, &seen, &mut ended)
    });
    if let Err(e) = &result {
        eprintln!("zcap: {e:#}");
    }
    end_report(&mut kernel, config, ended, result.is_err())
}

/// Attaches the program at the hooks `-Q` and `--flows-in-kernel-hook` name, with a map
/// sized for `--max-flows`; returns it and the map's entries.
fn attach(config: &Config, iface: &Iface) -> Result<(KernelFlows, u32)> {
    let (ingress, egress) = match config.capture.direction {
        Direction::In => (true, false),
        Direction::Out => (false, true),
        Direction::InOut => (true, true),
    };
    // Idle timeouts and --active-timeout as the ring's table has them.
    let timeouts = config.flows.table.timeouts;
    // One entry per flow and direction: room for --max-flows flows both ways.
    let entries = u32::try_from(config.flows.table.capacity.saturating_mul(2)).unwrap_or(u32::MAX);
    let kernel = KernelFlows::attach(
        iface.name(),
        KernelFlowsConfig::new()
            .ingress(ingress)
            .egress(egress)
            .max_entries(entries)
            .timeouts(timeouts)
            .hook(config.flows.kernel_hook),
    )?;
    Ok((kernel, entries))
}

/// Where the flows that ended go: the IPFIX export and, with `--flows`, the table.
struct EndedFlows<'c> {
    config: &'c Config,
    export: Option<Mutex<Export>>,
    totals: FlowTotals,
}

impl EndedFlows<'_> {
    /// Hands the flows that ended to the export (flushed after) and to `--flows`' table.
    fn take(&mut self, records: Vec<FlowRecord>) {
        for r in &records {
            if let Some(x) = &self.export {
                x.lock().unwrap().record(r, None, None);
            }
            if self.config.flows.print {
                self.totals.add(r, None, None);
            }
        }
        if let Some(x) = &self.export {
            x.lock().unwrap().flush();
        }
    }
}

/// The read loop, until a signal or `-c`: the counters every 50 ms, the flows that ended
/// every second, the flows so far every `--flows-every`.
fn read_map(
    kernel: &mut KernelFlows,
    config: &Config,
    stop: &StopToken,
    seen: &AtomicU64,
    ended: &mut EndedFlows<'_>,
) -> Result<()> {
    let started = Instant::now();
    let mut next_read = started + READ_EVERY;
    let every = config.flows.every;
    let mut next_table = every.map(|e| started + e);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let c = kernel.counters()?;
        seen.store(c.packets(), Ordering::Relaxed);
        if stop.is_stopped() || config.capture.count.is_some_and(|n| c.packets() >= n) {
            return Ok(());
        }
        let now = Instant::now();
        if now >= next_read {
            ended.take(kernel.poll()?);
            next_read += READ_EVERY;
        }
        if let (Some(t), Some(e)) = (next_table, every) {
            if now >= t {
                print_active(kernel, config, started)?;
                next_table = Some(t + e);
            }
        }
    }
}

/// `--flows-every`'s table: the flows in the map now, titled with the seconds since `started`.
fn print_active(kernel: &mut KernelFlows, config: &Config, started: Instant) -> Result<()> {
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
    Ok(())
}

/// The end report: the flows left flushed, `--flows`' table, the export's report and the
/// counts. Returns the exit code (1 if the read loop, the flush or the export failed).
fn end_report(
    kernel: &mut KernelFlows,
    config: &Config,
    mut ended: EndedFlows<'_>,
    read_failed: bool,
) -> Result<i32> {
    // The flows left, then the counts: a packet counted after the last read still counts.
    let flushed = kernel.flush();
    let counters = kernel.counters();
    let flushed_ok = match flushed {
        Ok(records) => {
            ended.take(records);
            true
        }
        Err(e) => {
            eprintln!("zcap: {e}");
            false
        }
    };
    let EndedFlows { export, totals, .. } = ended;
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
    Ok(if read_failed || !flushed_ok || export_failed {
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
