//! The main run as text: the table of every mode at every size, narrow by default (the
//! columns a reader compares, within 100 columns) or with every column, and the lines with the
//! ring's ratios to the socket modes.

use std::fmt::Write as _;

use super::{ModeResult, Ratio};
use crate::report::text::table;

/// The mode the narrow table's ratio column compares against: the batched socket receiver.
const BASELINE: &str = "sockets-recvmmsg";

/// The main table: every column with `wide` or `markdown`, else the narrow one.
pub fn table_text(results: &[ModeResult], markdown: bool, wide: bool) -> String {
    if wide || markdown {
        wide_table(results, markdown)
    } else {
        narrow_table(results)
    }
}

/// A latency figure in µs; "n/a" where the mode has no receive timestamp (af-xdp, pnet):
/// no latency, not zero.
fn micros(r: &ModeResult, ns: u64) -> String {
    if r.latency.samples == 0 {
        "n/a".to_string()
    } else {
        format!("{:.1}", ns as f64 / 1000.0)
    }
}

/// The narrow table: size, mode, delivered, dropped, Mpps, CPU per packet, its ratio to
/// [`BASELINE`]'s at the same size, p99.
fn narrow_table(results: &[ModeResult]) -> String {
    let header = [
        "size",
        "mode",
        "delivered",
        "dropped",
        "Mpps",
        "CPU ns/pkt",
        "vs recvmmsg",
        "p99 µs",
    ];
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let baseline = results
                .iter()
                .find(|b| b.mode == BASELINE && b.frame_bytes == r.frame_bytes)
                .map(ModeResult::cpu_per_packet)
                .filter(|&b| b > 0.0 && r.receives);
            vec![
                r.frame_bytes.to_string(),
                r.mode.clone(),
                r.delivered.to_string(),
                r.dropped.to_string(),
                format!("{:.2}", r.delivered_pps / 1e6),
                if r.receives {
                    format!("{:.0}", r.cpu_per_packet())
                } else {
                    format!("{:.0} (per sent)", r.cpu_per_packet())
                },
                baseline.map_or("-".into(), |b| format!("{:.2}x", r.cpu_per_packet() / b)),
                micros(r, r.latency.p99_ns),
            ]
        })
        .collect();
    table(&header, &rows, false)
}

/// The main table with every column (aligned text or markdown).
pub fn wide_table(results: &[ModeResult], markdown: bool) -> String {
    let header = [
        "size",
        "mode",
        "sent",
        "delivered",
        "dropped",
        "unacc",
        "Mpps",
        "rx user ns/p",
        "rx sys ns/p",
        "machine ns/deliv",
        "machine ns/sent",
        "rx-only ns/deliv",
        "lat p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "flow min..max",
        "mechanism",
        "copied by",
    ];
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let lat = |ns: u64| micros(r, ns);
            vec![
                r.frame_bytes.to_string(),
                r.mode.clone(),
                r.sent.to_string(),
                r.delivered.to_string(),
                r.dropped.to_string(),
                if r.receives {
                    r.unaccounted.to_string()
                } else {
                    "-".into()
                },
                format!("{:.2}", r.delivered_pps / 1e6),
                format!("{:.0}", r.receiver_user_ns_per_pkt),
                format!("{:.0}", r.receiver_sys_ns_per_pkt),
                format!("{:.0}", r.machine_ns_per_delivered),
                format!("{:.0}", r.machine_ns_per_sent),
                r.receive_ns_per_delivered
                    .map_or("-".into(), |v| format!("{v:.0}")),
                lat(r.latency.p50_ns),
                lat(r.latency.p99_ns),
                lat(r.latency.p999_ns),
                lat(r.latency.max_ns),
                format!("{}..{}", r.flow_min, r.flow_max),
                r.mechanism.clone(),
                r.copied.clone(),
            ]
        })
        .collect();
    table(&header, &rows, markdown)
}

