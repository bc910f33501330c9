//! An external sniffer (zcap, tcpdump) on the same traffic: its CPU per packet, captures and
//! drops.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use super::Bench;
use crate::lab::machine::{proc_cpu_ns, ProcStat};
use crate::report::stats::median;
use crate::report::text::table;
use crate::sys;

/// Stands for the receiving interface in a sniffer's command line: the lab, and so the
/// interface's name, exists only once the trial runs, which fills it in.
pub const IFACE: &str = "{iface}";

/// One sniffer on the same traffic.
#[derive(Debug, Clone, Serialize)]
pub struct SniffResult {
    /// The command, as run in the receiving namespace.
    pub tool: String,
    /// Frame size (the mean, for traffic of mixed sizes).
    pub frame_bytes: usize,
    /// The traffic when not UDP flows of one size (`--traffic`), e.g. "4096 TLS connections".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic: Option<String>,
    /// Frames sent.
    pub sent: u64,
    /// What the sniffer reported: packets captured.
    pub captured: u64,
    /// Packets received by filter (its kernel counter).
    pub received_by_filter: u64,
    /// Packets dropped by the kernel (its ring was full).
    pub dropped: u64,
    /// The sniffer's CPU time (all its threads, scheduler run time from
    /// /proc/PID/task/*/schedstat, ns-precise) per captured packet while the traffic flowed.
    pub cpu_ns_per_pkt: f64,
    /// Whole-machine busy CPU per sent packet (generator included), ns.
    pub machine_ns_per_sent: f64,
}

/// An external sniffer in a capacity search.
#[derive(Debug, Clone)]
pub struct SnifferSpec {
    /// The sniffer's name in the tables (`zcap -w /dev/null`, ...).
    pub name: String,
    /// The command, run in the receiving namespace ([`IFACE`] stands for the
    /// receiving interface).
    pub cmd: Vec<String>,
    /// The file it writes (not a device): its size is measured after each trial (the
    /// compression ratio), then it is removed.
    pub output: Option<PathBuf>,
    /// A FIFO created before each trial (and removed after) for the sniffer to write into...
    pub fifo: Option<PathBuf>,
    /// ...and the process that reads it, started before the sniffer and waited for after it
    /// ends (a compressor: `zstd -1 < FIFO > FILE`, run by `sh -c`).
    pub reader: Option<Vec<String>>,
}

impl SnifferSpec {
    /// A sniffer that writes `output` (if not a device) and needs nothing else.
    pub fn new(name: impl Into<String>, cmd: Vec<String>) -> SnifferSpec {
        let output = cmd
            .windows(2)
            .find(|w| w[0] == "-w" && !w[1].starts_with("/dev/") && w[1] != "-")
            .map(|w| PathBuf::from(&w[1]));
        SnifferSpec {
            name: name.into(),
            cmd,
            output,
            fifo: None,
            reader: None,
        }
    }
    /// Before a trial: the FIFO made and its reader started. The guards remove the output
    /// and the FIFO, and kill a reader still running, however the trial ends.
    fn prepare(&self) -> Result<(Option<RemoveOnDrop>, Option<RemoveOnDrop>, KillOnDrop)> {
        let remove = (
            self.output.clone().map(RemoveOnDrop),
            self.fifo.clone().map(RemoveOnDrop),
        );
        if let Some(f) = &self.fifo {
            let _ = std::fs::remove_file(f);
            let made = std::process::Command::new("mkfifo")
                .args(["-m", "600"])
                .arg(f)
                .status()
                .with_context(|| format!("mkfifo {}", f.display()))?;
            if !made.success() {
                bail!("mkfifo {}: {made}", f.display());
            }
        }
        let reader = match &self.reader {
            Some(r) => Some(
                std::process::Command::new(&r[0])
                    .args(&r[1..])
                    .spawn()
                    .with_context(|| format!("starting {}'s reader", self.name))?,
            ),
            None => None,
        };
        Ok((remove.0, remove.1, KillOnDrop(reader)))
    }
}

