//! `rxbench sniff --latency`: a sniffer writing pcap to a pipe, packet-buffered (`-U -w -`),
//! on paced traffic; rxbench reads the pipe and measures, for every record, the time from the
//! kernel's receive timestamp (the record's) to the moment the record reaches rxbench. The
//! pipe hop is in every tool's figure alike.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use serde::Serialize;

use super::tally::new_histogram;
use super::{Bench, Latency};
use crate::report::text::{dedup, table};
use crate::sys;

/// One sniffer at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct SniffLatency {
    /// The sniffer, as named in the table.
    pub tool: String,
    /// Offered rate, packets per second.
    pub rate_pps: u64,
    /// Frames sent.
    pub sent: u64,
    /// Records read from the sniffer's pipe.
    pub received: u64,
    /// The sniffer's "dropped by kernel".
    pub dropped: u64,
    /// Kernel receive timestamp to the record's arrival at rxbench.
    pub latency: Latency,
    /// The sniffer's CPU (all threads, scheduler run time) per received packet, ns.
    pub cpu_ns_per_pkt: f64,
    /// Kernel receive timestamp to the sniffer's own handler, as the sniffer reports it
    /// (zcap --handler-latency; no cdf); `None` for a sniffer that does not.
    pub handler: Option<Latency>,
    /// /dev/cpu_dma_latency held at this many µs during the run (`--cpu-dma-latency`).
    pub cpu_dma_latency_us: Option<u32>,
}

/// zcap's "handler latency: p50 A us, p99 B us, p99.9 C us, max D us (N packets)".
fn parse_handler_latency(line: &str) -> Option<Latency> {
    let rest = line.strip_prefix("handler latency: ")?;
    let (figures, count) = rest.split_once(" (")?;
    let mut ns = figures.split(", ").map(|f| {
        let v: f64 = f.rsplit_once(' ')?.0.rsplit_once(' ')?.1.parse().ok()?;
        Some((v * 1000.0).round() as u64)
    });
    let mut next = || ns.next().flatten();
    Some(Latency {
        p50_ns: next()?,
        p99_ns: next()?,
        p999_ns: next()?,
        max_ns: next()?,
        samples: count.strip_suffix(" packets)")?.parse().ok()?,
        cdf: Vec::new(),
    })
}

/// Reads a pcap stream: per record, now minus its timestamp, into a histogram.
fn read_pcap(mut pipe: impl Read) -> Result<(u64, Histogram<u64>)> {
    let mut h = new_histogram();
    let mut header = [0u8; 24];
    if pipe.read_exact(&mut header).is_err() {
        return Ok((0, h));
    }
    let scale = match u32::from_le_bytes(header[..4].try_into()?) {
        0xa1b2_3c4d => 1,
        0xa1b2_c3d4 => 1000,
        m => bail!("not a little-endian pcap stream (magic {m:#x})"),
    };
    let mut n = 0;
    let mut rec = [0u8; 16];
    let mut data = vec![0u8; 1 << 18];
    while pipe.read_exact(&mut rec).is_ok() {
        let now = sys::realtime_ns();
        let word = |i: usize| u64::from(u32::from_le_bytes(rec[i..i + 4].try_into().unwrap()));
        let ts = word(0) * 1_000_000_000 + word(4) * scale;
        let caplen = (word(8) as usize).min(data.len());
        pipe.read_exact(&mut data[..caplen])?;
        let _ = h.record(now.saturating_sub(ts).max(1));
        n += 1;
    }
    Ok((n, h))
}

