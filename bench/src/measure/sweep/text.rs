//! The sweep as text: its table (the median run of each mode and flow count) and, for each
//! receiving mode, how its CPU per packet grows with the flow count.

use std::fmt::Write as _;

use crate::measure::run::ModeResult;
use crate::report::text::{dedup, table};

/// The sweep's section of the report: a heading, the table and the verdicts (as markdown
/// list items with `markdown`).
pub fn text(sweep: &[ModeResult], markdown: bool) -> String {
    let mut text = String::new();
    let size = sweep.first().map_or(0, |r| r.frame_bytes);
    let _ = writeln!(
        text,
        "\nflow-count sweep, {size} B frames, one source address per flow (rx-only = machine CPU minus baseline-tx's at the same flow count):\n"
    );
    text.push_str(&table_text(sweep, markdown));
    text.push('\n');
    for l in verdicts(sweep).lines() {
        let _ = writeln!(text, "{}{l}", if markdown { "- " } else { "" });
    }
    text
}

/// For each mode and flow count, the run with the median CPU per packet (a whole run, so its
/// figures belong together), in the order of first appearance.
pub fn median_runs(results: &[ModeResult]) -> Vec<&ModeResult> {
    let keys = dedup(results.iter().map(|r| (r.mode.clone(), r.flows)));
    keys.iter()
        .map(|(m, f)| {
            let mut runs: Vec<&ModeResult> = results
                .iter()
                .filter(|r| &r.mode == m && r.flows == *f)
                .collect();
            runs.sort_by(|a, b| a.cpu_per_packet().total_cmp(&b.cpu_per_packet()));
            runs[runs.len() / 2]
        })
        .collect()
}

/// The sweep's table: one row per mode and flow count (the median run of each).
fn table_text(results: &[ModeResult], markdown: bool) -> String {
    let runs = results
        .iter()
        .filter(|r| r.mode == results[0].mode && r.flows == results[0].flows)
        .count();
    let results = median_runs(results);
    let header = [
        "mode",
        "flows",
        "delivered Mpps",
        "dropped",
        "machine ns/deliv",
        "rx-only ns/deliv",
        "p99 µs",
        "runs",
    ];
    let modes = dedup(results.iter().map(|r| r.mode.clone()));
    let mut rows = Vec::new();
    for m in &modes {
        for r in results.iter().filter(|r| &r.mode == m) {
            rows.push(vec![
                r.mode.clone(),
                r.flows.to_string(),
                format!("{:.3}", r.delivered_pps / 1e6),
                r.dropped.to_string(),
                if r.receives {
                    format!("{:.0}", r.machine_ns_per_delivered)
                } else {
                    format!("{:.0} (per sent)", r.machine_ns_per_sent)
                },
                r.receive_ns_per_delivered
                    .map_or("-".into(), |v| format!("{v:.0}")),
                if r.latency.samples == 0 {
                    "n/a".into()
                } else {
                    format!("{:.1}", r.latency.p99_ns as f64 / 1000.0)
                },
                runs.to_string(),
            ]);
        }
    }
    table(&header, &rows, markdown)
}

/// For each receiving mode: its CPU per delivered packet at every flow count relative to its
/// fewest-flows figure, and the first flow count where it doubled.
fn verdicts(results: &[ModeResult]) -> String {
    let mut s = String::new();
    let results: Vec<ModeResult> = median_runs(results).into_iter().cloned().collect();
    let modes = dedup(
        results
            .iter()
            .filter(|r| r.receives)
            .map(|r| r.mode.clone()),
    );
    for m in &modes {
        let mut rs: Vec<&ModeResult> = results
            .iter()
            .filter(|r| &r.mode == m && r.delivered > 0)
            .collect();
        rs.sort_by_key(|r| r.flows);
        let Some(first) = rs.first() else { continue };
        let base = first.machine_ns_per_delivered;
        let steps: Vec<String> = rs
            .iter()
            .map(|r| format!("{}: {:.2}x", r.flows, r.machine_ns_per_delivered / base))
            .collect();
        let doubled = rs
            .iter()
            .find(|r| r.machine_ns_per_delivered >= 2.0 * base)
            .map_or("never doubles in this range".to_string(), |r| {
                format!("doubles at {} flows", r.flows)
            });
        let _ = writeln!(
            s,
            "{m}: machine CPU per delivered packet vs {} flow(s) ({base:.0} ns): {}; {doubled}",
            first.flows,
            steps.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(mode: &str, flows: usize, ns: f64) -> ModeResult {
        ModeResult::example(mode, 64, flows, ns)
    }

    #[test]
    fn the_median_run_is_kept_and_the_doubling_point_found() {
        let rs = vec![
            result("sockets-recvmsg", 1, 100.0),
            result("sockets-recvmsg", 1, 300.0),
            result("sockets-recvmsg", 1, 110.0),
            result("sockets-recvmsg", 64, 150.0),
            result("sockets-recvmsg", 4096, 230.0),
            result("ring-zerocopy", 1, 50.0),
            result("ring-zerocopy", 4096, 60.0),
        ];
        let med = median_runs(&rs);
        assert_eq!(med.len(), 5);
        assert_eq!(med[0].machine_ns_per_delivered, 110.0);
        let v = verdicts(&rs);
        assert!(v.contains("sockets-recvmsg: machine CPU per delivered packet vs 1 flow(s) (110 ns): 1: 1.00x, 64: 1.36x, 4096: 2.09x; doubles at 4096 flows"), "{v}");
        assert!(
            v.contains("ring-zerocopy") && v.contains("never doubles"),
            "{v}"
        );
    }
}
