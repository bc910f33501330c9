//! `rxbench capacity`: the search's settings, the sniffers a search compares, and
//! the searches.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::{Failed, Outcome};
use crate::cli::{CapacityArgs, SearchArgs, SearchKind, SnifferArgs, Traffic};
use crate::lab::sniffers::{pinned, zcap_binary, SnifferCmd};
use crate::measure::capacity::{mlr, CapacityConfig, SearchMethod};
use crate::measure::run::{Mode, SnifferSpec, IFACE};
use crate::report::Report;
use crate::sys::last_cpu;

/// The sniffers' ring, KiB (see [`sniffers`]).
const SNIFFER_RING_KIB: u32 = 4096;

/// Every search asked for; what was measured before a failure stays in the report.
pub fn run(args: CapacityArgs, report: &mut Report) -> Result<Outcome, Failed> {
    if !args.loads.is_empty() && args.search.method == SearchKind::Binary {
        return Err(anyhow::anyhow!(
            "capacity --loads: its loads are judged by MLRsearch's rules, not with --method binary"
        )
        .into());
    }
    let modes = match args.modes.as_slice() {
        [] => crate::measure::sweep::default_modes(),
        [None] => Vec::new(),
        named => named
            .iter()
            .map(|m| m.context("capacity: --modes \"\" (none) stands alone"))
            .collect::<Result<_>>()?,
    };
    let mut sniffers = if args.sniffers {
        sniffers(&args.sniffer)?
    } else {
        Vec::new()
    };
    if args.compressed {
        sniffers.extend(compressed_sniffers(&args.sniffer)?);
    }
    if args.names {
        sniffers.extend(flow_sniffers(&args.sniffer)?);
    }
    if args.kernel_flows {
        for s in kernel_flow_sniffers(&args.sniffer)? {
            // `zcap --flows` once, should --names have added it.
            if !sniffers.iter().any(|have| have.name == s.name) {
                sniffers.push(s);
            }
        }
    }
    // Handshakes are offered to sniffers only (the receive modes count UDP datagrams), as
    // frames of their own sizes (the report names them by their mean).
    let sizes = match args.traffic {
        Traffic::Udp => args.sizes,
        Traffic::TlsHandshakes => {
            if !modes.is_empty() || sniffers.is_empty() {
                return Err(anyhow::anyhow!(
                    "capacity --traffic tls-handshakes: for sniffers only (--modes \"\" with --sniffers, --names, --kernel-flows or --compressed)"
                )
                .into());
            }
            let mean =
                crate::lab::handshakes::mean_len(&crate::lab::handshakes::frames(args.flows[0]));
            // The sniffers capture the lab's traffic by its protocol: TCP here.
            for s in &mut sniffers {
                if let Some(filter) = s.cmd.last_mut().filter(|f| *f == "udp") {
                    *filter = "tcp".into();
                }
            }
            vec![mean]
        }
    };
    let mut config = config(
        args.search,
        modes,
        sniffers,
        sizes,
        args.flows,
        &args.losses,
    )?;
    config.traffic = args.traffic;
    config.loads = args.loads;
    let points = report.capacity.insert(Vec::new());
    if let Err(error) = crate::measure::capacity::run(&config, points) {
        // A search stopped before its first point (a signal, a failure) leaves nothing to
        // write.
        return Err(Failed {
            error,
            measured: !points.is_empty(),
        });
    }
    Ok(Outcome::Measured)
}

/// The search's settings (their ranges checked by clap), once root is known.
pub fn config(
    search: SearchArgs,
    modes: Vec<Mode>,
    sniffers: Vec<SnifferSpec>,
    sizes: Vec<usize>,
    flows: Vec<usize>,
    losses_percent: &[f64],
) -> Result<CapacityConfig> {
    let SearchArgs {
        seconds,
        searches,
        steps,
        cpu_dma_latency,
        isolate_rx_cpu,
        hold_cpu_link,
        method,
        trials,
        bound_trials,
        exceed_ratio,
        precision,
    } = search;
    if !zcrx_ring::has_cap_net_raw() {
        bail!("capacity needs root (network namespaces, AF_PACKET, bpf)");
    }
    let trial = std::time::Duration::from_secs_f64(seconds);
    Ok(CapacityConfig {
        modes,
        sniffers,
        sizes,
        flows,
        trial,
        window: crate::measure::capacity::window(trial),
        searches,
        steps,
        method: match method {
            SearchKind::Binary => SearchMethod::Binary,
            SearchKind::Mlr => SearchMethod::Mlr(mlr::Method {
                trials,
                bound_trials,
                exceed_ratio,
                steps,
                precision: precision / 100.0,
            }),
        },
        losses: losses_percent.iter().map(|l| l / 100.0).collect(),
        cpu_dma_latency: cpu_dma_latency.0,
        isolate_rx_cpu,
        hold_cpu_link: hold_cpu_link.0,
        traffic: Traffic::Udp,
        loads: Vec::new(),
    })
}

