//! `tcp-rx` as a table: per connection count and read size, `recv` and `zerocopy` side by
//! side.

use super::TcpRxReport;
use crate::report::text::{human, table};

/// The table, then the MSS line.
pub fn text(r: &TcpRxReport, markdown: bool) -> String {
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            vec![
                p.method.clone(),
                p.conns.to_string(),
                human(p.read_bytes),
                format!("{:.2}", p.gbit_s),
                format!("{:.1}", p.rx_thread_ns_per_kib),
                format!("{:.1}", p.rx_sys_ns_per_kib),
                format!("{:.1}", p.rx_cpu_ns_per_kib),
                format!("{:.1}%", 100.0 * p.mapped_share),
                p.tlb_shootdowns.to_string(),
                format!("{:.2}", p.tlb_per_mib),
            ]
        })
        .collect();
    let mut text = String::new();
    if markdown {
        text.push_str("\n## TCP receive: recv against TCP_ZEROCOPY_RECEIVE\n\n");
    } else {
        text.push_str("\ntcp-rx: recv against TCP_ZEROCOPY_RECEIVE (loopback)\n");
    }
    text.push_str(&table(
        &[
            "method",
            "conns",
            "read",
            "Gbit/s",
            "rx thread ns/KiB",
            "of it sys",
            "rx CPU ns/KiB",
            "mapped",
            "TLB shootdowns",
            "per MiB",
        ],
        &rows,
        markdown,
    ));
    text.push_str(&format!(
        "MSS asked {} (7 pages + timestamps), got {}; content checked: {}\n",
        r.mss_requested,
        r.mss,
        if r.verified {
            "every byte"
        } else {
            "first byte of each 4 KiB of each stream"
        }
    ));
    text
}