/// One line per ratio of ring-zerocopy to a socket mode.
pub fn ratio_lines(ratios: &[Ratio]) -> String {
    let mut s = String::new();
    for r in ratios {
        let _ = writeln!(
            s,
            "{} B: ring-zerocopy / {}: machine CPU per delivered packet {:.2}x, per sent packet {:.2}x, receive cost without the generator's {}",
            r.frame_bytes,
            r.versus,
            r.machine_per_delivered,
            r.machine_per_sent,
            r.receive_per_delivered
                .map_or("n/a".into(), |v| format!("{v:.2}x"))
        );
    }
    s
}

/// What the GRO and busy-polling modes did, a line per result that says: datagrams per
/// GRO buffer (1.00: the kernel coalesced nothing), the sockets' NAPI id, the packets read by
/// busy polling.
pub fn path_lines(results: &[ModeResult]) -> String {
    let mut s = String::new();
    for r in results {
        let Some(p) = &r.path else { continue };
        let per_read = if p.gro_buffers > 0 {
            format!(
                "{} datagrams in {} GRO buffers ({:.2} a read, {} misfits), ",
                p.gro_datagrams,
                p.gro_buffers,
                p.gro_datagrams as f64 / p.gro_buffers as f64,
                p.gro_misfits
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{} B: {}: {per_read}NAPI id {}, BusyPollRxPackets +{}",
            r.frame_bytes, r.mode, p.napi_id, p.busy_poll_rx_packets
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::run::Mode;

    #[test]
    fn the_path_lines_say_what_gro_and_busy_polling_did() {
        let mut gro = ModeResult::example("sockets-gro", 64, 4, 1.0);
        gro.path = Some(crate::measure::run::schema::ReceivePath {
            gro_buffers: 16,
            gro_datagrams: 320,
            gro_misfits: 0,
            napi_id: 404,
            busy_poll_rx_packets: 0,
        });
        let plain = ModeResult::example("sockets-recvmmsg", 64, 4, 1.0);
        let text = path_lines(&[gro, plain]);
        assert_eq!(
            text,
            "64 B: sockets-gro: 320 datagrams in 16 GRO buffers (20.00 a read, 0 misfits), \
             NAPI id 404, BusyPollRxPackets +0\n"
        );
    }

    /// Every mode at every size of the default run, with the widest figures a run prints:
    /// a million frames sent, drops in the hundreds of thousands, latency in milliseconds.
    fn default_run() -> Vec<ModeResult> {
        let mut results = Vec::new();
        for size in [64, 512, 1400] {
            for mode in Mode::all() {
                let mut r = ModeResult::example(&mode.name(), size, 256, 12_345.6);
                r.mechanism = mode.mechanism().into();
                r.copied = mode.copied().into();
                r.sent = 1_000_000;
                r.delivered = if r.receives { 876_543 } else { 0 };
                r.dropped = r.sent - r.delivered;
                r.delivered_pps = 1.234_567e6;
                r.machine_ns_per_sent = 9_876.5;
                r.receive_ns_per_delivered = r.receives.then_some(11_111.1);
                r.latency.samples = 100_000;
                r.latency.p99_ns = 12_345_678;
                r.latency.max_ns = 98_765_432;
                results.push(r);
            }
        }
        results
    }

    #[test]
    fn the_default_table_fits_100_columns_and_the_wide_one_has_every_column() {
        let results = default_run();
        let narrow = table_text(&results, false, false);
        for line in narrow.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} wide: {line}",
                line.chars().count()
            );
        }
        assert_eq!(narrow.lines().count(), 1 + results.len());
        let header = narrow.lines().next().unwrap();
        for column in [
            "mode",
            "delivered",
            "dropped",
            "Mpps",
            "CPU ns/pkt",
            "vs recvmmsg",
            "p99",
        ] {
            assert!(header.contains(column), "{header}");
        }
        assert!(
            narrow.contains("1.00x"),
            "recvmmsg against itself:\n{narrow}"
        );
        for wide in [
            table_text(&results, false, true),
            table_text(&results, true, false),
        ] {
            let header = wide.lines().next().unwrap();
            assert!(
                header.contains("mechanism") && header.contains("rx-only"),
                "{header}"
            );
        }
    }
}
