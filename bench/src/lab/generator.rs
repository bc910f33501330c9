//! Generators that outrun the receivers, for capacity measurements: the in-kernel `xdp-live`
//! generator (an `XDP_TX` program run by `BPF_PROG_TEST_RUN` with live frames, out of the
//! sending veth) beside the TX ring, each on a CPU of its own; the receiving veth prepared to
//! take XDP frames (GRO on) with its packet processing in a threaded-NAPI kernel thread pinned
//! to the other CPU; and `rxbench generators`, which measures what each generator offers.
//!
//! Placement is checked, not assumed: after a run the generator thread's and the NAPI
//! thread's last CPU are read back from `/proc/.../stat` (field 39).

use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use zcrx_ring::frames::{UdpFlow, DPORT_BASE, SPORT_BASE};
use zcrx_ring::lab::{Lab, Side};
use zcrx_ring::TxRing;

use crate::lab::machine::{netdev_column, proc_cpu_ns};
use crate::report::stats::median;
use crate::report::text::{dedup, table};
use crate::sys;
use crate::sys::xdp_live::{monotonic_ns, MixSize, State, XdpGenerator};

/// The CPU the generators run on; the receiver (its NAPI thread and its user-space threads)
/// gets the last CPU.
pub const GENERATOR_CPU: usize = 0;

/// The receiving NAPI thread's SCHED_FIFO priority (the middle of the range, as threaded
/// interrupt handlers get).
const NAPI_PRIORITY: i32 = 50;

/// What a generator offered.
#[derive(Debug, Clone, Copy)]
pub struct Offered {
    /// Frames handed to the kernel.
    pub frames: u64,
    /// Wall time from the first frame to the last, seconds.
    pub wall_s: f64,
    /// The generator thread's CPU time (user + system), ns.
    pub cpu_ns: u64,
    /// The CPU the generator thread last ran on (`/proc/thread-self/stat` field 39).
    pub ran_on: Option<usize>,
}

impl Offered {
    /// Frames per second offered.
    pub fn pps(&self) -> f64 {
        self.frames as f64 / self.wall_s.max(1e-9)
    }
}

/// IMIX: frame lengths and how many of each in a cycle of 12 (7:4:1 of 64, 576 and
/// 1500 B), as the xdp-live generator interleaves them ([`XdpLive::offer_imix`]).
pub const IMIX: [(usize, u64); 3] = [(64, 7), (576, 4), (1500, 1)];

/// IMIX's mean frame length, bytes (4252 / 12).
pub fn imix_mean_bytes() -> f64 {
    let (bytes, frames) = IMIX
        .iter()
        .fold((0, 0), |(b, f), &(len, n)| (b + len as u64 * n, f + n));
    bytes as f64 / frames as f64
}

/// The in-kernel generator: the loaded program and its state.
pub struct XdpLive {
    gen: XdpGenerator,
}

impl XdpLive {
    /// Loads the program for the lab's flows (ports counting up from [`SPORT_BASE`] and
    /// [`DPORT_BASE`]); needs CAP_BPF or root, and the kernel's refusal is the error.
    pub fn load() -> Result<XdpLive> {
        sys::xdp_live::install_wake_signal().context("installing the SIGUSR1 handler")?;
        Ok(XdpLive {
            gen: XdpGenerator::load(SPORT_BASE, DPORT_BASE)?,
        })
    }

    /// Offers `flows` flows for `duration` out of `a`'s veth, at `rate` frames per second
    /// (paced by the program against the clock, frame by frame) or, without, as fast as the
    /// kernel goes. `frame` is flow 0's frame; the program gives flow `k` (round robin) the
    /// ports of flow 0 plus `k`. The run happens on a thread in `a`'s namespace pinned to
    /// `cpu`; the frames offered are the program's own count.
    pub fn offer(
        &self,
        a: &Side,
        frame: &[u8],
        flows: usize,
        duration: Duration,
        rate: Option<f64>,
        cpu: usize,
    ) -> Result<Offered> {
        self.run(a, frame, None, flows, duration, rate, cpu)
    }

