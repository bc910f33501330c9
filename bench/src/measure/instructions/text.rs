//! Instructions per packet as text: one row per workload.

use super::Instructions;
use crate::report::text::table;

/// Instructions per packet under callgrind.
pub fn text(ins: &[Instructions]) -> String {
    let mut text = String::new();
    let rows: Vec<Vec<String>> = ins
        .iter()
        .map(|i| {
            vec![
                i.workload.clone(),
                format!("{:.1}", i.per_packet),
                i.what.clone(),
            ]
        })
        .collect();
    text.push_str("instructions per packet (valgrind --tool=callgrind, deterministic):\n");
    text.push_str(&table(
        &["workload", "instructions/pkt", "what"],
        &rows,
        false,
    ));
    text
}
