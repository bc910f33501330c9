//! Drawing: three header lines, the table, a line for the last message; the help over it
//! on `?`. Columns are dropped, least useful first, until the table fits the width (80
//! columns keep the endpoints, the 2 and 10 s rates and the totals). `NO_COLOR` leaves
//! bold and reverse video only.

use std::time::Duration;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row as TRow, Table};
use ratatui::Frame;

use super::input::View;
use super::model::{Row, SortKey, RX, TX, WINDOWS};

/// What the header says.
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    /// The interface(s), or the file.
    pub(crate) source: String,
    /// The capture's filter expression.
    pub(crate) filter: String,
    /// Packets and bits a second received (live), or the file's packets and bytes.
    pub(crate) pps: f64,
    pub(crate) bps: f64,
    pub(crate) packets: u64,
    pub(crate) kernel_drops: u64,
    pub(crate) zcap_drops: u64,
    pub(crate) freezes: u64,
    pub(crate) flows: u64,
    /// Capture time (live), the file's span (file).
    pub(crate) elapsed: Duration,
    pub(crate) refresh: Duration,
    /// A file's end state rather than a live capture.
    pub(crate) file: bool,
    /// The last line zcap said on standard error.
    pub(crate) message: Option<String>,
}

/// One table column.
struct Col {
    title: String,
    width: u16,
    /// Lower goes first when space is short (0: always).
    priority: u8,
    sort: Option<SortKey>,
    cell: Box<dyn Fn(&Row) -> String>,
    right: bool,
}

/// The columns for a live capture or a file, in display order.
fn columns(file: bool) -> Vec<Col> {
    let mut cols = flow_columns();
    cols.extend(rate_columns(file));
    cols.extend(detail_columns());
    cols
}

/// What the flow is: its protocol and its two endpoints, always shown.
fn flow_columns() -> Vec<Col> {
    vec![
        Col {
            title: "PROTO".into(),
            width: 5,
            priority: 0,
            sort: None,
            cell: Box::new(|r: &Row| r.proto.clone()),
            right: false,
        },
        Col {
            title: "LOCAL/A".into(),
            width: 0,
            priority: 0,
            sort: Some(SortKey::Name),
            cell: Box::new(|r: &Row| r.left.clone()),
            right: false,
        },
        Col {
            title: "REMOTE/B".into(),
            width: 0,
            priority: 0,
            sort: Some(SortKey::Name),
            cell: Box::new(|r: &Row| r.right.clone()),
            right: false,
        },
    ]
}

/// The rates, rx then tx: windows 2 and 10 s first, 40 s later; a file has one average a
/// direction.
fn rate_columns(file: bool) -> Vec<Col> {
    let mut cols = Vec::new();
    let windows: &[(usize, u8)] = if file {
        &[(0, 1)]
    } else {
        &[(0, 3), (1, 1), (2, 7)]
    };
    for (d, name) in [(RX, "rx"), (TX, "tx")] {
        for &(w, prio) in windows {
            let title = if file {
                format!("{name} avg")
            } else {
                format!("{name} {}s", WINDOWS[w])
            };
            cols.push(Col {
                title,
                width: 7,
                // The 40 s pair comes and goes together; of the others, tx first.
                priority: if prio >= 6 { prio } else { prio + d as u8 },
                sort: Some(SortKey::Dir(d, w)),
                cell: Box::new(move |r: &Row| rate(r.rates[d][w])),
                right: true,
            });
        }
    }
    cols
}

/// The flow's total bytes, state, age and process, after the rates.
fn detail_columns() -> Vec<Col> {
    vec![
        Col {
            title: "TOTAL".into(),
            width: 7,
            priority: 5,
            sort: Some(SortKey::Total),
            cell: Box::new(|r: &Row| bytes(r.bytes[0] + r.bytes[1])),
            right: true,
        },
        Col {
            title: "STATE".into(),
            width: 5,
            priority: 9,
            sort: None,
            cell: Box::new(|r: &Row| r.state.clone()),
            right: false,
        },
        Col {
            title: "AGE".into(),
            width: 6,
            priority: 8,
            sort: Some(SortKey::Age),
            cell: Box::new(|r: &Row| age(r.age_s)),
            right: true,
        },
        Col {
            title: "PROCESS".into(),
            width: 23,
            priority: 10,
            sort: None,
            cell: Box::new(|r: &Row| r.process.clone()),
            right: false,
        },
    ]
}

/// Narrowest the endpoint columns get.
const MIN_ENDPOINT: u16 = 16;
/// How wide the endpoints must stay for a column past the first five priorities (the
/// 2 and 10 s rates, the totals) to be shown: names and ports read whole first.
const ROOMY_ENDPOINT: u16 = 30;
/// The last priority shown with the narrowest endpoints.
const BASE_PRIORITY: u8 = 5;

