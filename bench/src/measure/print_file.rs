//! `rxbench print-file`: `zcap -n -r F` and `tcpdump -n -r F` (and each with `-v`, `-e`)
//! printing a capture's lines to /dev/null, their CPU (user plus system, from wait4) per
//! packet; and the large capture they read, a small one repeated with increasing time stamps.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::report::stats::median;
use crate::report::text::{dedup, table};
use crate::sys;

/// The flags each tool runs with after `-n`: the default lines, `-v`, `-e`.
pub const VARIANTS: [&str; 3] = ["", "-v", "-e"];

/// What `print-file` measured.
#[derive(Debug, Clone, Serialize)]
pub struct PrintFileReport {
    /// The capture printed.
    pub pcap: String,
    /// The capture it was made from (`--from`), if it was made in this run.
    pub from: Option<String>,
    /// Its packets.
    pub packets: u64,
    /// Its size, bytes.
    pub bytes: u64,
    /// TZ as set in both tools' environment (`--tz`); `None`: rxbench's own.
    pub tz: Option<String>,
    /// Every run.
    pub runs: Vec<PrintFileRun>,
}

/// One tool printing the capture once.
#[derive(Debug, Clone, Serialize)]
pub struct PrintFileRun {
    /// `zcap` or `tcpdump`.
    pub tool: String,
    /// The flags after `-n` (`""`, `-v`, `-e`).
    pub flags: String,
    /// The round (0-based): the runs of one round ran one after another.
    pub round: usize,
    /// User time, ns (wait4's rusage).
    pub user_ns: u64,
    /// System time, ns.
    pub sys_ns: u64,
    /// Wall time, ns.
    pub wall_ns: u64,
    /// (user + sys) / packets, ns.
    pub cpu_ns_per_pkt: f64,
}

/// A pcap file's global header and its records' places, in the file's byte order.
struct Pcap<'a> {
    header: &'a [u8],
    big_endian: bool,
    /// Time stamp units a second: 10^6, or 10^9 for the nanosecond magic.
    units: u64,
    /// Every record, header included.
    records: Vec<&'a [u8]>,
}

