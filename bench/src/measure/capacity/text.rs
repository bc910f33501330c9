//! The capacity searches as tables: per size (at the main flow count), the ring's ratios, the
//! flow-count sweep with its verdicts, and where everything ran.

use std::fmt::Write as _;

use super::CapacityPoint;
use crate::report::stats::median;
use crate::report::text::{dedup, table};

/// The searches of one mode, size, flow count and loss allowed, summed up.
pub(super) struct Summary {
    pub(super) median: f64,
    min: f64,
    max: f64,
    searches: usize,
    all_at_top: bool,
    rx_cpu_ns: f64,
    top: f64,
    /// Trials per search (median).
    trials: f64,
}

pub(super) fn summary(
    c: &[CapacityPoint],
    mode: &str,
    size: usize,
    flows: usize,
    loss: f64,
) -> Option<Summary> {
    let ps: Vec<&CapacityPoint> = c
        .iter()
        .filter(|p| {
            p.mode == mode && p.frame_bytes == size && p.flows == flows && p.loss_allowed == loss
        })
        .collect();
    if ps.is_empty() {
        return None;
    }
    let rates: Vec<f64> = ps.iter().map(|p| p.rate_mpps).collect();
    Some(Summary {
        median: median(rates.clone()),
        min: rates.iter().cloned().fold(f64::MAX, f64::min),
        max: rates.iter().cloned().fold(0.0, f64::max),
        searches: ps.len(),
        all_at_top: ps.iter().all(|p| p.at_top),
        rx_cpu_ns: median(ps.iter().map(|p| p.rx_cpu_ns_per_delivered).collect()),
        top: median(ps.iter().map(|p| p.top_mpps).collect()),
        trials: median(ps.iter().map(|p| p.trials.len() as f64).collect()),
    })
}

/// The flow count most searches ran at (the main table's).
pub(super) fn main_flows(c: &[CapacityPoint]) -> usize {
    let counts = dedup(c.iter().map(|p| p.flows));
    counts
        .iter()
        .copied()
        .max_by_key(|&f| (c.iter().filter(|p| p.flows == f).count(), f))
        .unwrap_or(0)
}

/// A size as the tables name it: "imix" for IMIX's points, else the bytes.
pub(super) fn size_name(c: &[CapacityPoint], size: usize) -> String {
    if c.iter().any(|p| p.frame_bytes == size && p.imix) {
        "imix".into()
    } else {
        size.to_string()
    }
}

/// A size in prose: "64 B", or "IMIX".
pub(super) fn size_words(c: &[CapacityPoint], size: usize) -> String {
    match size_name(c, size).as_str() {
        "imix" => "IMIX".into(),
        n => format!("{n} B"),
    }
}

/// A size in a file name: "64B", or "imix".
pub(super) fn size_file(c: &[CapacityPoint], size: usize) -> String {
    match size_name(c, size).as_str() {
        "imix" => "imix".into(),
        n => format!("{n}B"),
    }
}

/// Bytes per frame at a size (IMIX: its exact mean), for Gbit/s.
fn frame_bytes(c: &[CapacityPoint], size: usize) -> f64 {
    if c.iter().any(|p| p.frame_bytes == size && p.imix) {
        crate::lab::generator::imix_mean_bytes()
    } else {
        size as f64
    }
}

fn loss_name(loss: f64) -> String {
    if loss == 0.0 {
        "0".into()
    } else {
        format!("{}%", loss * 100.0)
    }
}