/// The columns that fit in `width`.
fn fitting(cols: Vec<Col>, width: u16) -> Vec<Col> {
    let mut prios: Vec<u8> = cols.iter().map(|c| c.priority).collect();
    prios.sort_unstable();
    prios.dedup();
    let need = |max: u8| -> u16 {
        let endpoint = if max > BASE_PRIORITY {
            ROOMY_ENDPOINT
        } else {
            MIN_ENDPOINT
        };
        cols.iter()
            .filter(|c| c.priority <= max)
            .map(|c| if c.width == 0 { endpoint } else { c.width } + 1)
            .sum()
    };
    let max = prios
        .iter()
        .copied()
        .filter(|p| need(*p) <= width)
        .max()
        .unwrap_or(0);
    cols.into_iter().filter(|c| c.priority <= max).collect()
}

/// Bits a second, SI-prefixed, three digits.
pub(crate) fn rate(b: f64) -> String {
    si(b, "")
}

/// Bytes, SI-prefixed, with a B.
pub(crate) fn bytes(b: u64) -> String {
    si(b as f64, "B")
}

fn si(v: f64, unit: &str) -> String {
    const P: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = v.max(0.0);
    let mut i = 0;
    while v >= 999.5 && i < P.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        return format!("{v:.0}{unit}");
    }
    let digits = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:.digits$}{}{unit}", P[i])
}

fn age(s: f64) -> String {
    let s = s.max(0.0) as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Styles, or none with `NO_COLOR`.
struct Styles {
    title: Style,
    head: Style,
    sorted: Style,
    paused: Style,
}

impl Styles {
    fn new(color: bool) -> Styles {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let rev = Style::default().add_modifier(Modifier::REVERSED);
        if color {
            Styles {
                title: bold.fg(Color::Cyan),
                head: rev.fg(Color::Blue),
                sorted: rev.add_modifier(Modifier::BOLD).fg(Color::Yellow),
                paused: bold.fg(Color::Red),
            }
        } else {
            Styles {
                title: bold,
                head: rev,
                sorted: rev.add_modifier(Modifier::BOLD),
                paused: bold,
            }
        }
    }
}

/// Draws the view: `rows` are sorted and filtered; the table shows them from `view.scroll`.
pub(crate) fn draw(f: &mut Frame<'_>, h: &Header, rows: &[Row], view: &View, color: bool) {
    let st = Styles::new(color);
    let area = f.area();
    let [top, table_area, bottom] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(vec![
            title_line(h, view, &st),
            Line::from(counts_line(h)),
            Line::from(rows_line(rows.len(), view)),
        ]),
        top,
    );
    let height = draw_table(f, table_area, h.file, rows, view, &st);
    f.render_widget(
        Paragraph::new(status_line(h, rows.len(), view, height)),
        bottom,
    );
    if view.help {
        help(f, area, st.title);
    }
}

/// The header's first line: what is shown (a capture or a file's end), the filter, the
/// refresh, and whether the display is paused.
fn title_line(h: &Header, view: &View, st: &Styles) -> Line<'static> {
    let mode = if h.file { "end of" } else { "on" };
    let mut first = vec![
        Span::styled("zcap --top", st.title),
        Span::raw(format!(" {mode} {}", h.source)),
        Span::raw(format!(
            "  filter: {}",
            if h.filter.trim().is_empty() {
                "(none)"
            } else {
                h.filter.trim()
            }
        )),
    ];
    if !h.file {
        first.push(Span::raw(format!(
            "  every {:.1}s",
            h.refresh.as_secs_f64()
        )));
    }
    if view.paused {
        first.push(Span::styled("  PAUSED", st.paused));
    }
    Line::from(first)
}

/// The header's second line: a file's packets, flows and span, or a capture's rates,
/// flows, drops, freezes and time.
fn counts_line(h: &Header) -> String {
    if h.file {
        format!(
            "{} packets  {} flows  {} span  (rates: each flow's average)",
            h.packets,
            h.flows,
            clock(h.elapsed)
        )
    } else {
        format!(
            "{:.0} pps  {}bit/s  {} flows  drops: kernel {} zcap {}  freezes {}  {}",
            h.pps,
            rate(h.bps),
            h.flows,
            h.kernel_drops,
            h.zcap_drops,
            h.freezes,
            clock(h.elapsed)
        )
    }
}

/// The header's third line: the rows' grouping, count, sort and text filter, or the text
/// filter being typed.
fn rows_line(shown: usize, view: &View) -> String {
    let text = if view.filter.is_empty() {
        String::new()
    } else {
        format!("  text: {}", view.filter)
    };
    match &view.editing {
        Some(e) => format!("filter rows: {e}_   (Enter: apply, Esc: clear)"),
        None => format!(
            "rows: {} ({})  sort: {}{}{}   ? help  q quit",
            view.by.name(),
            shown,
            view.sort.name(),
            if view.reverse { " (reversed)" } else { "" },
            text
        ),
    }
}