impl Bench {
    /// Runs `cmd` (it must write pcap to standard output, packet-buffered, and print
    /// "listening on" when ready) on `rate` packets/s of `size`-byte frames for `seconds`;
    /// the pipe is read on `reader_cpu` if given.
    pub fn sniff_latency(
        &mut self,
        name: &str,
        cmd: &[String],
        (rate, seconds, size): (u64, f64, usize),
        reader_cpu: Option<usize>,
    ) -> Result<SniffLatency> {
        let (mut child, rx) = self.start_sniffer(name, cmd, Stdio::piped())?;
        let pid = child.id();
        let pipe = child.stdout.take().expect("piped");
        // Buffered: a read returns what the pipe holds (it does not wait to fill), in fewer
        // system calls than two per record.
        let reader = std::thread::spawn(move || {
            if let Some(cpu) = reader_cpu {
                sys::pin_to_cpu(cpu)?;
            }
            read_pcap(std::io::BufReader::with_capacity(1 << 16, pipe))
        });
        let cpu0 = crate::lab::machine::proc_cpu_ns(pid);
        // Frames to a foreign MAC: the sniffers (promiscuous) see them, the stack drops them.
        let frames = self.frames(size, false);
        let sent = (rate as f64 * seconds) as u64;
        self.paced_send(&frames, sent, rate)?;
        std::thread::sleep(Duration::from_millis(300));
        let cpu1 = crate::lab::machine::proc_cpu_ns(pid);
        sys::interrupt(pid)?;
        let (code, _, _) = sys::wait_rusage(pid)?;
        let (received, hist) = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the pipe reader panicked"))??;
        std::thread::sleep(Duration::from_millis(100));
        let lines: Vec<String> = rx.try_iter().collect();
        if code != 0 {
            bail!("{name} exited with {code}: {}", lines.join("\n"));
        }
        let dropped = lines
            .iter()
            .find_map(|l| l.strip_suffix(" packets dropped by kernel"))
            .and_then(|n| n.trim().parse().ok())
            .with_context(|| format!("{name} printed no drop count: {}", lines.join(" / ")))?;
        Ok(SniffLatency {
            tool: name.to_string(),
            rate_pps: rate,
            sent,
            received,
            dropped,
            latency: Latency::from(&hist),
            cpu_ns_per_pkt: if received == 0 {
                0.0
            } else {
                cpu1.saturating_sub(cpu0) as f64 / received as f64
            },
            handler: lines.iter().find_map(|l| parse_handler_latency(l)),
            cpu_dma_latency_us: None,
        })
    }