    /// As [`XdpLive::offer`], the frames IMIX ([`IMIX`]): `frame` is flow 0's frame of
    /// 1500 B, which the program trims to each frame's length (writing that length's IPv4
    /// and UDP lengths and header checksum), 7 of 64 B, 4 of 576 and 1 of 1500 in every 12,
    /// interleaved. `rate` counts frames.
    pub fn offer_imix(
        &self,
        a: &Side,
        frame: &[u8],
        flows: usize,
        duration: Duration,
        rate: Option<f64>,
        cpu: usize,
    ) -> Result<Offered> {
        let longest = IMIX[IMIX.len() - 1].0;
        if frame.len() != longest || frame.len() < 42 {
            bail!("xdp-live: the IMIX template is a {longest}-byte UDP frame");
        }
        let sizes = IMIX.map(|(len, _)| MixSize::of(frame, len));
        self.run(a, frame, Some(sizes), flows, duration, rate, cpu)
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        a: &Side,
        frame: &[u8],
        mix: Option<[MixSize; 3]>,
        flows: usize,
        duration: Duration,
        rate: Option<f64>,
        cpu: usize,
    ) -> Result<Offered> {
        let interval_ns = match rate {
            Some(r) if r > 0.0 => (1e9 / r).round() as u64,
            Some(_) => bail!("xdp-live: the rate must be positive"),
            None => 0,
        };
        // The run's set-up takes a few ms: the first frame is due a little after the call.
        let start_ns = monotonic_ns() + 30_000_000;
        let end_ns = start_ns + duration.as_nanos() as u64;
        self.gen.set_state(&State {
            next_due_ns: start_ns,
            interval_ns,
            end_ns,
            sent: 0,
            flows: flows.max(1) as u64,
            mix: u64::from(mix.is_some()),
            sizes: mix.unwrap_or_default(),
        })?;
        let iface = a.iface.clone();
        // Whether the generator thread still lives: it clears this, under the lock, as its
        // last act, and the signal is sent only under the lock, so it never reaches a thread
        // that has gone.
        let alive = Mutex::new(true);
        let (tx, rx) = std::sync::mpsc::channel();
        let (cpu_ns, ran_on) = std::thread::scope(|s| -> Result<(u64, Option<usize>)> {
            // Stops the run once the end has passed (again and again, in case the signal
            // came before the call began).
            let alive = &alive;
            s.spawn(move || {
                let Ok(thread) = rx.recv() else { return };
                std::thread::sleep(Duration::from_nanos(
                    end_ns.saturating_sub(monotonic_ns()) + 5_000_000,
                ));
                loop {
                    let living = alive.lock().unwrap_or_else(|p| p.into_inner());
                    if !*living {
                        return;
                    }
                    let _ = sys::xdp_live::interrupt(thread);
                    drop(living);
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let result = a.run(|| -> Result<(u64, Option<usize>)> {
                let _leaving = Leaving(alive);
                let _ = tx.send(sys::xdp_live::this_thread());
                sys::pin_to_cpu(cpu).context("pinning the generator")?;
                let ifindex = sys::ifindex(&iface).context("the sending veth's index")?;
                let (u0, s0) = sys::thread_cpu();
                self.gen.run(ifindex, frame, u32::MAX)?;
                let (u1, s1) = sys::thread_cpu();
                Ok(((u1 - u0) + (s1 - s0), last_cpu("thread-self")))
            });
            drop(tx);
            result?
        })?;
        let state = self.gen.state()?;
        Ok(Offered {
            frames: state.sent,
            wall_s: duration.as_secs_f64(),
            cpu_ns,
            ran_on,
        })
    }
}

/// Clears the generator thread's "alive" flag, under its lock, when the thread leaves its work
/// (however it leaves).
struct Leaving<'a>(&'a Mutex<bool>);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = false;
    }
}

