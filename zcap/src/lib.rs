//! zcap: a tcpdump-like zero-copy sniffer. Live capture through the zcrx pipeline (a
//! TPACKET_V3 ring, header-only stage, consumer writing straight from the ring), or offline
//! from a pcap/pcapng file; writes pcap or pcapng; kernel BPF filters compiled by libpcap.
//!
//! The binary's `main` calls [`main`] here; the library exists so that zcap's fuzz target and
//! tests use the very printers, dissectors and names book the binary runs. Its public
//! modules are those: [`mod@print`] (packet lines, JSON, flow tables) over [`dissect`]
//! (tcpdump's protocol printers, by layer), [`names`] (`--names`' book of what each flow
//! is), [`record`] (one packet on its way to a sink) and [`interface`] (interface names by
//! index, the capture's interface resolved once). Nothing else is promised to callers.
//!
//! The modules, from the top down, each importing only those listed after it (`cargo test
//! --test layers print_the_layers -- --nocapture` prints the layers):
//!
//! - `mode`: the four ways to capture (`live`: TPACKET_V3 rings, fanout shards, the flow
//!   stage; `immediate`: `--immediate-mode`, a TPACKET_V2 ring; `offline`: `-r`, a file
//!   through the same stage; `kflows`: `--flows-in-kernel`, flows counted by an eBPF program
//!   at tcx or XDP, no ring) over one set-up (`mode::setup`: signals, listeners bound,
//!   privileges dropped, exports opened, the terminal prepared, the sandbox settled, the
//!   listener served, in that order);
//! - `sandbox` (capabilities dropped, Landlock and seccomp once set up);
//! - `args`: the command line, validated once into a typed `Config` per subsystem;
//! - the sinks: `output` (where packets go, its counters, the writing consumer), then
//!   `pcap_over_ip` (`--pcap-over-ip`, plain or TLS) and `rotate` (`-w` files,
//!   `-C`/`-G`/`-W`/`-z`);
//! - `compress` (compressed files and input), `export` (IPFIX to a collector or a file),
//!   `hooks` (the `-z` runner, a process of its own started before the sandbox), `top`
//!   (`--top`: the full-screen view of the flows), `totals` (`--flows`' final table);
//! - `metrics` (`--metrics`, its `--web-config`, the event counters) and `print` (packet
//!   lines, JSON, flow tables) over `dissect` (tcpdump's protocol printers, by layer);
//! - `merge` (several shards in time order) and `record` (one packet on its way to a sink);
//! - leaves: `interface` (interface names; the capture's interface resolved once),
//!   `names` (`--names`' book), `signals` (SIGINT, SIGTERM, SIGUSR1), `system` (privileges,
//!   the interface list, the scheduler, local time), `tls` (the endpoints' rustls
//!   configurations from PEM files).

mod args;
#[allow(unsafe_code)]
mod attacks;
mod compress;
mod confine;
pub mod dissect;
mod export;
mod hooks;
pub mod interface;
mod kafka;
mod listeners;
mod merge;
mod metrics;
mod mode;
pub mod names;
mod output;
mod pcap_over_ip;
pub mod print;
mod privsep;
pub mod record;
mod rotate;
mod sandbox;
mod secrets;
mod signals;
#[allow(unsafe_code)]
mod system;
mod tls;
mod top;
mod totals;

use anyhow::{anyhow, Result};

use args::Command;

/// zcap's command line, as the binary runs it: parses the arguments, applies the
/// process-wide settings (`--rt-priority`, `--cpu-dma-latency`), runs the mode and reports
/// the error. Returns the process's exit code. Also the entry of the helper processes zcap
/// starts of itself (the `-z` hook runner, `--top`'s reader of socket owners).
pub fn main() -> i32 {
    // The -z hook runner is zcap started again by a capture (`hooks`), never by a person.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == hooks::RUNNER_FLAG) {
        let rest: Vec<String> = argv[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return hooks::runner_main(&rest);
    }
    // The --kafka relay: zcap started again by a capture (`kafka`), never by a person.
    #[cfg(feature = "kafka")]
    if argv.get(1).is_some_and(|a| a == kafka::RELAY_FLAG) {
        let rest: Vec<String> = argv[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return kafka::relay::relay_main(&rest);
    }
    // --top's reader of socket owners: zcap started again by the view, never by a person.
    if argv.get(1).is_some_and(|a| a == top::READER_FLAG) {
        return top::reader_main();
    }
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("zcap: {}", report(&e));
            // A run that failed after its relay started still says what became of the
            // records it handed over (nothing if the export reported already).
            kafka::finish();
            1
        }
    }
}

/// The error and its causes, each said once: a cause whose text the message already holds
/// (library errors often print their source themselves) is not repeated.
fn report(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

fn run() -> Result<i32> {
    let config = match args::parse()? {
        Command::Generate(kind) => {
            return match args::generate(&kind, &mut std::io::stdout().lock()) {
                // `zcap --generate man | head` is not an error.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(anyhow!("--generate {kind}: {e}"))
                }
                _ => Ok(0),
            };
        }
        Command::List => {
            system::list_interfaces()?;
            return Ok(0);
        }
        // On standard error, as tcpdump writes both lists.
        Command::ListLinkTypes(iface) => {
            eprintln!("Data link types for {iface} (use option -y to set):");
            for (name, what) in args::link_types(&iface) {
                eprintln!("  {name} ({what})");
            }
            return Ok(0);
        }
        Command::ListStampTypes(iface) => {
            eprintln!("Time stamp types for {iface} (use option -j to set):");
            eprintln!("  host (Host)");
            return Ok(0);
        }
        Command::DumpFilter(d) => {
            let linktype = match &d.source {
                Some(args::Source::File(path)) => mode::file_linktype(path)?,
                Some(args::Source::Live(i) | args::Source::Immediate(i)) => {
                    interface::Iface::new(i).filter_linktype()
                }
                None => interface::LINKTYPE_ETHERNET,
            };
            let text =
                zcrx_capture::filter::dump(&d.expr, linktype, d.optimize, d.level, d.snaplen)?;
            print!("{text}");
            return Ok(0);
        }
        Command::Capture(config) => config,
    };
    if let Some(prio) = config.capture.rt_priority {
        // Before any thread starts (they inherit it) and before -Z drops the capability.
        system::realtime(prio)?;
    }
    // Opened before -Z drops root; the request stands until zcap exits.
    let _cpu_latency = match config.capture.cpu_dma_latency {
        Some(us) => Some(zcrx_ring::hold_cpu_dma_latency(us).map_err(|e| {
            anyhow!("--cpu-dma-latency {us}: /dev/cpu_dma_latency: {e} (needs root)")
        })?),
        None => None,
    };
    if config.top.is_some() && !top::on_a_terminal() {
        return Ok(2);
    }
    mode::run(&config)
}