/// Every table of the capacity searches.
pub fn text(c: &[CapacityPoint], markdown: bool) -> String {
    let mut text = String::new();
    let flows = main_flows(c);
    let _ = writeln!(
        text,
        "\ncapacity (RFC 2544 26.1), {flows} flows: the highest rate that passed with no loss (and with at most the loss shown; the line \"search:\" below says how a rate passes), medians over the searches, spread = (max - min) / median; ceiling = baseline-tx (nothing receives, the receiving veth drops nothing):\n"
    );
    let losses = dedup(c.iter().map(|p| p.loss_allowed.to_bits()));
    let mut rows = Vec::new();
    for size in dedup(c.iter().map(|p| p.frame_bytes)) {
        for mode in dedup(c.iter().map(|p| p.mode.clone())) {
            for &bits in &losses {
                let loss = f64::from_bits(bits);
                let Some(s) = summary(c, &mode, size, flows, loss) else {
                    continue;
                };
                let of = |other: &str| {
                    summary(c, other, size, flows, loss)
                        .filter(|o| o.median > 0.0)
                        .map_or("-".to_string(), |o| format!("{:.2}x", s.median / o.median))
                };
                rows.push(vec![
                    size_name(c, size),
                    mode.clone(),
                    loss_name(loss),
                    format!("{:.3}{}", s.median, if s.all_at_top { "+" } else { "" }),
                    format!("{:.2}", s.median * frame_bytes(c, size) * 8.0 / 1e3),
                    format!("{:.3}..{:.3}", s.min, s.max),
                    spread(&s),
                    of("baseline-tx"),
                    of("sockets-recvmmsg"),
                    format!("{:.0}", s.rx_cpu_ns),
                    format!("{:.2}", s.top),
                    s.searches.to_string(),
                    format!("{:.0}", s.trials),
                ]);
            }
        }
    }
    text.push_str(&table(
        &[
            "size",
            "mode",
            "loss",
            "Mpps",
            "Gbit/s",
            "min..max",
            "spread",
            "of ceiling",
            "vs recvmmsg",
            "rx cpu ns/delivered",
            "generator top Mpps",
            "searches",
            "trials/search",
        ],
        &rows,
        markdown,
    ));
    text.push_str(
        "(+: the generator's top rate passed: the mode takes at least that; 0: it lost frames even at 0.02 Mpps; Gbit/s: frames without FCS, imix 7:4:1 of 64, 576 and 1500 B, 354.3 B a frame)\n",
    );
    method(c, &mut text);
    ring_ratios(c, flows, &mut text);
    written(c, flows, markdown, &mut text);
    sweep(c, markdown, &mut text);
    placement(c, &mut text);
    text
}

/// The searches' spread: (max - min) / median, percent ("-" for one search or a median of 0).
fn spread(s: &Summary) -> String {
    if s.searches < 2 || s.median <= 0.0 {
        "-".into()
    } else {
        format!("{:.0}%", (s.max - s.min) / s.median * 100.0)
    }
}

/// How the searches ran, and whether any search's higher loss ended below its lower one.
fn method(c: &[CapacityPoint], text: &mut String) {
    for m in dedup(c.iter().map(|p| p.method.clone())) {
        let ps: Vec<&CapacityPoint> = c.iter().filter(|p| p.method == m).collect();
        let loads: usize = ps
            .iter()
            .filter(|p| !p.trials_shared)
            .map(|p| p.loads.len())
            .sum();
        let trials: usize = ps.iter().map(|p| p.own_trials().len()).sum();
        let searches = ps.iter().filter(|p| !p.trials_shared).count();
        let how = if m == "mlr" {
            let p = ps[0];
            format!(
                "IETF BMWG's MLRsearch: up to {} trials a load (up to {} at an upper bound), a load passes a loss when at most {} of its trials lost more (exceed ratio {}), one search for every loss; {searches} searches, {loads} loads, {trials} trials",
                p.trials_per_load,
                p.bound_trials,
                (p.exceed_ratio * p.trials_per_load as f64 + 1e-9).floor(),
                p.exceed_ratio
            )
        } else if m == "fixed" {
            let p = ps[0];
            let at: Vec<String> = p
                .loads
                .iter()
                .map(|l| format!("{:.3}", l.load_mpps))
                .collect();
            format!(
                "no search: {} trials at each of the loads {} Mpps (--loads), a load passing a loss when at most {} of its trials lost more; the rate is the highest load that passed below the lowest that failed; {searches} runs, {trials} trials",
                p.trials_per_load,
                at.join(", "),
                (p.exceed_ratio * p.trials_per_load as f64 + 1e-9).floor(),
            )
        } else {
            format!(
                "a binary search per loss (RFC 2544), a trial a rate, a second after a sporadic loss; {searches} searches, {trials} trials"
            )
        };
        let _ = writeln!(text, "search: {how}");
    }
    // The same mode, size, flows and search: a higher loss allowed never reads lower.
    let mut crossed = 0;
    let mut pairs = 0;
    for a in c {
        for b in c.iter().filter(|b| {
            b.mode == a.mode
                && b.frame_bytes == a.frame_bytes
                && b.flows == a.flows
                && b.search == a.search
                && b.loss_allowed > a.loss_allowed
        }) {
            pairs += 1;
            crossed += usize::from(b.rate_mpps < a.rate_mpps);
        }
    }
    if pairs > 0 {
        let _ = writeln!(
            text,
            "a higher loss allowed read a lower rate in {crossed} of {pairs} pairs of one search"
        );
    }
}