/// Offers `frames` in order, again and again, through the TX ring (qdisc bypass) for
/// `duration`, from a thread pinned to `cpu`: at `rate` frames per second (paced in batches
/// of [`PACED_BATCH`] against the clock, sleeping when a batch is more than 200 µs ahead) or,
/// without, as fast as the ring takes them. For traffic that is a sequence of different
/// frames (connections: handshake, data, close), which the xdp-live generator, rewriting one
/// frame's ports, cannot offer.
pub fn offer_tx_ring_paced(
    tx: &mut TxRing,
    frames: &[Vec<u8>],
    duration: Duration,
    rate: Option<f64>,
    cpu: usize,
) -> Result<Offered> {
    if frames.is_empty() {
        bail!("tx-ring: no frames to offer");
    }
    if rate.is_some_and(|r| r <= 0.0 || !r.is_finite()) {
        bail!("tx-ring: the rate must be positive");
    }
    std::thread::scope(|s| {
        s.spawn(|| -> Result<Offered> {
            sys::pin_to_cpu(cpu).context("pinning the generator")?;
            let (u0, s0) = sys::thread_cpu();
            let start = Instant::now();
            let (mut sent, mut next) = (0u64, 0usize);
            loop {
                let now = start.elapsed();
                if now >= duration {
                    break;
                }
                if let Some(r) = rate {
                    let due = Duration::from_secs_f64(sent as f64 / r);
                    if due > now {
                        let ahead = due - now;
                        if ahead > Duration::from_micros(200) {
                            std::thread::sleep(ahead - Duration::from_micros(100));
                        } else {
                            std::hint::spin_loop();
                        }
                        continue;
                    }
                }
                let batch = (0..PACED_BATCH).map(|k| frames[(next + k) % frames.len()].as_slice());
                let n = tx.send_batch(batch)?;
                next = (next + n) % frames.len();
                sent += n as u64;
            }
            let wall_s = start.elapsed().as_secs_f64();
            let (u1, s1) = sys::thread_cpu();
            Ok(Offered {
                frames: sent,
                wall_s,
                cpu_ns: (u1 - u0) + (s1 - s0),
                ran_on: last_cpu("thread-self"),
            })
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the TX ring generator panicked"))?
    })
}

/// Frames a paced TX ring hands the kernel at once ([`offer_tx_ring_paced`]).
pub const PACED_BATCH: usize = 32;

/// Offers `total` frames through the TX ring (qdisc bypass), cycling over `frames`, from a
/// thread pinned to `cpu`, as fast as the ring takes them.
pub fn offer_tx_ring(
    tx: &mut TxRing,
    frames: &[Vec<u8>],
    total: u64,
    cpu: usize,
) -> Result<Offered> {
    std::thread::scope(|s| {
        s.spawn(|| -> Result<Offered> {
            sys::pin_to_cpu(cpu).context("pinning the generator")?;
            let (u0, s0) = sys::thread_cpu();
            let start = Instant::now();
            let n = total as usize;
            let sent = tx.send_batch((0..n).map(|i| frames[i % frames.len()].as_slice()))?;
            let wall_s = start.elapsed().as_secs_f64();
            let (u1, s1) = sys::thread_cpu();
            Ok(Offered {
                frames: sent as u64,
                wall_s,
                cpu_ns: (u1 - u0) + (s1 - s0),
                ran_on: last_cpu("thread-self"),
            })
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the TX ring generator panicked"))?
    })
}

/// The receiving side made ready for XDP frames and pinned: GRO on for `b`'s veth (a veth
/// accepts frames redirected to it only then, or with an XDP program of its own), its NAPI
/// threaded, every NAPI thread of the device pinned to `cpu` and run under SCHED_FIFO.
#[derive(Debug, Clone)]
pub struct Receiver {
    /// The NAPI kernel threads of the receiving veth (`napi/IFACE-ID`).
    pub napi_pids: Vec<u32>,
}

impl Receiver {
    /// Prepares `b` (see the type).
    pub fn prepare(b: &Side, cpu: usize) -> Result<Receiver> {
        let iface = b.iface.clone();
        b.run(move || sys::set_gro(&iface, true))?
            .with_context(|| {
                format!(
                    "turning GRO on for {} (ethtool -K {} gro on)",
                    b.iface, b.iface
                )
            })?;
        // sysfs shows the namespace of whoever mounted it: `ip netns exec` mounts b's.
        let threaded = format!("echo 1 > /sys/class/net/{}/threaded", b.iface);
        let out = std::process::Command::new("ip")
            .args(["netns", "exec", &b.netns, "sh", "-c", &threaded])
            .output()
            .context("running ip netns exec")?;
        if !out.status.success() {
            bail!(
                "threaded NAPI for {}: {}",
                b.iface,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let napi_pids = napi_threads(&b.iface);
        if napi_pids.is_empty() {
            bail!(
                "no napi/{}-* kernel thread after threaded NAPI was turned on",
                b.iface
            );
        }
        for &pid in &napi_pids {
            sys::pin_task(pid, cpu).with_context(|| format!("pinning NAPI thread {pid}"))?;
            // Under SCHED_FIFO, as a softirq preempts the thread it interrupts: a NAPI thread
            // of the ordinary class waits behind a busy receiver on its CPU for up to a time
            // slice, and the veth's queue of 256 XDP frames overflows meanwhile.
            sys::set_fifo(pid, NAPI_PRIORITY)
                .with_context(|| format!("SCHED_FIFO for NAPI thread {pid}"))?;
        }
        Ok(Receiver { napi_pids })
    }

    /// The CPUs the NAPI threads last ran on, for those that ran since `since` (their run
    /// times, [`Receiver::run_ns`]): a thread that did not run has no CPU to report.
    pub fn napi_cpus(&self, since: &[u64]) -> Vec<Option<usize>> {
        self.napi_pids
            .iter()
            .zip(self.run_ns())
            .zip(since)
            .filter(|((_, now), before)| now > before)
            .map(|((p, _), _)| last_cpu(&p.to_string()))
            .collect()
    }

    /// Each NAPI thread's time on a CPU so far, ns (`/proc/PID/schedstat`).
    pub fn run_ns(&self) -> Vec<u64> {
        self.napi_pids.iter().map(|&p| proc_cpu_ns(p)).collect()
    }

    /// The NAPI threads' time on a CPU since `since` (their [`Receiver::run_ns`]), ns.
    pub fn run_ns_since(&self, since: &[u64]) -> u64 {
        self.run_ns()
            .iter()
            .zip(since)
            .map(|(now, before)| now.saturating_sub(*before))
            .sum()
    }
}

/// The pids of the kernel threads named `napi/IFACE-*`.
fn napi_threads(iface: &str) -> Vec<u32> {
    let prefix = format!("napi/{iface}-");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end().starts_with(&prefix))
        })
        .collect()
}

/// Field 39 (`processor`: the CPU it last ran on) of `/proc/TASK/stat`; `TASK` is a pid or
/// `thread-self`.
pub fn last_cpu(task: &str) -> Option<usize> {
    last_cpu_in(&std::fs::read_to_string(format!("/proc/{task}/stat")).ok()?)
}

/// The CPUs the threads of process `pid` (or `self`) last ran on, each CPU once, in order;
/// rxbench's signal thread ([`crate::lab::interrupt::THREAD`]), which is no receiver, left out.
pub fn task_cpus(pid: &str) -> Vec<usize> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut cpus: Vec<usize> = dir
        .filter_map(|e| {
            let tid = e.ok()?.file_name().to_str()?.to_string();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
            if crate::sys::stat_comm(&stat) == Some(crate::lab::interrupt::THREAD) {
                return None;
            }
            last_cpu_in(&stat)
        })
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

fn last_cpu_in(stat: &str) -> Option<usize> {
    crate::sys::stat_field(stat, 39)?.parse().ok()
}

/// Received and dropped frames of `iface` in the calling thread's namespace (/proc/net/dev:
/// rx packets and rx drop); `None` if the interface is not there.
pub(crate) fn rx_counters(iface: &str) -> Option<(u64, u64)> {
    let dev = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
    rx_counters_in(&dev, iface)
}

fn rx_counters_in(dev: &str, iface: &str) -> Option<(u64, u64)> {
    Some((netdev_column(dev, iface, 1)?, netdev_column(dev, iface, 3)?))
}

/// One generator at one frame size, into a receiver that takes nothing (a foreign MAC).
#[derive(Debug, Clone, Serialize)]
pub struct GeneratorPoint {
    /// `tx-ring` or `xdp-live`.
    pub generator: String,
    /// Frame size, bytes.
    pub frame_bytes: usize,
    /// Frames offered.
    pub frames: u64,
    /// Offered rate, million frames per second.
    pub offered_mpps: f64,
    /// The generator thread's CPU time per frame, ns.
    pub cpu_ns_per_frame: f64,
    /// Frames the receiving veth counted as received.
    pub received: u64,
    /// Frames the receiving veth counted as dropped.
    pub dropped: u64,
    /// The CPU the generator thread last ran on.
    pub generator_cpu: Option<usize>,
    /// The receiving veth's NAPI threads' time on a CPU per frame offered, ns: the receiving
    /// kernel's cost of taking each frame (0 where the frames did not go through NAPI).
    pub napi_ns_per_frame: f64,
    /// The CPUs the receiving veth's NAPI threads ran on (last seen), those that ran.
    pub napi_cpus: Vec<Option<usize>>,
}

/// `rxbench generators`: each generator offers frames of each size over `flows` flows to a
/// foreign MAC (the receiving stack discards them at once), as fast as it can, from the
/// generator CPU, the receiving veth's NAPI thread on the last CPU: the TX ring `packets`
/// frames, xdp-live for `duration`, as fast as it goes or paced at `rate` frames per second.
/// `runs` interleaved runs of both; with `isolate_rx_cpu`, every other task that may run
/// elsewhere kept off the last CPU ([`crate::lab::isolate`]).
pub fn compare(
    sizes: &[usize],
    flows: usize,
    packets: u64,
    duration: Duration,
    rate: Option<f64>,
    runs: usize,
    isolate_rx_cpu: bool,
) -> Result<Vec<GeneratorPoint>> {
    let _held = crate::lab::interrupt::Lab::hold();
    let lab = Lab::new().context("creating the netns lab (needs root and iproute2)")?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let receiver = Receiver::prepare(&lab.b, cpus - 1)?;
    // Released when the runs end, before the lab goes.
    let _isolated = isolate_rx_cpu
        .then(|| crate::lab::isolate::Isolated::cpu(cpus - 1))
        .transpose()?;
    let xdp = XdpLive::load()?;
    let iface = lab.a.iface.clone();
    let mut tx = lab
        .a
        .run(move || TxRing::builder(iface).frame_count(8192).build())??;
    let mut points = Vec::new();
    for _ in 0..runs {
        for &size in sizes {
            let frames: Vec<Vec<u8>> = (0..flows)
                .map(|i| {
                    UdpFlow::lab(&lab.a, &lab.b, i as u16, DPORT_BASE + i as u16, false)
                        .frame(i as u64, size)
                })
                .collect();
            for generator in ["tx-ring", "xdp-live"] {
                crate::lab::interrupt::check()?;
                let before = received_at(&lab.b)?;
                let napi_before = receiver.run_ns();
                let offered = if generator == "xdp-live" {
                    xdp.offer(&lab.a, &frames[0], flows, duration, rate, GENERATOR_CPU)?
                } else {
                    offer_tx_ring(&mut tx, &frames, packets, GENERATOR_CPU)?
                };
                std::thread::sleep(Duration::from_millis(50)); // the receiver drains
                let after = received_at(&lab.b)?;
                let napi_ns = receiver.run_ns_since(&napi_before);
                points.push(GeneratorPoint {
                    generator: generator.into(),
                    frame_bytes: size,
                    frames: offered.frames,
                    offered_mpps: offered.pps() / 1e6,
                    cpu_ns_per_frame: offered.cpu_ns as f64 / offered.frames.max(1) as f64,
                    received: after.0 - before.0,
                    dropped: after.1 - before.1,
                    generator_cpu: offered.ran_on,
                    napi_ns_per_frame: napi_ns as f64 / offered.frames.max(1) as f64,
                    napi_cpus: receiver.napi_cpus(&napi_before),
                });
            }
        }
    }
    Ok(points)
}

/// [`rx_counters`] of `b`'s veth, read in `b`'s namespace: an error if it is gone (a count
/// of 0 would read as every frame sent lost).
pub fn received_at(b: &Side) -> Result<(u64, u64)> {
    let iface = b.iface.clone();
    b.run(move || rx_counters(&iface))?
        .with_context(|| format!("no {} in {}'s /proc/net/dev", b.iface, b.netns))
}

/// `generators`: per generator and size, the median run by offered rate, and the ratio of
/// the xdp-live generator's rate to the TX ring's (medians over the runs, same run order).
pub fn text(g: &[GeneratorPoint], markdown: bool) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "\ngenerators, frames to a foreign MAC (the receiving stack drops them), medians over the runs:\n"
    );
    let mut rows = Vec::new();
    for size in dedup(g.iter().map(|p| p.frame_bytes)) {
        let rate = |name: &str| {
            let v: Vec<f64> = g
                .iter()
                .filter(|p| p.frame_bytes == size && p.generator == name)
                .map(|p| p.offered_mpps)
                .collect();
            (!v.is_empty()).then(|| (median(v.clone()), v))
        };
        for name in dedup(g.iter().map(|p| p.generator.clone())) {
            let Some((m, all)) = rate(&name) else {
                continue;
            };
            let spread = format!(
                "{:.2}..{:.2}",
                all.iter().cloned().fold(f64::MAX, f64::min),
                all.iter().cloned().fold(0.0, f64::max)
            );
            let ps: Vec<_> = g
                .iter()
                .filter(|p| p.frame_bytes == size && p.generator == name)
                .collect();
            let cpu = median(ps.iter().map(|p| p.cpu_ns_per_frame).collect());
            let napi = median(ps.iter().map(|p| p.napi_ns_per_frame).collect());
            let recv: u64 = ps.iter().map(|p| p.received).sum();
            let drop: u64 = ps.iter().map(|p| p.dropped).sum();
            let sent: u64 = ps.iter().map(|p| p.frames).sum();
            let placement = format!(
                "gen {} napi {}",
                cpus(ps.iter().map(|p| p.generator_cpu)),
                cpus(ps.iter().flat_map(|p| p.napi_cpus.iter().copied()))
            );
            let vs_tx = rate("tx-ring").map_or("-".into(), |(t, _)| format!("{:.2}x", m / t));
            rows.push(vec![
                size.to_string(),
                name,
                format!("{m:.2}"),
                spread,
                vs_tx,
                format!("{cpu:.0}"),
                format!("{napi:.0}"),
                format!("{sent}"),
                format!("{recv}"),
                format!("{drop}"),
                placement,
            ]);
        }
    }
    text.push_str(&table(
        &[
            "size",
            "generator",
            "offered Mpps",
            "min..max",
            "vs tx-ring",
            "gen cpu ns/frame",
            "napi ns/frame",
            "sent",
            "received at b",
            "dropped at b",
            "cpus (last seen)",
        ],
        &rows,
        markdown,
    ));
    text
}

/// The distinct CPUs in `seen` ("?" for a task that could not be read), e.g. "0" or "0,1".
fn cpus(seen: impl Iterator<Item = Option<usize>>) -> String {
    dedup(seen.map(|c| c.map_or("?".to_string(), |c| c.to_string()))).join(",")
}

#[cfg(test)]
mod test {
    use super::*;

    /// IMIX offered by xdp-live into the lab, read by a ring at the receiving side: every
    /// frame arrives, the three lengths 7:4:1 (exactly as the cycle of 12 deals them; the run
    /// ends anywhere in a cycle), as valid IPv4 and UDP (the lengths the frames carry,
    /// a header checksum that verifies), over the flows' ports in turn.
    #[test]
    fn the_imix_proportions_arrive() {
        zcrx_ring::require!();
        let refused = zcrx_kflows::bpf::live_frames_refused().map(|e| e.to_string());
        if !zcrx_ring::lab::require_kernel(
            "the_imix_proportions_arrive",
            "BPF_F_TEST_XDP_LIVE_FRAMES",
            refused,
        ) {
            return;
        }
        let lab = Lab::new().unwrap();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let _receiver = Receiver::prepare(&lab.b, cpus - 1).unwrap();
        let iface = lab.b.iface.clone();
        let ring = lab
            .b
            .run(move || zcrx_ring::RxRing::builder(iface).build())
            .unwrap()
            .unwrap();
        let xdp = XdpLive::load().unwrap();
        let flows = 4;
        let frame = UdpFlow::lab(&lab.a, &lab.b, 0, DPORT_BASE, true).frame(0, 1500);
        let short = UdpFlow::lab(&lab.a, &lab.b, 0, DPORT_BASE, true).frame(0, 64);
        assert!(xdp
            .offer_imix(
                &lab.a,
                &short,
                flows,
                Duration::from_millis(10),
                None,
                GENERATOR_CPU
            )
            .is_err());
        let offered = xdp
            .offer_imix(
                &lab.a,
                &frame,
                flows,
                Duration::from_millis(300),
                Some(20_000.0),
                GENERATOR_CPU,
            )
            .unwrap();
        let (mut by_len, mut ports, mut bad) = (
            std::collections::BTreeMap::<usize, u64>::new(),
            std::collections::BTreeSet::new(),
            0,
        );
        while let Some(block) = ring.next_block(Duration::from_millis(200)).unwrap() {
            for p in block.packets() {
                let p = p.unwrap();
                let f = p.data();
                // Only the generator's UDP frames (the kernel's own, e.g. IPv6 router
                // solicitations, aside).
                if f.len() < 42 || f[12..14] != [8, 0] || f[23] != 17 {
                    continue;
                }
                let ip_len = u16::from_be_bytes([f[16], f[17]]) as usize;
                let udp_len = u16::from_be_bytes([f[38], f[39]]) as usize;
                if ip_len + 14 != f.len()
                    || udp_len + 34 != f.len()
                    || zcrx_ring::frames::ipv4_checksum(&f[14..34]) != 0
                {
                    bad += 1;
                }
                ports.insert(u16::from_be_bytes([f[36], f[37]]));
                *by_len.entry(f.len()).or_default() += 1;
            }
        }
        let arrived: u64 = by_len.values().sum();
        assert_eq!(bad, 0, "{by_len:?}");
        assert_eq!(
            arrived, offered.frames,
            "every frame offered arrived: {by_len:?}"
        );
        // Paced at 20 000 a second for 0.3 s: some 6 000, fewer when the shared host keeps
        // the generator's CPU (the pacing drops what falls more than 20 µs behind: how many
        // is the host's, not the test's), never more than 6 001 (a frame only once it is
        // due, 50 µs after the last); at least a whole cycle of 12, so that every length
        // is seen.
        assert!((12..=6_001).contains(&arrived), "{arrived} frames");
        assert_eq!(by_len.len(), 3, "{by_len:?}");
        // Frame k (from 1) is 64 B when k % 12 < 7, 576 B when < 11, else 1500 B: exact
        // counts, 7:4:1 but for the last, partial cycle.
        let mut want = [0u64; 3];
        for k in 1..=arrived {
            want[match k % 12 {
                0..=6 => 0,
                7..=10 => 1,
                _ => 2,
            }] += 1;
        }
        for ((len, share), want) in IMIX.into_iter().zip(want) {
            let got = by_len.get(&len).copied().unwrap_or(0);
            assert_eq!(got, want, "{len} B of {arrived}: {by_len:?}");
            let ideal = arrived as f64 * share as f64 / 12.0;
            assert!((got as f64 - ideal).abs() < share as f64, "{len} B");
        }
        assert_eq!(ports.len(), flows, "{ports:?}");
        assert!((imix_mean_bytes() - 4252.0 / 12.0).abs() < 1e-9);
    }

    #[test]
    fn rx_counters_read_packets_and_drops() {
        let dev = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n  zx1b: 6400 100 0 7 0 0 0 0 0 0 0 0 0 0 0 0\n";
        assert_eq!(rx_counters_in(dev, "zx1b"), Some((100, 7)));
        assert_eq!(rx_counters_in(dev, "other"), None);
        assert_eq!(
            rx_counters_in(dev, "zx1"),
            None,
            "a prefix is another interface"
        );
    }

    #[test]
    fn last_cpu_reads_field_39_past_a_name_with_spaces() {
        // Fields 3..=38 as 0, field 39 (processor) 1, then the rest.
        let fields: Vec<String> = (3..=52)
            .map(|f| if f == 39 { "1".into() } else { "0".into() })
            .collect();
        let stat = format!("4242 (napi/zx1b-8 (x)) {}", fields.join(" "));
        assert_eq!(last_cpu_in(&stat), Some(1));
        assert_eq!(last_cpu_in("4242 (short) 0 0"), None);
        // The same parse serves the name and the parent (field 4).
        assert_eq!(crate::sys::stat_comm(&stat), Some("napi/zx1b-8 (x)"));
        assert_eq!(crate::sys::stat_field(&stat, 4), Some("0"));
        assert_eq!(crate::sys::stat_field(&stat, 2), None);
        assert_eq!(crate::sys::stat_comm("4242 ) (x"), None);
        assert!(last_cpu("thread-self").is_some());
        assert_eq!(last_cpu("no-such-task"), None);
        assert!(!task_cpus("self").is_empty());
        assert!(task_cpus("no-such-process").is_empty());
    }
}