/// The table in `area`: the columns that fit, their heading, the rows from `view.scroll`.
/// Returns how many rows the table has room for.
fn draw_table(
    f: &mut Frame<'_>,
    area: Rect,
    file: bool,
    rows: &[Row],
    view: &View,
    st: &Styles,
) -> usize {
    let cols = fitting(columns(file), area.width);
    let endpoint = endpoint_width(&cols, area.width);
    let widths: Vec<Constraint> = cols
        .iter()
        .map(|c| Constraint::Length(if c.width == 0 { endpoint } else { c.width }))
        .collect();
    let head = heading(&cols, view, st);
    let height = area.height.saturating_sub(1) as usize;
    let body = rows.iter().skip(view.scroll).take(height).map(|r| {
        TRow::new(cols.iter().map(|c| {
            let v = (c.cell)(r);
            let w = if c.width == 0 { endpoint } else { c.width } as usize;
            let v = fit(&v, w, c.width == 0);
            Cell::from(if c.right { format!("{v:>w$}") } else { v })
        }))
    });
    f.render_widget(Table::new(body, widths).header(head), area);
    height
}

/// How wide each endpoint column is: the table's width less the fixed columns, shared
/// between the endpoints, never under [`MIN_ENDPOINT`].
fn endpoint_width(cols: &[Col], width: u16) -> u16 {
    let fixed: u16 = cols
        .iter()
        .filter(|c| c.width > 0)
        .map(|c| c.width + 1)
        .sum();
    let flex = cols.iter().filter(|c| c.width == 0).count() as u16;
    (width.saturating_sub(fixed) / flex.max(1))
        .saturating_sub(1)
        .max(MIN_ENDPOINT)
}

/// The table's heading: the column titles, the sort's column(s) marked.
fn heading(cols: &[Col], view: &View, st: &Styles) -> TRow<'static> {
    TRow::new(cols.iter().map(|c| {
        let style = if c.sort == Some(view.sort)
            || (matches!(view.sort, SortKey::Both(w) if c.sort == Some(SortKey::Dir(RX, w)) || c.sort == Some(SortKey::Dir(TX, w))))
        {
            st.sorted
        } else {
            st.head
        };
        let t = if c.right {
            format!("{:>w$}", c.title, w = c.width as usize)
        } else {
            c.title.clone()
        };
        Cell::from(t).style(style)
    }))
    .style(st.head)
}

/// The last line: zcap's last message, or which rows are shown when they do not all fit.
fn status_line(h: &Header, shown: usize, view: &View, height: usize) -> String {
    match &h.message {
        Some(m) => m.clone(),
        None if shown > height => format!(
            "rows {}-{} of {}  (arrows, PgUp/PgDn, Home/End scroll)",
            view.scroll + 1,
            (view.scroll + height).min(shown),
            shown
        ),
        None => String::new(),
    }
}

/// `s` cut to `w` characters: an endpoint keeps its end (the port), others their start.
fn fit(s: &str, w: usize, keep_end: bool) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if keep_end {
        let tail: String = s.chars().skip(n - (w - 1)).collect();
        format!("…{tail}")
    } else {
        s.chars().take(w).collect()
    }
}

/// Every key, in a box over the table.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("1 2 3", "sort by the 2, 10 or 40 s rate (both directions)"),
    ("s S", "next / previous sort key (rx, tx, total, ...)"),
    ("r", "reverse the sort"),
    ("g", "rows by flow, host pair, remote host, port"),
    ("/", "filter rows by text (Enter applies, Esc clears)"),
    ("n", "names on / off (addresses only)"),
    ("p space", "pause the display (the capture goes on)"),
    ("arrows j k", "scroll a row"),
    ("PgUp PgDn", "scroll a page"),
    ("Home End", "first / last rows"),
    ("?", "this help (any key closes it)"),
    ("q Ctrl-C", "quit"),
];

fn help(f: &mut Frame<'_>, area: Rect, title: Style) {
    let w = 62.min(area.width);
    let h = (KEYS.len() as u16 + 4).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let mut lines: Vec<Line<'_>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:>11}  "), title),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(
        "rx: to the local (or first) endpoint; tx: from it",
    ));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")),
        r,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(rate(0.0), "0");
        assert_eq!(rate(999.0), "999");
        assert_eq!(rate(1234.0), "1.23k");
        assert_eq!(rate(98_765.0), "98.8k");
        assert_eq!(rate(41_943_040.0), "41.9M");
        assert_eq!(bytes(512), "512B");
        assert_eq!(bytes(1_500_000), "1.50MB");
        assert_eq!(age(61.0), "61s");
        assert_eq!(age(3599.0), "59m59s");
    }

    #[test]
    fn eighty_columns_keep_the_short_rates_and_totals() {
        let names: Vec<String> = fitting(columns(false), 80)
            .iter()
            .map(|c| c.title.clone())
            .collect();
        for want in [
            "LOCAL/A", "REMOTE/B", "rx 2s", "rx 10s", "tx 2s", "tx 10s", "TOTAL",
        ] {
            assert!(names.iter().any(|n| n == want), "{names:?}");
        }
        assert_eq!(fitting(columns(false), 200).len(), columns(false).len());
    }
}