/// ring-zerocopy's zero-loss rate over every other receiving mode's, per size.
fn ring_ratios(c: &[CapacityPoint], flows: usize, text: &mut String) {
    for size in dedup(c.iter().map(|p| p.frame_bytes)) {
        let Some(ring) = summary(c, "ring-zerocopy", size, flows, 0.0) else {
            continue;
        };
        let others: Vec<String> = dedup(c.iter().map(|p| p.mode.clone()))
            .into_iter()
            .filter(|m| m != "ring-zerocopy")
            .filter_map(|m| {
                let o = summary(c, &m, size, flows, 0.0)?;
                Some(if o.median > 0.0 {
                    format!("{:.2}x {m}", ring.median / o.median)
                } else {
                    format!("{m} 0")
                })
            })
            .collect();
        if !others.is_empty() {
            let _ = writeln!(
                text,
                "ring-zerocopy's zero-loss rate at {} over: {}",
                size_words(c, size),
                others.join(", ")
            );
        }
    }
}

/// The pcap bytes a trial's captured packets make (the 24-byte file header, then a 16-byte
/// record header and the frame for each).
fn pcap_bytes(t: &crate::measure::run::Trial) -> f64 {
    24.0 + t.delivered as f64 * (16 + t.frame_bytes) as f64
}

