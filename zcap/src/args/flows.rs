//! Flows from the command line: their table, the IPFIX export, `--flows-in-kernel` and what
//! it cannot go with, and `--top`'s view of them.

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use zcrx_flowcache::ipfix::EncoderConfig;
use zcrx_flowcache::{FlowTableConfig, Timeouts};
use zcrx_kflows::Hook;

use super::config::{Flows, Source};
use super::flags::{Args, NamesCase};
use crate::export::ExportConfig;
use crate::interface::Iface;
use crate::kafka::KafkaConfig;

/// What `--flows-in-kernel` cannot go with: anything that needs packets in user space (a
/// file to write, lines to print, names read from payloads, a filter, a full-screen view,
/// PCAP-over-IP), a source that is not one interface, or nothing to show.
pub(super) fn kernel_flows_refusal(args: &Args) -> Option<&'static str> {
    if !args.flows_in_kernel {
        return None;
    }
    let exports = args.exports();
    Some(if args.read.is_some() {
        "counts a live interface's flows: not with -r"
    } else if args.iface.as_deref().is_none_or(|i| Iface::new(i).cooked()) {
        "give one interface with -i (not any)"
    } else if args.immediate_mode {
        "no ring to read: not with --immediate-mode"
    } else if args.write.is_some() || args.print || args.pcap_over_ip.is_some() {
        "no packet reaches zcap: nothing to write (-w), print (--print) or serve (--pcap-over-ip)"
    } else if args.names {
        "no packet reaches zcap: --names reads payloads"
    } else if args.top {
        "--top reads the ring's flow table: use --flows-every"
    } else if args.filter_file.is_some() || !args.filter.is_empty() {
        "the program counts every packet: no filter expression"
    } else if args.sample.is_some_and(|n| n > 1) {
        "the program counts every packet: no --sample"
    } else if args.shards != 1 {
        "one program counts on every CPU: --shards must be 1"
    } else if args.metrics.is_some() {
        "--metrics reads the ring's counters: not with --flows-in-kernel"
    } else if kernel_hook(args) == Hook::Xdp && args.direction.as_deref().is_some_and(|d| d != "in")
    {
        "--flows-in-kernel-hook xdp counts received frames only: -Q in (or no -Q)"
    } else if !(args.flows || exports || args.flows_every.is_some()) {
        "give --flows, --flows-every or --ipfix/--ipfix-file: the flows are all it shows"
    } else {
        return None;
    })
}

/// `--flows-in-kernel-hook` (clap took tcx or xdp only).
pub(super) fn kernel_hook(args: &Args) -> Hook {
    match args.flows_in_kernel_hook.as_deref() {
        Some("xdp") => Hook::Xdp,
        _ => Hook::Tcx,
    }
}

/// `--top` and its flags; what does not go with a full-screen view on standard output.
pub(super) fn top(args: &Args, source: &Source) -> Result<Option<crate::top::TopConfig>> {
    if !args.top {
        if args.top_sort.is_some() || args.top_by.is_some() || args.top_interval.is_some() {
            bail!("--top-sort, --top-by and --top-interval go with --top");
        }
        return Ok(None);
    }
    if matches!(source, Source::Immediate(_)) {
        bail!("--top reads the flow stage's table: not with --immediate-mode");
    }
    if args.write.as_deref() == Some("-") {
        bail!("--top draws on standard output: -w - cannot go there too (-w FILE can)");
    }
    if args.print || args.flows_every.is_some() || args.count_only {
        bail!("--top draws on standard output: --print, --flows-every and --count print there");
    }
    crate::top::config(
        args.top_sort.as_deref().unwrap_or("10s"),
        args.top_by.as_deref().unwrap_or("flow"),
        args.top_interval.unwrap_or(1.0),
    )
    .map(Some)
}

