//! Text helpers for the reports: aligned or markdown tables, human sizes, first-seen order.
//! A leaf module.

use std::fmt::Write as _;

/// An aligned text table, or a markdown one.
pub fn table(header: &[&str], rows: &[Vec<String>], markdown: bool) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    let line = |s: &mut String, cells: &[String]| {
        if markdown {
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        } else {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:>width$}", width = w[i]))
                .collect();
            let _ = writeln!(s, "{}", padded.join("  "));
        }
    };
    line(
        &mut s,
        &header.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    );
    if markdown {
        let _ = writeln!(
            s,
            "|{}|",
            header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
        );
    }
    for r in rows {
        line(&mut s, r);
    }
    s
}

/// 64, 1500, 4 KiB, 1 MiB ...
pub fn human(n: usize) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

pub fn dedup<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