/// The sniffers that wrote files: their zero-loss rate beside the compression ratio of what
/// they wrote (pcap bytes over file bytes, median over their trials).
fn written(c: &[CapacityPoint], flows: usize, markdown: bool, text: &mut String) {
    let mut rows = Vec::new();
    for size in dedup(c.iter().map(|p| p.frame_bytes)) {
        for mode in dedup(c.iter().map(|p| p.mode.clone())) {
            let ratios: Vec<f64> = c
                .iter()
                .filter(|p| p.mode == mode && p.frame_bytes == size && p.flows == flows)
                .flat_map(|p| p.own_trials())
                .filter_map(|t| {
                    let bytes = t.written_bytes.filter(|&b| b > 0 && t.delivered > 0)?;
                    Some(pcap_bytes(t) / bytes as f64)
                })
                .collect();
            if ratios.is_empty() {
                continue;
            }
            let zero = summary(c, &mode, size, flows, 0.0).map_or(0.0, |s| s.median);
            rows.push(vec![
                size.to_string(),
                mode.clone(),
                format!("{zero:.3}"),
                format!("{:.2}", median(ratios.clone())),
                format!(
                    "{:.2}..{:.2}",
                    ratios.iter().cloned().fold(f64::MAX, f64::min),
                    ratios.iter().cloned().fold(0.0, f64::max)
                ),
                ratios.len().to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        text,
        "\nsniffers writing files, {flows} flows: zero-loss rate, and the file's compression ratio (pcap bytes of the packets captured / bytes written; 1.00 uncompressed), over every trial:\n"
    );
    text.push_str(&table(
        &[
            "size",
            "sniffer",
            "zero-loss Mpps",
            "ratio",
            "min..max",
            "trials",
        ],
        &rows,
        markdown,
    ));
}

/// The zero-loss rate over flow counts (sizes searched at more than one), and where each
/// socket mode's rate halves.
fn sweep(c: &[CapacityPoint], markdown: bool, text: &mut String) {
    for size in dedup(c.iter().map(|p| p.frame_bytes)) {
        let mut counts: Vec<usize> = dedup(
            c.iter()
                .filter(|p| p.frame_bytes == size && p.loss_allowed == 0.0)
                .map(|p| p.flows),
        );
        counts.sort_unstable();
        if counts.len() < 2 {
            continue;
        }
        let _ = writeln!(
            text,
            "\nzero-loss rate against flow count (a socket per flow in socket modes), {}, Mpps, medians (min..max):\n",
            size_words(c, size)
        );
        let modes = dedup(
            c.iter()
                .filter(|p| p.frame_bytes == size)
                .map(|p| p.mode.clone()),
        );
        let mut rows = Vec::new();
        let mut verdicts = Vec::new();
        for mode in &modes {
            let by_flows: Vec<(usize, Option<Summary>)> = counts
                .iter()
                .map(|&f| (f, summary(c, mode, size, f, 0.0)))
                .collect();
            if by_flows.iter().filter(|(_, s)| s.is_some()).count() < 2 {
                continue;
            }
            let mut row = vec![mode.clone()];
            row.extend(by_flows.iter().map(|(_, s)| {
                s.as_ref().map_or("-".into(), |s| {
                    format!("{:.3} ({:.3}..{:.3})", s.median, s.min, s.max)
                })
            }));
            rows.push(row);
            let known: Vec<(usize, f64)> = by_flows
                .iter()
                .filter_map(|(f, s)| Some((*f, s.as_ref()?.median)))
                .collect();
            verdicts.push(verdict(mode, &known));
        }
        let header: Vec<String> = std::iter::once("mode".to_string())
            .chain(counts.iter().map(|f| format!("{f} flows")))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        text.push_str(&table(&header, &rows, markdown));
        for v in verdicts {
            let _ = writeln!(text, "{v}");
        }
    }
}

/// Where `mode`'s zero-loss rate (by flow count, ascending) first falls to half its best at
/// a higher flow count; and, for the ring, its rate at the most flows against 16.
fn verdict(mode: &str, by_flows: &[(usize, f64)]) -> String {
    let (best_at, best) = by_flows
        .iter()
        .copied()
        .fold((0, 0.0), |b, p| if p.1 > b.1 { p } else { b });
    let halved = by_flows
        .iter()
        .find(|&&(f, r)| f > best_at && r <= best / 2.0);
    let mut v = match halved {
        Some((f, r)) => format!(
            "{mode}: best {best:.3} Mpps at {best_at} flows; half or less from {f} flows ({r:.3})"
        ),
        None => format!("{mode}: best {best:.3} Mpps at {best_at} flows; never half of it above"),
    };
    let at = |flows: usize| by_flows.iter().find(|p| p.0 == flows).map(|p| p.1);
    if let (Some(r16), Some(&(most, rmost))) = (at(16), by_flows.last()) {
        if most > 16 && r16 > 0.0 {
            let change = (rmost / r16 - 1.0) * 100.0;
            let _ = write!(
                v,
                "; at {most} flows {change:+.1}% of its rate at 16 ({})",
                if change.abs() <= 10.0 {
                    "within 10%"
                } else {
                    "not within 10%"
                }
            );
        }
    }
    v
}

/// Which CPU ran what, over every trial, and the hypervisor's steal time.
fn placement(c: &[CapacityPoint], text: &mut String) {
    let trials: Vec<&crate::measure::run::Trial> = c.iter().flat_map(|p| p.own_trials()).collect();
    if trials.is_empty() {
        return;
    }
    let cpus = |it: &mut dyn Iterator<Item = Option<usize>>| {
        let mut v: Vec<String> = dedup(it.map(|c| c.map_or("?".into(), |c| c.to_string())));
        v.sort();
        v.join(",")
    };
    let generator = cpus(&mut trials.iter().map(|t| t.generator_cpu));
    let napi = cpus(&mut trials.iter().flat_map(|t| t.napi_cpus.iter().copied()));
    let receivers = cpus(
        &mut trials
            .iter()
            .flat_map(|t| t.receiver_cpus.iter().map(|&c| Some(c))),
    );
    let steal: Vec<f64> = trials.iter().map(|t| t.steal_ms).collect();
    let stolen = steal.iter().filter(|&&s| s > 0.0).count();
    let _ = writeln!(
        text,
        "\nplacement, read back after every trial (/proc/.../stat field 39): generator on CPU {generator}; receiving NAPI thread on CPU {napi}; receivers on CPU {receivers}. Steal time (the hypervisor's): {stolen} of {} trials saw some, at most {:.0} ms, median {:.0} ms",
        trials.len(),
        steal.iter().cloned().fold(0.0, f64::max),
        median(steal),
    );
    if let Some(line) = link_line(&trials) {
        let _ = writeln!(text, "{line}");
    }
    let held = dedup(c.iter().map(|p| match p.cpu_dma_latency_us {
        Some(0) => "held at 0 µs (idle CPUs poll, never halt)".to_string(),
        Some(us) => format!("held at {us} µs"),
        None => "not held (idle CPUs may halt)".to_string(),
    }));
    let _ = writeln!(text, "/dev/cpu_dma_latency: {}", held.join("; "));
    let isolated = dedup(c.iter().map(|p| match p.rx_cpu_tasks_moved {
        Some(n) => format!(
            "kept for the receivers ({n} other tasks moved off it for the searches, their CPU sets restored after)"
        ),
        None => "shared with whatever else ran there".to_string(),
    }));
    let _ = writeln!(text, "receiving CPU: {}", isolated.join("; "));
}

/// The CPUs' link over the trials that probed it: the shortest round trip, how many trials
/// began near it, how many crossed between near and far during the trial, and the time
/// from the first probe to each trial's start (the probes and any wait), summed.
fn link_line(trials: &[&crate::measure::run::Trial]) -> Option<String> {
    let links: Vec<&crate::lab::cpulink::Link> =
        trials.iter().filter_map(|t| t.cpu_link.as_ref()).collect();
    if links.is_empty() {
        return None;
    }
    let shortest = links
        .iter()
        .flat_map(|l| [l.before_ns, l.after_ns])
        .fold(f64::INFINITY, f64::min);
    let near = |ns: f64| crate::lab::cpulink::is_near(ns, shortest);
    let began_near = links.iter().filter(|l| near(l.before_ns)).count();
    let crossed = links
        .iter()
        .filter(|l| near(l.before_ns) != near(l.after_ns))
        .count();
    let far: Vec<f64> = links
        .iter()
        .flat_map(|l| [l.before_ns, l.after_ns])
        .filter(|&ns| !near(ns))
        .collect();
    let waited_s: f64 = links.iter().map(|l| l.waited_ms).sum::<f64>() / 1e3;
    let modes = dedup(trials.iter().map(|t| t.mode.as_str()));
    let cost = |mode: &str, want_near: bool| {
        let ns: Vec<f64> = trials
            .iter()
            .filter(|t| t.mode == mode && t.offered_mpps >= COST_FROM_MPPS)
            .filter_map(|t| {
                let l = t.cpu_link.as_ref()?;
                let state = near(l.before_ns);
                (state == near(l.after_ns) && state == want_near).then_some(t.napi_ns_per_frame?)
            })
            .collect();
        match ns.len() {
            0 => "-".to_string(),
            n => format!("{:.0} ({n})", median(ns)),
        }
    };
    let by_mode: Vec<String> = modes
        .iter()
        .map(|m| format!("{m} {} / {}", cost(m, true), cost(m, false)))
        .collect();
    Some(format!(
        "CPU link (a cache line's round trip between the generator's CPU and the receiving CPU, before and after each trial): shortest {shortest:.0} ns; {began_near} of {} trials began near (within {}x of it){}; {crossed} crossed during the trial; {waited_s:.1} s waited for the near state",
        links.len(),
        crate::lab::cpulink::NEAR_FACTOR,
        if far.is_empty() {
            String::new()
        } else {
            format!(", far reads median {:.0} ns", median(far))
        },
    ) + &format!(
        "\n  the receiving veth's NAPI threads' ns per frame (schedstat), median (trials) of the trials at {COST_FROM_MPPS} Mpps and above that began and ended near / far: {}",
        by_mode.join("; ")
    ))
}

/// The offered rate from which trials show the receive path's cost per frame (below it the
/// NAPI thread sleeps between frames, and its wake-ups weigh on each).
const COST_FROM_MPPS: f64 = 0.8;

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_verdict_finds_where_the_rate_halves_and_the_rings_flatness() {
        let v = verdict(
            "sockets-recvmsg",
            &[(1, 0.4), (16, 0.3), (256, 0.19), (4096, 0.1)],
        );
        assert_eq!(
            v,
            "sockets-recvmsg: best 0.400 Mpps at 1 flows; half or less from 256 flows (0.190); at 4096 flows -66.7% of its rate at 16 (not within 10%)"
        );
        let v = verdict("ring-zerocopy", &[(1, 0.9), (16, 1.0), (4096, 0.95)]);
        assert_eq!(
            v,
            "ring-zerocopy: best 1.000 Mpps at 16 flows; never half of it above; at 4096 flows -5.0% of its rate at 16 (within 10%)"
        );
    }

    /// IMIX's points are named "imix", their Gbit/s from IMIX's exact mean frame; the fixed
    /// sizes' from their bytes.
    #[test]
    fn imix_is_named_and_its_gbits_come_from_its_mean_frame() {
        let p = |frame_bytes: usize, imix: bool| CapacityPoint {
            mode: "ring-zerocopy".into(),
            frame_bytes,
            flows: 256,
            search: 0,
            loss_allowed: 0.0,
            rate_mpps: 1.0,
            top_mpps: 6.0,
            at_top: false,
            rx_cpu_ns_per_delivered: 900.0,
            trials: Vec::new(),
            method: "mlr".into(),
            trials_per_load: 3,
            bound_trials: 7,
            exceed_ratio: 0.5,
            loads: Vec::new(),
            trials_shared: false,
            cpu_dma_latency_us: Some(0),
            rx_cpu_tasks_moved: Some(40),
            imix,
        };
        let c = [p(64, false), p(super::super::IMIX_FRAME_BYTES, true)];
        assert_eq!(size_name(&c, 64), "64");
        assert_eq!(size_name(&c, 354), "imix");
        assert_eq!(
            (size_words(&c, 354), size_file(&c, 354)),
            ("IMIX".into(), "imix".into())
        );
        let t = text(&c, false);
        // 1 Mpps of 64 B: 0.51 Gbit/s; of IMIX (4252 B per 12 frames): 2.83 Gbit/s.
        let row = |name: &str| {
            t.lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{t}"))
                .split_whitespace()
                .nth(4)
                .unwrap()
                .to_string()
        };
        assert_eq!(row("64"), "0.51");
        assert_eq!(row("imix"), "2.83");
    }

    #[test]
    fn the_main_table_is_at_the_flow_count_most_searched() {
        let p = |flows: usize| CapacityPoint {
            mode: "ring-zerocopy".into(),
            frame_bytes: 64,
            flows,
            search: 0,
            loss_allowed: 0.0,
            rate_mpps: 1.0,
            top_mpps: 6.0,
            at_top: false,
            rx_cpu_ns_per_delivered: 900.0,
            trials: Vec::new(),
            method: "mlr".into(),
            trials_per_load: 3,
            bound_trials: 7,
            exceed_ratio: 0.5,
            loads: Vec::new(),
            trials_shared: false,
            cpu_dma_latency_us: Some(0),
            rx_cpu_tasks_moved: Some(40),
            imix: false,
        };
        assert_eq!(main_flows(&[p(16), p(256), p(256)]), 256);
        assert_eq!(main_flows(&[]), 0);
        let t = text(&[p(16), p(256), p(256)], false);
        assert!(t.contains("capacity (RFC 2544 26.1), 256 flows"), "{t}");
        assert!(t.contains("16 flows") && t.contains("256 flows"), "{t}");
    }

    #[test]
    fn the_link_line_counts_the_states_and_each_modes_cost_in_them() {
        let trial = |mode: &str, mpps: f64, before_ns: f64, after_ns: f64, napi: f64| {
            let mut t = super::super::test::t(mpps, 1000, 0);
            t.mode = mode.into();
            t.napi_ns_per_frame = Some(napi);
            t.cpu_link = Some(crate::lab::cpulink::Link {
                before_ns,
                after_ns,
                waited_ms: 500.0,
            });
            t
        };
        let ts = [
            trial("ring-zerocopy", 1.0, 60.0, 62.0, 600.0),
            trial("ring-zerocopy", 1.2, 64.0, 61.0, 700.0),
            trial("ring-zerocopy", 1.1, 320.0, 330.0, 1000.0),
            // Crossed: in neither state's cost.
            trial("ring-zerocopy", 1.1, 61.0, 330.0, 5000.0),
            // Below the rate the cost is read from.
            trial("baseline-tx", 0.5, 60.0, 60.0, 2000.0),
            trial("baseline-tx", 2.0, 300.0, 310.0, 700.0),
        ];
        let refs: Vec<&crate::measure::run::Trial> = ts.iter().collect();
        let line = link_line(&refs).expect("trials with a link");
        assert!(
            line.contains("shortest 60 ns; 4 of 6 trials began near"),
            "{line}"
        );
        assert!(
            line.contains("far reads median 320 ns; 1 crossed"),
            "{line}"
        );
        assert!(line.contains("3.0 s waited"), "{line}");
        // The upper median of two.
        assert!(
            line.contains("ring-zerocopy 700 (2) / 1000 (1); baseline-tx - / 700 (1)"),
            "{line}"
        );
        let none: Vec<&crate::measure::run::Trial> = Vec::new();
        assert_eq!(link_line(&none), None);
    }
}
