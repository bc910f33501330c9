//! `rxbench print-file`: zcap and tcpdump printing the same capture to /dev/null, each with
//! -n, -n -v and -n -e, interleaved rounds; with `--from`, the capture is written first.

use anyhow::{Context, Result};

use super::Outcome;
use crate::cli::PrintFileArgs;
use crate::lab::sniffers::zcap_binary;
use crate::measure::print_file::{self, PrintFileReport, PrintFileRun, VARIANTS};
use crate::report::stats::shuffled;
use crate::report::Report;

/// Writes the capture if asked, then `repeat` rounds of every (flags, tool) in an order that
/// changes from round to round.
pub fn run(args: PrintFileArgs, report: &mut Report) -> Result<Outcome> {
    let zcap = zcap_binary(args.zcap)?;
    let pcap = args.pcap.to_str().context("--pcap: not UTF-8")?.to_string();
    if let Some(from) = &args.from {
        let data = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
        let out = std::fs::File::create(&args.pcap).with_context(|| format!("creating {pcap}"))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, out);
        print_file::repeat_capture(&data, args.packets, out)
            .with_context(|| format!("writing {pcap} from {}", from.display()))?;
        eprintln!(
            "print-file: wrote {pcap}: {} packets from {}",
            args.packets,
            from.display()
        );
    }
    let data = std::fs::read(&args.pcap).with_context(|| format!("reading {pcap}"))?;
    let packets = print_file::count_packets(&data)?;
    let bytes = data.len() as u64;
    drop(data);
    let combos: Vec<(&str, &str)> = VARIANTS
        .iter()
        .flat_map(|f| [(*f, "zcap"), (*f, "tcpdump")])
        .collect();
    let mut runs = Vec::new();
    for round in 0..args.repeat {
        for i in shuffled(combos.len(), round) {
            crate::lab::interrupt::check()?;
            let (flags, tool) = combos[i];
            let cmd = print_file::command(tool, &zcap, flags, &pcap);
            eprintln!("print-file: {}, round {}", cmd.join(" "), round + 1);
            let (user_ns, sys_ns, wall_ns) = print_file::run_printer(&cmd, args.tz.as_deref())?;
            runs.push(PrintFileRun {
                tool: tool.to_string(),
                flags: flags.to_string(),
                round,
                user_ns,
                sys_ns,
                wall_ns,
                cpu_ns_per_pkt: (user_ns + sys_ns) as f64 / packets as f64,
            });
        }
    }
    report.print_file = Some(PrintFileReport {
        pcap,
        from: args.from.map(|f| f.display().to_string()),
        packets,
        bytes,
        tz: args.tz,
        runs,
    });
    Ok(Outcome::Measured)
}