impl Bench {
    /// Runs `cmd` (a sniffer) in the receiving namespace while the run's packets are sent,
    /// cycling over `frames`; it must print a line containing "listening on" when ready and
    /// tcpdump-style counts on SIGINT.
    pub fn sniff(&mut self, name: &str, cmd: &[String], frames: &[Vec<u8>]) -> Result<SniffResult> {
        crate::lab::interrupt::check()?;
        let (child, rx) = self.start_sniffer(name, cmd, std::process::Stdio::null())?;
        let pid = child.id();
        // Its CPU so far is set-up (ring allocation and zeroing, flow table): not per packet.
        let setup = proc_cpu_ns(pid);
        let sent = self.config.packets;
        let stat0 = ProcStat::read();
        let n = sent as usize;
        self.tx
            .send_batch((0..n).map(|i| frames[i % frames.len()].as_slice()))?;
        // Let the last block time out and the sniffer drain it.
        std::thread::sleep(Duration::from_millis(500));
        let stat1 = ProcStat::read();
        // Its CPU while the traffic flowed: both readings from /proc, set-up and tear-down out.
        let end = proc_cpu_ns(pid);
        let counts = stop_sniffer(name, pid, &rx)?;
        let count = |what: &str| counts.count(what);
        let captured = count(" packets captured")?;
        let cpu = end.saturating_sub(setup);
        let per = |ns: u64| {
            if captured == 0 {
                0.0
            } else {
                ns as f64 / captured as f64
            }
        };
        Ok(SniffResult {
            tool: name.to_string(),
            frame_bytes: crate::lab::handshakes::mean_len(frames),
            traffic: None,
            sent,
            captured,
            received_by_filter: count(" packets received by filter")?,
            dropped: count(" packets dropped by kernel")?,
            cpu_ns_per_pkt: per(cpu),
            machine_ns_per_sent: stat1.busy_ns.saturating_sub(stat0.busy_ns) as f64 / sent as f64,
        })
    }

    /// One capacity trial of an external sniffer: its command started in the receiving
    /// namespace (the caller places it on `rx_cpu`; a FIFO reader first, if it has one),
    /// `offer` sends frames to a foreign MAC (what the sniffer sees and nothing else takes),
    /// then the sniffer is stopped with SIGINT and its own counts read: the frames it did not
    /// report captured are lost. The file it wrote is measured, then removed.
    pub fn sniff_trial(
        &mut self,
        spec: &SnifferSpec,
        size: usize,
        rx_cpu: usize,
        offer: impl FnOnce(&zcrx_ring::lab::Lab, &[u8]) -> Result<crate::lab::generator::Offered>,
    ) -> Result<super::Trial> {
        let name = spec.name.as_str();
        let frames = self.frames(size, false);
        let cmd: Vec<String> = spec
            .cmd
            .iter()
            .map(|a| a.replace(IFACE, &self.lab.b.iface))
            .collect();
        let (_remove, _remove_fifo, mut reader) = spec.prepare()?;
        let (child, rx) = self.start_sniffer(name, &cmd, std::process::Stdio::null())?;
        let pid = child.id();
        let stop = |why: anyhow::Error| {
            let _ = sys::interrupt(pid);
            let _ = sys::wait_rusage(pid);
            why
        };
        let stat0 = ProcStat::read_cpu(rx_cpu);
        let steal0 = ProcStat::read().steal_ns;
        let b_rx0 = crate::lab::generator::received_at(&self.lab.b).map_err(stop)?;
        let offered = offer(&self.lab, &frames[0]).map_err(stop)?;
        // tcpdump's libpcap hands over a block only when it fills or its 1 s timeout
        // passes: wait it out, so that a sniffer is not charged with frames still in its ring.
        std::thread::sleep(Duration::from_millis(1200));
        let receiver_cpus = crate::lab::generator::task_cpus(&pid.to_string());
        let stat1 = ProcStat::read_cpu(rx_cpu);
        let steal1 = ProcStat::read().steal_ns;
        let b_rx1 = crate::lab::generator::received_at(&self.lab.b).map_err(stop)?;
        let counts = stop_sniffer(name, pid, &rx)?;
        let count = |what: &str| counts.count(what);
        let captured = count(" packets captured")?;
        // The FIFO's reader sees its end and finishes its file.
        if let Some(mut r) = reader.0.take() {
            let status = r.wait().context("waiting for the FIFO's reader")?;
            if !status.success() {
                bail!("{name}'s reader: {status}");
            }
        }
        let written_bytes = spec
            .output
            .as_ref()
            .and_then(|f| std::fs::metadata(f).ok())
            .map(|m| m.len());
        let sent = offered.frames;
        Ok(super::Trial {
            mode: name.to_string(),
            frame_bytes: size,
            offered_mpps: offered.pps() / 1e6,
            sent,
            delivered: captured,
            lost: sent.saturating_sub(captured),
            late: 0,
            written_bytes,
            veth_rx_dropped: b_rx1.1.saturating_sub(b_rx0.1),
            kernel_dropped: count(" packets dropped by kernel")?,
            rx_cpu_ns_per_delivered: if captured == 0 {
                0.0
            } else {
                stat1.busy_ns.saturating_sub(stat0.busy_ns) as f64 / captured as f64
            },
            steal_ms: steal1.saturating_sub(steal0) as f64 / 1e6,
            generator_cpu: offered.ran_on,
            napi_cpus: Vec::new(),
            receiver_cpus,
            path: None,
            napi_ns_per_frame: None,
            cpu_link: None,
        })
    }