impl Pcap<'_> {
    fn parse(data: &[u8]) -> Result<Pcap<'_>> {
        let Some(header) = data.get(..24) else {
            bail!("not a pcap file: shorter than its header");
        };
        let magic = [header[0], header[1], header[2], header[3]];
        let (big_endian, units) = match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
            (0xa1b2_c3d4, _) => (false, 1_000_000),
            (0xa1b2_3c4d, _) => (false, 1_000_000_000),
            (_, 0xa1b2_c3d4) => (true, 1_000_000),
            (_, 0xa1b2_3c4d) => (true, 1_000_000_000),
            (m, _) => bail!("not a pcap file (magic {m:#010x}; pcapng is not read here)"),
        };
        let mut pcap = Pcap {
            header,
            big_endian,
            units,
            records: Vec::new(),
        };
        let mut at = 24;
        while at < data.len() {
            let Some(rec) = data.get(at..at + 16) else {
                bail!("a record header cut at byte {at}");
            };
            let len = pcap.word(rec, 8) as usize;
            let Some(whole) = data.get(at..at + 16 + len) else {
                bail!("a record cut at byte {at}");
            };
            pcap.records.push(whole);
            at += 16 + len;
        }
        Ok(pcap)
    }

    fn word(&self, rec: &[u8], at: usize) -> u32 {
        let b = [rec[at], rec[at + 1], rec[at + 2], rec[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn bytes(&self, v: u32) -> [u8; 4] {
        if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    /// A record's time stamp in the file's units.
    fn stamp(&self, rec: &[u8]) -> u64 {
        u64::from(self.word(rec, 0)) * self.units + u64::from(self.word(rec, 4))
    }
}

/// Writes to `out` the records of `data` (a pcap file) over and over until `packets` are
/// written: copy k's time stamps shifted by k times (the capture's span plus a millisecond),
/// and each at least one unit after the one before, so that they only increase.
pub fn repeat_capture(data: &[u8], packets: u64, mut out: impl Write) -> Result<u64> {
    let pcap = Pcap::parse(data)?;
    if pcap.records.is_empty() {
        bail!("the capture has no packets to repeat");
    }
    let stamps: Vec<u64> = pcap.records.iter().map(|r| pcap.stamp(r)).collect();
    let first = *stamps.iter().min().expect("not empty");
    let span = stamps.iter().max().expect("not empty") - first + pcap.units / 1000;
    out.write_all(pcap.header)?;
    let n = pcap.records.len() as u64;
    let mut last: Option<u64> = None;
    for i in 0..packets {
        let (k, rec) = (i / n, pcap.records[(i % n) as usize]);
        let mut t = stamps[(i % n) as usize] + k * span;
        if let Some(l) = last {
            t = t.max(l + 1);
        }
        last = Some(t);
        let secs = u32::try_from(t / pcap.units).context("time stamps beyond 2106")?;
        out.write_all(&pcap.bytes(secs))?;
        out.write_all(&pcap.bytes((t % pcap.units) as u32))?;
        out.write_all(&rec[8..])?;
    }
    out.flush()?;
    Ok(packets)
}

/// The packets in pcap file `data`.
pub fn count_packets(data: &[u8]) -> Result<u64> {
    Ok(Pcap::parse(data)?.records.len() as u64)
}

/// Runs `cmd` with its standard output on /dev/null (and TZ set to `tz`, if given); its user
/// and system time (wait4) and the wall time, ns. A failure (non-zero exit) is the error,
/// with what it said.
pub fn run_printer(cmd: &[String], tz: Option<&str>) -> Result<(u64, u64, u64)> {
    let start = Instant::now();
    let mut command = Command::new(&cmd[0]);
    if let Some(tz) = tz {
        command.env("TZ", tz);
    }
    let mut child = command
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", cmd[0]))?;
    let mut err = child.stderr.take().expect("piped");
    let said = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let (code, user, system) = sys::wait_rusage(child.id())?;
    let wall = start.elapsed().as_nanos() as u64;
    let said = said.join().unwrap_or_default();
    if code != 0 {
        bail!("{} exited with {code}: {said}", cmd.join(" "));
    }
    Ok((user, system, wall))
}

/// The command line of `tool` (`zcap` at `zcap`, or `tcpdump`) printing `pcap` with `flags`.
pub fn command(tool: &str, zcap: &str, flags: &str, pcap: &str) -> Vec<String> {
    let program = if tool == "zcap" { zcap } else { "tcpdump" };
    std::iter::once(program)
        .chain(["-n"])
        .chain(flags.split_whitespace())
        .chain(["-r", pcap])
        .map(String::from)
        .collect()
}

/// Per flags: each tool's median CPU per packet, and zcap's over tcpdump's (of the medians,
/// and the median of the rounds' ratios).
#[derive(Debug, Clone, PartialEq)]
pub struct FlagsSummary {
    pub flags: String,
    pub zcap: f64,
    pub tcpdump: f64,
    pub ratio: f64,
    pub paired: f64,
}

/// Every flags' summary, by flags.
pub fn summarize(runs: &[PrintFileRun]) -> Vec<FlagsSummary> {
    let mut flags = dedup(runs.iter().map(|r| r.flags.clone()));
    flags.sort();
    flags
        .into_iter()
        .filter_map(|flags| {
            let of = |tool: &str| -> Vec<&PrintFileRun> {
                runs.iter()
                    .filter(|r| r.flags == flags && r.tool == tool)
                    .collect()
            };
            let (z, t) = (of("zcap"), of("tcpdump"));
            if z.is_empty() || t.is_empty() {
                return None;
            }
            let zm = median(z.iter().map(|r| r.cpu_ns_per_pkt).collect());
            let tm = median(t.iter().map(|r| r.cpu_ns_per_pkt).collect());
            let pairs: Vec<f64> = z
                .iter()
                .filter_map(|a| {
                    let b = t.iter().find(|b| b.round == a.round)?;
                    Some(a.cpu_ns_per_pkt / b.cpu_ns_per_pkt)
                })
                .collect();
            Some(FlagsSummary {
                paired: if pairs.is_empty() {
                    f64::NAN
                } else {
                    median(pairs)
                },
                ratio: zm / tm,
                zcap: zm,
                tcpdump: tm,
                flags,
            })
        })
        .collect()
}

/// The table: per flags and tool, the runs' medians and spread; then the ratios.
pub fn text(r: &PrintFileReport) -> String {
    let mut rows = Vec::new();
    let mut keys = dedup(r.runs.iter().map(|x| (x.flags.clone(), x.tool.clone())));
    // By flags, zcap before tcpdump.
    keys.sort_by(|a, b| (&a.0, a.1 == "tcpdump").cmp(&(&b.0, b.1 == "tcpdump")));
    for (flags, tool) in keys {
        let runs: Vec<&PrintFileRun> = r
            .runs
            .iter()
            .filter(|x| x.flags == flags && x.tool == tool)
            .collect();
        let m = |f: &dyn Fn(&PrintFileRun) -> f64| median(runs.iter().map(|x| f(x)).collect());
        let per = |f: &dyn Fn(&PrintFileRun) -> f64| {
            runs.iter()
                .map(|x| f(x))
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        };
        let (lo, hi) = per(&|x| x.cpu_ns_per_pkt);
        let pk = r.packets as f64;
        rows.push(vec![
            format!("{tool} -n {flags}").trim_end().to_string(),
            runs.len().to_string(),
            format!("{:.0}", m(&|x| x.cpu_ns_per_pkt)),
            format!("{lo:.0}..{hi:.0}"),
            format!("{:.0}", m(&|x| x.user_ns as f64 / pk)),
            format!("{:.0}", m(&|x| x.sys_ns as f64 / pk)),
            format!("{:.2}", m(&|x| x.wall_ns as f64 / 1e9)),
        ]);
    }
    let mut text = format!(
        "\nprinting {} ({} packets, {} bytes) to /dev/null, {}, medians over the runs:\n",
        r.pcap,
        r.packets,
        r.bytes,
        match &r.tz {
            Some(tz) => format!("TZ={tz}"),
            None =>
                std::env::var("TZ").map_or("TZ unset".into(), |v| format!("TZ={v} (inherited)")),
        }
    );
    text.push_str(&table(
        &[
            "command",
            "runs",
            "cpu ns/pkt",
            "min..max",
            "user ns/pkt",
            "sys ns/pkt",
            "wall s",
        ],
        &rows,
        false,
    ));
    for s in summarize(&r.runs) {
        text.push_str(&format!(
            "{}: zcap {:.0} ns/pkt, tcpdump {:.0}: {:.3}x (median of the rounds' ratios {:.3}x)\n",
            format!("-n {}", s.flags).trim_end(),
            s.zcap,
            s.tcpdump,
            s.ratio,
            s.paired
        ));
    }
    text
}

#[cfg(test)]
#[path = "print_file_tests.rs"]
mod tests;
