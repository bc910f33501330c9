//! `rxbench sniff --print`: a sniffer printing tcpdump's lines to /dev/null (`-n`, no `-w`,
//! no `-q`) while paced mixed traffic flows: what it saw, what the kernel dropped for it, its
//! CPU per packet.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::sniff::stop_sniffer;
use super::Bench;
use crate::lab::machine::proc_cpu_ns;
use crate::report::stats::median;
use crate::report::text::{dedup, table};

/// One printing sniffer at one rate, one run.
#[derive(Debug, Clone, Serialize)]
pub struct SniffPrint {
    /// The sniffer, as named in the table.
    pub tool: String,
    /// Offered rate, packets per second.
    pub rate_pps: u64,
    /// Frames sent.
    pub sent: u64,
    /// The rate the generator kept up, packets per second (sent over the sending time).
    pub achieved_pps: f64,
    /// The sniffer's "packets captured": the packets it saw (and printed).
    pub captured: u64,
    /// Its "packets received by filter".
    pub received_by_filter: u64,
    /// Its "packets dropped by kernel" (its ring was full).
    pub dropped: u64,
    /// Its CPU (all threads, scheduler run time: user plus system) while the traffic flowed,
    /// per captured packet, ns.
    pub cpu_ns_per_pkt: f64,
    /// Its user plus system time over its whole life (wait4's rusage, set-up and tear-down
    /// included) per captured packet, ns.
    pub rusage_ns_per_pkt: f64,
    /// TZ as set in the sniffer's environment (`--tz`); `None`: rxbench's own.
    pub tz: Option<String>,
}

impl Bench {
    /// Runs `cmd` (a sniffer printing its lines, which go to /dev/null) while `frames` are
    /// sent, cycled, at `rate` packets/s for `seconds`; it must print "listening on" when
    /// ready and tcpdump's counts when interrupted.
    pub fn sniff_print(
        &mut self,
        name: &str,
        cmd: &[String],
        frames: &[Vec<u8>],
        (rate, seconds): (u64, f64),
    ) -> Result<SniffPrint> {
        crate::lab::interrupt::check()?;
        let (child, rx) = self.start_sniffer(name, cmd, Stdio::null())?;
        let pid = child.id();
        // Its CPU so far is set-up (the ring allocated and zeroed): not per packet.
        let cpu0 = proc_cpu_ns(pid);
        let sent = (rate as f64 * seconds) as u64;
        let start = std::time::Instant::now();
        self.paced_send(frames, sent, rate)?;
        let sending = start.elapsed().as_secs_f64();
        // tcpdump's libpcap hands over a block when it fills or its 1 s timeout passes: let
        // the last one reach the printer.
        std::thread::sleep(Duration::from_millis(1200));
        let cpu1 = proc_cpu_ns(pid);
        let counts = stop_sniffer(name, pid, &rx)?;
        let captured = counts.count(" packets captured")?;
        let per = |ns: u64| {
            if captured == 0 {
                0.0
            } else {
                ns as f64 / captured as f64
            }
        };
        Ok(SniffPrint {
            tool: name.to_string(),
            rate_pps: rate,
            sent,
            achieved_pps: sent as f64 / sending,
            captured,
            received_by_filter: counts.count(" packets received by filter")?,
            dropped: counts.count(" packets dropped by kernel")?,
            cpu_ns_per_pkt: per(cpu1.saturating_sub(cpu0)),
            rusage_ns_per_pkt: per(counts.user_sys_ns),
            tz: None,
        })
    }
}

/// One sniffer at one rate over its runs: medians.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintSummary {
    pub rate_pps: u64,
    pub tool: String,
    pub runs: usize,
    pub sent: f64,
    pub achieved_pps: f64,
    pub captured: f64,
    pub dropped: f64,
    /// Dropped over (captured + dropped), median over the runs.
    pub drop_share: f64,
    pub cpu_ns_per_pkt: f64,
    pub cpu_min: f64,
    pub cpu_max: f64,
    pub rusage_ns_per_pkt: f64,
}

/// Every (rate, sniffer)'s medians, in the order they first ran.
pub fn summarize(all: &[SniffPrint]) -> Vec<PrintSummary> {
    dedup(all.iter().map(|r| (r.rate_pps, r.tool.clone())))
        .into_iter()
        .map(|(rate, tool)| {
            let runs: Vec<&SniffPrint> = all
                .iter()
                .filter(|r| r.rate_pps == rate && r.tool == tool)
                .collect();
            let m = |f: &dyn Fn(&SniffPrint) -> f64| median(runs.iter().map(|r| f(r)).collect());
            let cpu: Vec<f64> = runs.iter().map(|r| r.cpu_ns_per_pkt).collect();
            PrintSummary {
                rate_pps: rate,
                runs: runs.len(),
                sent: m(&|r| r.sent as f64),
                achieved_pps: m(&|r| r.achieved_pps),
                captured: m(&|r| r.captured as f64),
                dropped: m(&|r| r.dropped as f64),
                drop_share: m(&|r| {
                    let seen = (r.captured + r.dropped) as f64;
                    if seen == 0.0 {
                        0.0
                    } else {
                        r.dropped as f64 / seen
                    }
                }),
                cpu_ns_per_pkt: median(cpu.clone()),
                cpu_min: cpu.iter().copied().fold(f64::INFINITY, f64::min),
                cpu_max: cpu.iter().copied().fold(0.0, f64::max),
                rusage_ns_per_pkt: m(&|r| r.rusage_ns_per_pkt),
                tool,
            }
        })
        .collect()
}