    /// Sends `n` frames at `rate` per second: groups of `rate / 5 000` frames (at least one)
    /// every group interval (200 µs at 100 000/s), sleeping (with a 1 µs timer slack) or, for
    /// the last 60 µs, spinning until each is due: the generator shares the two cores with the
    /// sniffer and the reader, so it must not spin all the time.
    pub(super) fn paced_send(&mut self, frames: &[Vec<u8>], n: u64, rate: u64) -> Result<()> {
        sys::timer_slack_ns(1000)?;
        let group = (rate / 5_000).max(1);
        let every = Duration::from_secs_f64(group as f64 / rate as f64);
        let start = Instant::now();
        let mut i = 0u64;
        let mut k = 0u32;
        while i < n {
            let due = start + every * k;
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                let left = due - now;
                if left > Duration::from_micros(60) {
                    std::thread::sleep(left - Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
            }
            let m = group.min(n - i);
            let batch = (i..i + m).map(|j| frames[j as usize % frames.len()].as_slice());
            let sent = self.tx.send_batch(batch)?;
            if sent as u64 != m {
                bail!("generator sent {sent} of {m}");
            }
            i += m;
            k += 1;
        }
        Ok(())
    }
}

/// `sniff --latency`: per sniffer and rate, the median run (by p99).
pub fn text(all: &[SniffLatency]) -> String {
    let mut text = String::new();
    let keys = dedup(
        all.iter()
            .map(|r| (r.cpu_dma_latency_us, r.rate_pps, r.tool.clone())),
    );
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|(cap, rate, tool)| {
            let mut runs: Vec<_> = all
                .iter()
                .filter(|r| &r.tool == tool && r.rate_pps == *rate && r.cpu_dma_latency_us == *cap)
                .collect();
            runs.sort_by_key(|r| r.latency.p99_ns);
            let r = runs[runs.len() / 2];
            let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
            // The handler figures: median of the runs' p50 and of their p99.
            let handler = {
                let mut h: Vec<_> = runs.iter().filter_map(|r| r.handler.as_ref()).collect();
                if h.is_empty() {
                    "n/a".to_string()
                } else {
                    h.sort_by_key(|l| l.p50_ns);
                    let p50 = h[h.len() / 2].p50_ns;
                    h.sort_by_key(|l| l.p99_ns);
                    format!("{} / {}", us(p50), us(h[h.len() / 2].p99_ns))
                }
            };
            vec![
                tool.clone(),
                cap.map_or("default".into(), |us| format!("≤ {us} µs")),
                rate.to_string(),
                format!("{}/{}", r.received, r.sent),
                r.dropped.to_string(),
                us(r.latency.p50_ns),
                us(r.latency.p99_ns),
                us(r.latency.p999_ns),
                us(r.latency.max_ns),
                format!("{:.0}", r.cpu_ns_per_pkt),
                handler,
                runs.len().to_string(),
            ]
        })
        .collect();
    text.push_str("\nsniffer latency, kernel receive timestamp to the pcap record read from its pipe (-U -w -), 64 B frames (median run by p99); handler: to zcap's own handler (--handler-latency, medians over the runs); idle exit: /dev/cpu_dma_latency during the run:\n");
    text.push_str(&table(
        &[
            "sniffer",
            "idle exit",
            "pps",
            "received",
            "dropped",
            "p50 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "CPU ns/pkt",
            "handler p50 / p99 µs",
            "runs",
        ],
        &rows,
        false,
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zcap_handler_latency_line_is_read() {
        let l = parse_handler_latency(
            "handler latency: p50 7.5 us, p99 32.0 us, p99.9 936.1 us, max 2250.0 us (200000 packets)",
        )
        .unwrap();
        assert_eq!(
            (l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns, l.samples),
            (7_500, 32_000, 936_100, 2_250_000, 200_000)
        );
        assert!(parse_handler_latency("5 packets captured").is_none());
        assert!(parse_handler_latency("handler latency: p50 x us (1 packets)").is_none());
    }

    #[test]
    fn pcap_streams_in_both_precisions_are_read_record_by_record() {
        for (magic, frac, want_ns) in [
            (0xa1b2_3c4du32, 123_456_789u32, 123_456_789u64),
            (0xa1b2_c3d4, 123_456, 123_456_000),
        ] {
            let mut s = Vec::new();
            s.extend_from_slice(&magic.to_le_bytes());
            s.extend_from_slice(&[
                2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
            ]);
            // Two records, three and two seconds old (in whole seconds plus `frac`).
            let base = sys::realtime_ns() / 1_000_000_000 - 3;
            for sec in [base as u32, base as u32 + 1] {
                s.extend_from_slice(&sec.to_le_bytes());
                s.extend_from_slice(&frac.to_le_bytes());
                s.extend_from_slice(&3u32.to_le_bytes());
                s.extend_from_slice(&60u32.to_le_bytes());
                s.extend_from_slice(&[1, 2, 3]);
            }
            let (n, h) = read_pcap(&s[..]).unwrap();
            let now = sys::realtime_ns();
            assert_eq!(n, 2);
            assert_eq!(h.len(), 2, "both latencies recorded");
            // The oldest record's latency, as measured a moment before `now` (hdrhistogram
            // keeps 3 significant digits: within 0.1%, plus the test's own run time).
            let oldest = now - (base * 1_000_000_000 + want_ns);
            assert!(
                h.max() <= oldest + oldest / 1000 && h.max() + 100_000_000 >= oldest,
                "{} vs {oldest}",
                h.max()
            );
            assert!(h.min() + 900_000_000 < h.max(), "a second apart");
        }
        assert_eq!(read_pcap(&[][..]).unwrap().0, 0);
        assert!(read_pcap(&[0u8; 24][..]).is_err());
    }
}