/// The sniffers a capacity search compares, each placed on the receiving (last) CPU: zcap
/// and tcpdump with the same ring memory, each to /dev/null and to a file. The lab's
/// receiving interface is named once the lab exists: the commands carry [`IFACE`].
///
/// A sniffer is judged by the counts it prints when stopped, after its ring had time to hand
/// over everything (tcpdump's libpcap retires a block after its timeout), so its ring can
/// hide a backlog: the rings are small, a small part of a trial's frames, where a large one
/// would let a sniffer that keeps up with half the rate pass. tcpdump's `--immediate-mode`
/// would shorten its wait, but it moves libpcap to a ring of one slot per frame sized by the
/// snapshot length, which drops most of a burst.
pub fn sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = zcap_binary(args.zcap.clone())?;
    let file = write_to(args)?;
    let mut out = Vec::new();
    for to in ["/dev/null", file.as_str()] {
        for (name, cmd) in [
            ("zcap", SnifferCmd::zcap(&z, IFACE)),
            ("tcpdump", SnifferCmd::tcpdump(IFACE)),
        ] {
            let cmd = cmd.ring_kib(SNIFFER_RING_KIB).write(to).udp();
            out.push(SnifferSpec::new(
                format!("{name} -w {to}"),
                cmd.on_cpu(last_cpu()).build(),
            ));
        }
    }
    Ok(out)
}

/// zcap counting flows, for `capacity --names`: `zcap --flows` beside `zcap --flows --names`
/// (reading each flow's first payload bytes), both writing nothing, on the receiving CPU with
/// the same ring as the other sniffers.
fn flow_sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = zcap_binary(args.zcap.clone())?;
    Ok([&["--flows"][..], &["--flows", "--names"][..]]
        .iter()
        .map(|flags| {
            let cmd = SnifferCmd::zcap(&z, IFACE)
                .ring_kib(SNIFFER_RING_KIB)
                .flags(flags)
                .udp()
                .on_cpu(last_cpu())
                .build();
            SnifferSpec::new(format!("zcap {}", flags.join(" ")), cmd)
        })
        .collect())
}

/// zcap counting flows in the kernel, for `capacity --kernel-flows`: `zcap --flows` on the
/// ring (as `--names` runs it) beside `zcap --flows --flows-in-kernel` at the receiving
/// veth's tcx ingress and at its XDP hook (`--flows-in-kernel-hook xdp`: on the frames the
/// generator redirects to it, before the veth builds an skb), on the receiving CPU. The
/// in-kernel ones have no ring (no `-B`) and take no filter: `-Q in` keeps their count to the
/// frames the generator sends in (their "packets captured" is every packet the program saw,
/// the receiver's own packets out excluded; XDP sees no others).
pub fn kernel_flow_sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = zcap_binary(args.zcap.clone())?;
    let ring = SnifferCmd::zcap(&z, IFACE)
        .ring_kib(SNIFFER_RING_KIB)
        .flags(&["--flows"])
        .udp()
        .on_cpu(last_cpu())
        .build();
    let in_kernel = |extra: &[&str]| {
        let mut flags = vec!["-Q", "in", "--flows", "--flows-in-kernel"];
        flags.extend_from_slice(extra);
        SnifferCmd::zcap(&z, IFACE)
            .flags(&flags)
            .on_cpu(last_cpu())
            .build()
    };
    Ok(vec![
        SnifferSpec::new("zcap --flows", ring),
        SnifferSpec::new("zcap --flows --flows-in-kernel", in_kernel(&[])),
        SnifferSpec::new(
            "zcap --flows --flows-in-kernel --flows-in-kernel-hook xdp",
            in_kernel(&["--flows-in-kernel-hook", "xdp"]),
        ),
    ])
}

/// zcap writing compressed files, for `capacity --compressed`: plain `-w FILE` beside
/// `-w FILE.zst` (zstd level 1), `-w FILE.lz4`, and `-w FIFO` read by `zstd -1` (the pipe a
/// person would otherwise use: `zcap -w - | zstd -1 > FILE.zst`), all on the receiving CPU
/// with the same ring as the other sniffers; each file's size is measured (the compression
/// ratio).
fn compressed_sniffers(args: &SnifferArgs) -> Result<Vec<SnifferSpec>> {
    let z = zcap_binary(args.zcap.clone())?;
    let file = write_to(args)?;
    let cpu = last_cpu();
    let zcap = |to: &str, flags: &[&str]| {
        SnifferCmd::zcap(&z, IFACE)
            .ring_kib(SNIFFER_RING_KIB)
            .flags(flags)
            .write(to)
            .udp()
            .on_cpu(cpu)
            .build()
    };
    let (zst, lz4) = (format!("{file}.zst"), format!("{file}.lz4"));
    let fifo = format!("{file}.fifo");
    let piped = format!("{file}.piped.zst");
    let mut through_zstd = SnifferSpec::new("zcap -w - | zstd -1", zcap(&fifo, &[]));
    through_zstd.output = Some(PathBuf::from(&piped));
    through_zstd.fifo = Some(PathBuf::from(&fifo));
    through_zstd.reader = Some(pinned(
        cpu,
        &[
            "sh".to_string(),
            "-c".to_string(),
            format!("exec zstd -1 -q -c < '{fifo}' > '{piped}'"),
        ],
    ));
    Ok(vec![
        SnifferSpec::new("zcap -w FILE", zcap(&file, &[])),
        SnifferSpec::new(
            "zcap -w FILE.zst (zstd:1)",
            zcap(&zst, &["--compress", "zstd:1"]),
        ),
        SnifferSpec::new("zcap -w FILE.lz4", zcap(&lz4, &[])),
        through_zstd,
    ])
}

/// `--write-to`, as a string for command lines.
fn write_to(args: &SnifferArgs) -> Result<String> {
    Ok(args
        .write_to
        .to_str()
        .context("--write-to: not UTF-8")?
        .to_string())
}