/// The IPFIX export asked for (`None` without `--ipfix`/`--ipfix-file`), its encoder's
/// settings in range.
pub(super) fn export(args: &Args) -> Result<Option<ExportConfig>> {
    let kafka = kafka(args)?;
    if args.ipfix.is_none() && args.ipfix_file.is_none() {
        // goflow2's messages carry the interfaces too.
        let goflow2 = kafka
            .as_ref()
            .is_some_and(|k| k.format == crate::kafka::Format::Goflow2);
        let ifindex = args.ipfix_ifindex.is_some() && !goflow2;
        if args.ipfix_uniflow || ifindex || args.ipfix_source.is_some() {
            bail!("--ipfix-uniflow, --ipfix-ifindex and --ipfix-source shape an export: give --ipfix or --ipfix-file");
        }
        if kafka.is_none() {
            return Ok(None);
        }
    }
    if args.ipfix_source.is_some() && args.ipfix.is_none() {
        bail!("--ipfix-source is where datagrams to --ipfix's collector come from: give --ipfix");
    }
    // clap took both within 1..=MAX_REFRESH_S and 1..=MAX_REFRESH_MESSAGES.
    let (refresh, every) = (args.ipfix_template_refresh, args.ipfix_template_every);
    let encoder = EncoderConfig {
        observation_domain: args.ipfix_domain,
        max_message: args.ipfix_message_size,
        template_refresh_ms: Some(refresh * 1000),
        template_every: Some(every),
    };
    let interfaces = match &args.ipfix_ifindex {
        Some(given) => Some(ifindex(given)?),
        None => None,
    };
    let config = ExportConfig {
        encoder,
        collector: args.ipfix.clone(),
        file: args.ipfix_file.clone(),
        community_id_seed: args.community_id_seed,
        uniflow: args.ipfix_uniflow,
        interfaces,
        // A live capture's interface gives the records its index (resolved when the
        // export opens), unless given.
        interface: args.iface.clone().filter(|i| i != "any"),
        sampling: args.sample.filter(|&n| n > 1),
        source: args.ipfix_source,
        kafka,
    };
    // The layout's templates must fit the message size: said now, not at the first flow.
    config
        .encoder()
        .map_err(|e| anyhow!("--ipfix-message-size: {e}"))?;
    Ok(Some(config))
}

/// `--kafka` and its settings (`None` without it); the broker list checked for form.
fn kafka(args: &Args) -> Result<Option<KafkaConfig>> {
    let Some(brokers) = &args.kafka else {
        let format = args.kafka_format != crate::kafka::Format::Json;
        if args.kafka_sensor.is_some() || args.kafka_config.is_some() || format {
            bail!("--kafka-sensor, --kafka-config and --kafka-format go with --kafka");
        }
        return Ok(None);
    };
    for b in brokers.split(',') {
        let port = b
            .rsplit_once(':')
            .and_then(|(h, p)| (!h.is_empty()).then_some(p));
        if port
            .and_then(|p| p.parse::<u16>().ok())
            .is_none_or(|p| p == 0)
        {
            bail!("--kafka {brokers:?}: HOST:PORT[,HOST:PORT...] (e.g. 127.0.0.1:9092)");
        }
    }
    if args.kafka_topic.is_empty() || args.kafka_topic.len() > 249 {
        bail!("--kafka-topic: 1 to 249 characters");
    }
    let sensor = match &args.kafka_sensor {
        Some(s) => s.clone(),
        None => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default(),
    };
    // Read by the relay, before it is confined: it must be there now.
    if let Some(p) = &args.kafka_config {
        std::fs::metadata(p).map_err(|e| anyhow!("--kafka-config {}: {e}", p.display()))?;
    }
    Ok(Some(KafkaConfig {
        brokers: brokers.clone(),
        topic: args.kafka_topic.clone(),
        compression: args.kafka_compression.clone(),
        sensor,
        format: args.kafka_format,
        properties: args
            .kafka_config
            .as_ref()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
    }))
}

/// `--ipfix-ifindex IN[:OUT]`.
fn ifindex(given: &str) -> Result<(u32, u32)> {
    let number = |s: &str| {
        s.parse::<u32>().map_err(|_| {
            anyhow!("--ipfix-ifindex {given:?}: IN[:OUT], interface indexes 0..=4294967295")
        })
    };
    match given.split_once(':') {
        Some((i, o)) => Ok((number(i)?, number(o)?)),
        None => Ok((number(given)?, 0)),
    }
}

/// The flow table for `--flows` and flow export: `--max-flows` slots, default idle timeouts,
/// the active timeout asked for, its memory on transparent huge pages.
fn flow_table(args: &Args) -> FlowTableConfig {
    let mut timeouts = Timeouts::default();
    let exports = args.exports();
    // --top's rates come from a flow's counters, which an active timeout's report resets:
    // it applies only to what is reported (--flows, the export).
    let reported = !args.top || args.flows || exports;
    timeouts.active =
        (args.active_timeout > 0 && reported).then(|| Duration::from_secs(args.active_timeout));
    // The flows shown (--flows, --top) or exported (--ipfix) carry their TCP state: the
    // stage's table follows it.
    let states = args.flows || exports || args.top;
    FlowTableConfig::with_capacity(args.max_flows as usize)
        .with_timeouts(timeouts)
        .with_prepare_memory(Some(zcrx_ring::advise_huge_pages))
        .with_tcp_state(states)
}

/// The flows' settings: their table, how they are shown, read and counted.
pub(super) fn flows(args: &Args) -> Flows {
    Flows {
        print: args.flows,
        json: args.json,
        every: args.flows_every.map(Duration::from_secs),
        table: flow_table(args),
        community_id_seed: args.community_id_seed,
        names: args.names,
        names_stats: args.names && args.names_stats,
        names_lower: args.names_case == NamesCase::Lower,
        in_kernel: args.flows_in_kernel,
        kernel_hook: kernel_hook(args),
    }
}