/// `sniff --print`: per rate and sniffer, the medians; per rate, zcap's CPU over tcpdump's.
pub fn text(all: &[SniffPrint]) -> String {
    let sums = summarize(all);
    let rows: Vec<Vec<String>> = sums
        .iter()
        .map(|s| {
            vec![
                s.rate_pps.to_string(),
                s.tool.clone(),
                s.runs.to_string(),
                format!("{:.0}", s.sent),
                format!("{:.0}", s.achieved_pps),
                format!("{:.0}", s.captured),
                format!("{:.0}", s.dropped),
                format!("{:.2}%", s.drop_share * 100.0),
                format!("{:.0}", s.cpu_ns_per_pkt),
                format!("{:.0}..{:.0}", s.cpu_min, s.cpu_max),
                format!("{:.0}", s.rusage_ns_per_pkt),
            ]
        })
        .collect();
    let tz = match all.first().and_then(|r| r.tz.as_ref()) {
        Some(tz) => format!("TZ={tz}"),
        None => std::env::var("TZ").map_or("TZ unset".into(), |v| format!("TZ={v} (inherited)")),
    };
    let mut text = format!(
        "\nprinting sniffers (-n, lines to /dev/null, {tz}) on paced mixed traffic (TCP with options, DNS, UDP), medians over the runs; cpu: run time while the traffic flowed, rusage: user+sys over the whole life, per captured packet:\n",
    );
    text.push_str(&table(
        &[
            "pps",
            "sniffer",
            "runs",
            "sent",
            "achieved pps",
            "captured",
            "dropped",
            "drop share",
            "cpu ns/pkt",
            "min..max",
            "rusage ns/pkt",
        ],
        &rows,
        false,
    ));
    for line in ratio_lines(&sums) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// Per rate: zcap's median CPU per packet over tcpdump's, and both drop counts.
fn ratio_lines(sums: &[PrintSummary]) -> Vec<String> {
    dedup(sums.iter().map(|s| s.rate_pps))
        .into_iter()
        .filter_map(|rate| {
            let get = |t: &str| {
                sums.iter()
                    .find(|s| s.rate_pps == rate && s.tool.starts_with(t))
            };
            let (z, t) = (get("zcap")?, get("tcpdump")?);
            Some(format!(
                "{rate} pps: CPU per packet, medians: zcap {:.0} ns, tcpdump {:.0}: {:.2}x; dropped (median) zcap {:.0}, tcpdump {:.0}",
                z.cpu_ns_per_pkt,
                t.cpu_ns_per_pkt,
                z.cpu_ns_per_pkt / t.cpu_ns_per_pkt,
                z.dropped,
                t.dropped
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tool: &str, rate: u64, captured: u64, dropped: u64, cpu: f64) -> SniffPrint {
        SniffPrint {
            tool: tool.into(),
            rate_pps: rate,
            sent: captured + dropped,
            achieved_pps: rate as f64,
            captured,
            received_by_filter: captured + dropped,
            dropped,
            cpu_ns_per_pkt: cpu,
            rusage_ns_per_pkt: cpu * 2.0,
            tz: None,
        }
    }

    #[test]
    fn the_runs_are_summarized_by_rate_and_tool_with_medians() {
        let all = [
            run("zcap -n", 1000, 100, 0, 3.0),
            run("tcpdump -n", 1000, 100, 0, 8.0),
            run("zcap -n", 1000, 90, 10, 1.0),
            run("tcpdump -n", 1000, 80, 20, 4.0),
            run("zcap -n", 1000, 100, 0, 2.0),
            run("tcpdump -n", 1000, 100, 0, 6.0),
            run("zcap -n", 5000, 500, 0, 1.0),
        ];
        let s = summarize(&all);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].rate_pps, s[0].tool.as_str()), (1000, "zcap -n"));
        assert_eq!(s[0].runs, 3);
        assert_eq!(s[0].cpu_ns_per_pkt, 2.0);
        assert_eq!((s[0].cpu_min, s[0].cpu_max), (1.0, 3.0));
        assert_eq!(s[0].rusage_ns_per_pkt, 4.0);
        assert_eq!(s[1].dropped, 0.0);
        assert_eq!(s[1].captured, 100.0);
        assert_eq!(s[1].cpu_ns_per_pkt, 6.0);
        assert_eq!(s[2].runs, 1);
        let lines = ratio_lines(&s);
        // 5000 pps has no tcpdump: no ratio.
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("1000 pps: "), "{}", lines[0]);
        assert!(
            lines[0].contains("zcap 2 ns, tcpdump 6: 0.33x"),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn the_drop_share_is_of_what_reached_the_ring() {
        let s = summarize(&[run("zcap -n", 1, 75, 25, 1.0)]);
        assert_eq!(s[0].drop_share, 0.25);
        assert_eq!(
            summarize(&[run("zcap -n", 1, 0, 0, 0.0)])[0].drop_share,
            0.0
        );
    }
}