    /// Starts `cmd` (a sniffer) in the receiving namespace with `stdout`, and waits for the
    /// line containing "listening on" it prints on standard error when ready. Returns the
    /// child and the rest of its standard error, line by line.
    pub(super) fn start_sniffer(
        &self,
        name: &str,
        cmd: &[String],
        stdout: std::process::Stdio,
    ) -> Result<(std::process::Child, std::sync::mpsc::Receiver<String>)> {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.lab.b.netns])
            .args(cmd)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let err = child.stderr.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(l) if l.contains("listening on") => return Ok((child, rx)),
                Ok(_) => {}
                Err(_) if Instant::now() > deadline => {
                    let _ = child.kill();
                    bail!("{name} did not start listening within 10 s");
                }
                Err(_) => {}
            }
        }
    }

    /// One UDP frame of `size` bytes per flow, to the receiving stack.
    pub fn udp_frames(&self, size: usize) -> Vec<Vec<u8>> {
        self.frames(size, true)
    }

    /// The receiving namespace (where the sniffers run).
    pub fn rx_netns(&self) -> &str {
        &self.lab.b.netns
    }

    /// The receiving interface.
    pub fn rx_iface(&self) -> &str {
        &self.lab.b.iface
    }
}

/// Kills and reaps a helper process still running when dropped (a trial that failed).
struct KillOnDrop(Option<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Removes a file when dropped (a sniffer's output, however the trial ends).
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What a sniffer printed on standard error after it was stopped, and its whole life's CPU.
pub(super) struct SnifferCounts {
    name: String,
    lines: Vec<String>,
    /// User plus system time over the sniffer's whole life (wait4's rusage), ns.
    pub(super) user_sys_ns: u64,
}

impl SnifferCounts {
    /// The number on the line ending in `what` (tcpdump's " packets captured", ...).
    pub(super) fn count(&self, what: &str) -> Result<u64> {
        self.lines
            .iter()
            .find_map(|l| l.strip_suffix(what).and_then(|n| n.trim().parse().ok()))
            .with_context(|| {
                format!(
                    "{} printed no \"{what}\" line: {}",
                    self.name,
                    self.lines.join(" / ")
                )
            })
    }
}

/// Stops sniffer `pid` with SIGINT, waits for it, and collects the rest of its standard
/// error; a non-zero exit is the error.
pub(super) fn stop_sniffer(
    name: &str,
    pid: u32,
    rx: &std::sync::mpsc::Receiver<String>,
) -> Result<SnifferCounts> {
    sys::interrupt(pid)?;
    let (code, user, system) = sys::wait_rusage(pid)?;
    std::thread::sleep(Duration::from_millis(100));
    let lines: Vec<String> = rx.try_iter().collect();
    if code != 0 {
        bail!("{name} exited with {code}: {}", lines.join("\n"));
    }
    Ok(SnifferCounts {
        name: name.to_string(),
        lines,
        user_sys_ns: user + system,
    })
}

/// sniffers on the same traffic: CPU per packet medians and ratios.
pub fn text(sn: &[SniffResult]) -> String {
    let (rows, medians) = rows(sn);
    let mut text = String::new();
    text.push_str(&table(
        &[
            "size",
            "sniffer",
            "runs",
            "sent",
            "captured",
            "dropped",
            "cpu ns/pkt (median)",
            "min..max",
            "machine ns/sent",
        ],
        &rows,
        false,
    ));
    for size in medians
        .iter()
        .map(|m| m.0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        text.push_str(&ratios(size, &medians));
    }
    text
}

/// A sniffer's median CPU per packet at a frame size: (size, sniffer, ns).
type Median = (usize, String, f64);

/// The table's rows, one per frame size and sniffer over its runs, and each one's median.
fn rows(sn: &[SniffResult]) -> (Vec<Vec<String>>, Vec<Median>) {
    let mut rows = Vec::new();
    let mut medians: Vec<Median> = Vec::new();
    for r in sn {
        if medians
            .iter()
            .any(|m| m.0 == r.frame_bytes && m.1 == r.tool)
        {
            continue;
        }
        let runs: Vec<&SniffResult> = sn
            .iter()
            .filter(|x| x.frame_bytes == r.frame_bytes && x.tool == r.tool)
            .collect();
        let cpu = median(runs.iter().map(|x| x.cpu_ns_per_pkt).collect());
        let spread = runs
            .iter()
            .map(|x| x.cpu_ns_per_pkt)
            .fold(f64::INFINITY, f64::min)
            ..=runs.iter().map(|x| x.cpu_ns_per_pkt).fold(0.0, f64::max);
        medians.push((r.frame_bytes, r.tool.clone(), cpu));
        rows.push(vec![
            match &r.traffic {
                Some(t) => format!("{t} (mean {} B)", r.frame_bytes),
                None => r.frame_bytes.to_string(),
            },
            r.tool.clone(),
            runs.len().to_string(),
            runs.iter().map(|x| x.sent).sum::<u64>().to_string(),
            runs.iter().map(|x| x.captured).sum::<u64>().to_string(),
            runs.iter().map(|x| x.dropped).sum::<u64>().to_string(),
            format!("{cpu:.0}"),
            format!("{:.0}..{:.0}", spread.start(), spread.end()),
            format!(
                "{:.0}",
                median(runs.iter().map(|x| x.machine_ns_per_sent).collect())
            ),
        ]);
    }
    (rows, medians)
}

/// At frame size `size`: zcap's CPU per packet against tcpdump's, and `--names`' cost.
fn ratios(size: usize, medians: &[Median]) -> String {
    let mut text = String::new();
    let get = |t: &str| {
        medians
            .iter()
            .find(|m| m.0 == size && m.1.starts_with(t))
            .map(|m| (m.1.as_str(), m.2))
    };
    if let (Some((zn, z)), Some((_, f)), Some((tn, t))) =
        (get("zcap -w"), get("zcap --flows"), get("tcpdump"))
    {
        text.push_str(&format!(
            "{size} B: CPU per packet, medians: {zn} {:.2}x {tn}; zcap --flows {:.2}x",
            z / t,
            f / t
        ));
        if let Some((fwn, fw)) = get("zcap --flows -w") {
            text.push_str(&format!("; {fwn} {:.2}x", fw / t));
        }
        text.push('\n');
    }
    // Exact names: "zcap --flows" is the start of the names runs' names too.
    let exact = |t: &str| {
        medians
            .iter()
            .find(|m| m.0 == size && m.1 == t)
            .map(|m| m.2)
    };
    let names = |t: &str| exact(&t.replacen("--flows", "--flows --names", 1));
    let written = medians
        .iter()
        .find(|m| m.0 == size && m.1.starts_with("zcap --flows -w"))
        .map(|m| m.1.clone());
    for base in std::iter::once("zcap --flows".to_string()).chain(written) {
        if let (Some(off), Some(on)) = (exact(&base), names(&base)) {
            text.push_str(&format!(
                "{size} B: names: {} {on:.0} ns/pkt against {base} {off:.0}: {:.2}x, +{:.0} ns\n",
                base.replacen("--flows", "--flows --names", 1),
                on / off,
                on - off
            ));
        }
    }
    text
}
