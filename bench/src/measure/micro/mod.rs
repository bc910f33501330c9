//! Micro-benchmarks: copy routines, memcmp variants, remap versus copy, ring drain.
//! Each checks its answer before timing and reports the median of several repetitions.

pub mod plot;
pub mod text;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;
use zcrx_capture::copy::memcmp::Memcmp;
use zcrx_capture::copy::{cpu, AutoPolicy, Copier, Routine};
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::frames::UdpFlow;

use crate::sys::Anon;

use crate::report::stats::{median, paired, shuffled};

/// Times `f` (which does `work` bytes or items per call) `reps` times after one warm-up call;
/// returns the median seconds per call.
fn time_per_call(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// One copy measurement.
#[derive(Debug, Clone, Serialize)]
pub struct CopyPoint {
    /// Routine.
    pub routine: String,
    /// Bytes per copy.
    pub size: usize,
    /// Destination cached (`hot`) or not (`cold`).
    pub dest: String,
    /// Median throughput over the rounds, GB/s (1e9 bytes).
    pub gbps: f64,
    /// Each round's throughput, GB/s.
    pub rounds: Vec<f64>,
    /// The fixed routine whose function ran the copies (for `auto`: the one it picked).
    pub dispatched: String,
}

/// Copy results with the crossover table and the recommended non-temporal threshold.
#[derive(Debug, Clone, Serialize)]
pub struct CopyReport {
    /// Every point.
    pub points: Vec<CopyPoint>,
    /// Per size and destination, the fastest fixed routine.
    pub best: Vec<(usize, String, String)>,
    /// Per size and destination, `auto`'s throughput over the fastest fixed routine's: the
    /// median over the rounds of the two's ratio in the same round (paired: the machine's
    /// load, which moves a memory-bound figure between rounds, cancels).
    pub auto_vs_best: Vec<(usize, String, f64)>,
    /// Per size and destination, the fixed routine whose function `auto` calls at that size
    /// and `auto` over it (paired as above): the same code measured twice, so its distance
    /// from 1.0 is the measurement's own noise.
    pub auto_vs_same: Vec<(usize, String, String, f64)>,
    /// Smallest measured size from which non-temporal stores win every larger cold copy.
    pub recommended_nt_threshold: Option<usize>,
    /// The threshold `auto` uses on this CPU (a quarter of the last-level cache).
    pub auto_nt_threshold: usize,
    /// What `auto` chose with no reuse distance given (by size alone).
    pub auto: String,
    /// What `auto` chose for a cold destination (reuse distance: the rotation, 4x the LLC).
    pub auto_cold: String,
    /// What `auto` chose for the consumer's arena (reuse distance: one ring block; also a
    /// hot destination's, which is read back from cache).
    pub auto_arena: String,
    /// How `auto`'s choice by size was made (measured at first use, how long it took, or
    /// pinned by `ZCRX_COPY_AUTO`).
    pub auto_calibration: String,
    /// The calibration's measurements into a destination in the core's caches: each size
    /// class's largest size and each candidate's median nanoseconds per copy (empty when
    /// pinned).
    pub auto_calibration_timings: Vec<(usize, Vec<(String, f64)>)>,
    /// The same into an arena larger than the L2 (frames packed one after another).
    pub auto_calibration_arena_timings: Vec<(usize, Vec<(String, f64)>)>,
    /// The same into lines in no cache (up to `COLD_NT_FROM`).
    pub auto_calibration_cold_timings: Vec<(usize, Vec<(String, f64)>)>,
}

/// The destinations of the copy sweep: `hot` (one buffer, reused), `cold` (a rotation of
/// 4x the last-level cache), `arena` (what the pipeline does: frames read from a ring
/// block, 8-byte aligned as TPACKET_V3 lays them out, packed one after another into a
/// block-sized arena that the consumer reads back and the next batch overwrites; `auto` is
/// made for that reuse distance, as the pipeline makes it).
pub const COPY_DESTS: [&str; 3] = ["hot", "cold", "arena"];

/// The ring block (and so the consumer arena) size of the `arena` destination.
const ARENA_BYTES: usize = zcrx_ring::DEFAULT_BLOCK_SIZE;

/// Blocks of the ring the `arena` destination's frames come from (and of `drain`'s ring).
const RING_BLOCKS: usize = 16;

/// Where one size's copies of one destination read and write.
struct CopyBuffers {
    src: Vec<u8>,
    /// Where each copy's source starts in `src`, in turn.
    src_offs: Vec<usize>,
    /// The destination buffers, in turn (cold: a rotation; otherwise one).
    dsts: Vec<Vec<u8>>,
    /// Where each copy lands in its destination buffer, in turn.
    dst_offs: Vec<usize>,
    /// The destination's reuse distance, as `auto` is told it: the buffer itself (hot), the
    /// whole rotation (cold), a block (the arena).
    reuse: usize,
}

impl CopyBuffers {
    fn new(size: usize, dest: &str, llc: usize) -> CopyBuffers {
        if dest == "arena" {
            // Frames in a ring of RING_BLOCKS blocks (the synthetic ring of `drain`), after
            // their 48-byte header and 2-byte-aligned MAC offset, 8-byte aligned records;
            // packed copies in the arena.
            let stride = (size + 82).next_multiple_of(8);
            let n = (RING_BLOCKS * ARENA_BYTES / stride).max(1);
            let per_arena = (ARENA_BYTES / size).max(1);
            return CopyBuffers {
                src: (0..n * stride + 66).map(|i| (i * 13 + 5) as u8).collect(),
                src_offs: (0..n).map(|i| i * stride + 66).collect(),
                dsts: vec![vec![1u8; per_arena * size]],
                dst_offs: (0..per_arena).map(|i| i * size).collect(),
                reuse: ARENA_BYTES,
            };
        }
        let bufs = if dest == "hot" {
            1
        } else {
            (4 * llc / size).max(2)
        };
        CopyBuffers {
            src: (0..size).map(|i| (i * 13 + 5) as u8).collect(),
            src_offs: vec![0],
            dsts: (0..bufs).map(|_| vec![1u8; size]).collect(),
            dst_offs: vec![0],
            reuse: bufs * size,
        }
    }
}

/// Routines x sizes x destination (hot, cold, the pipeline's arena for frame sizes). The
/// routines take turns in slices (in a new order each slice); each point is the median of
/// its `rounds`: on a shared machine the minutes differ more than routines.
pub fn copy(sizes: &[usize], budget_bytes: usize, rounds: usize) -> CopyReport {
    let llc = cpu().llc_bytes.max(8 << 20);
    let mut points = Vec::new();
    for &size in sizes {
        for dest in COPY_DESTS {
            if dest == "arena" && size > 65_536 {
                continue; // no frame is larger
            }
            let mut b = CopyBuffers::new(size, dest, llc);
            // Enough copies per repetition to take ~budget bytes, at least one pass over the
            // rotation for cold destinations.
            let per_rep = (budget_bytes / size)
                .max(if dest == "cold" { b.dsts.len() } else { 1 })
                .max(1);
            let copiers: Vec<Copier> = Routine::ALL
                .into_iter()
                .filter_map(|routine| Copier::for_destination(routine, b.reuse).ok())
                .collect();
            let gbps = copy_rounds(&mut b, size, &copiers, per_rep, rounds);
            for (copier, rounds) in copiers.iter().zip(gbps) {
                points.push(CopyPoint {
                    routine: copier.routine().name().into(),
                    size,
                    dest: dest.into(),
                    gbps: median(rounds.clone()),
                    rounds,
                    dispatched: copier.dispatch(size).name().into(),
                });
            }
        }
    }
    let (best, auto_vs_best, auto_vs_same) = auto_against_the_rest(sizes, &points);
    let nt_wins = |size: usize| {
        let get = |r: Routine| {
            points
                .iter()
                .find(|p| p.size == size && p.dest == "cold" && p.routine == r.name())
                .map(|p| p.gbps)
                .unwrap_or(0.0)
        };
        let nt = get(Routine::NonTemporal);
        nt > 0.0
            && Routine::ALL
                .into_iter()
                .filter(|r| !matches!(r, Routine::NonTemporal | Routine::Auto))
                .all(|r| nt >= get(r))
    };
    let recommended = sizes
        .iter()
        .copied()
        .find(|&s| sizes.iter().filter(|&&x| x >= s).all(|&x| nt_wins(x)));
    let describe = |reuse: Option<usize>| {
        reuse
            .map_or(Copier::new(Routine::Auto), |r| {
                Copier::for_destination(Routine::Auto, r)
            })
            .map(|c| c.describe())
            .unwrap_or_default()
    };
    CopyReport {
        points,
        best,
        auto_vs_best,
        auto_vs_same,
        recommended_nt_threshold: recommended,
        auto_nt_threshold: AutoPolicy::for_cpu(cpu()).nt_from,
        auto: describe(None),
        auto_cold: describe(Some(4 * llc)),
        auto_arena: describe(Some(ARENA_BYTES)),
        auto_calibration: zcrx_capture::copy::calibration().summary(),
        auto_calibration_timings: named(&zcrx_capture::copy::calibration().timings),
        auto_calibration_arena_timings: named(&zcrx_capture::copy::calibration().arena_timings),
        auto_calibration_cold_timings: named(&zcrx_capture::copy::calibration().cold_timings),
    }
}

/// Calibration timings with the routines by name.
fn named(t: &[(usize, Vec<(Routine, f64)>)]) -> Vec<(usize, Vec<(String, f64)>)> {
    t.iter()
        .map(|(top, t)| {
            (
                *top,
                t.iter()
                    .map(|(r, ns)| (r.name().to_string(), *ns))
                    .collect(),
            )
        })
        .collect()
}

/// Checks every copier's bytes, then times `rounds` rounds of `per_rep` copies each of
/// `size` bytes per copier; returns each copier's GB/s per round.
fn copy_rounds(
    b: &mut CopyBuffers,
    size: usize,
    copiers: &[Copier],
    per_rep: usize,
    rounds: usize,
) -> Vec<Vec<f64>> {
    let (s0, d0) = (b.src_offs[0], b.dst_offs[0]);
    for copier in copiers {
        copier.copy(&mut b.dsts[0][d0..d0 + size], &b.src[s0..s0 + size]);
        assert!(
            b.dsts[0][d0..d0 + size] == b.src[s0..s0 + size],
            "{} copied wrong bytes",
            copier.routine()
        );
        b.dsts[0][d0..d0 + size].fill(1);
    }
    // One position in the source and the destinations for every routine: each copy goes
    // where the previous one, whichever routine made it, left off (the next cold buffer; the
    // next place in the arena, as one consumer packs it).
    let (mut next, mut si, mut di) = (0, 0, 0);
    let mut copies = |copier: &Copier, count: usize| {
        for _ in 0..count {
            let (so, dof) = (b.src_offs[si], b.dst_offs[di]);
            copier.copy(
                black_box(&mut b.dsts[next][dof..dof + size]),
                black_box(&b.src[so..so + size]),
            );
            next = (next + 1) % b.dsts.len();
            si = (si + 1) % b.src_offs.len();
            di = (di + 1) % b.dst_offs.len();
        }
    };
    // Each round: every routine copies its budget in SLICES slices, the routines taking
    // turns slice by slice in a new order each time (plus one untimed slice each first), so
    // that the machine's load, which moves memory-bound figures several-fold within
    // milliseconds here, falls on every routine alike.
    const SLICES: usize = 8;
    let per_slice = (per_rep / SLICES).max(1);
    let mut gbps: Vec<Vec<f64>> = vec![Vec::new(); copiers.len()];
    for round in 0..rounds.max(1) {
        let mut secs = vec![0.0f64; copiers.len()];
        for slice in 0..=SLICES {
            for i in shuffled(copiers.len(), round * (SLICES + 1) + slice) {
                let t = Instant::now();
                copies(&copiers[i], per_slice);
                if slice > 0 {
                    secs[i] += t.elapsed().as_secs_f64();
                }
            }
        }
        for (g, secs) in gbps.iter_mut().zip(secs) {
            g.push((size * per_slice * SLICES) as f64 / secs / 1e9);
        }
    }
    gbps
}

/// Per size and destination: the fastest fixed routine, `auto` over it, and `auto` over the
/// fixed routine whose function it runs there (see [`CopyReport`]).
#[allow(clippy::type_complexity)]
fn auto_against_the_rest(
    sizes: &[usize],
    points: &[CopyPoint],
) -> (
    Vec<(usize, String, String)>,
    Vec<(usize, String, f64)>,
    Vec<(usize, String, String, f64)>,
) {
    let (mut best, mut auto_vs_best, mut auto_vs_same) = (Vec::new(), Vec::new(), Vec::new());
    for &size in sizes {
        for dest in COPY_DESTS {
            let at = |p: &&CopyPoint| p.size == size && p.dest == dest;
            let Some(b) = points
                .iter()
                .filter(|p| at(p) && p.routine != "auto")
                .max_by(|a, b| a.gbps.total_cmp(&b.gbps))
            else {
                continue;
            };
            best.push((size, dest.to_string(), b.routine.clone()));
            let Some(a) = points.iter().find(|p| at(p) && p.routine == "auto") else {
                continue;
            };
            auto_vs_best.push((size, dest.to_string(), paired(&a.rounds, &b.rounds)));
            if let Some(f) = points
                .iter()
                .find(|p| at(p) && p.routine == a.dispatched && p.routine != "auto")
            {
                let ratio = paired(&a.rounds, &f.rounds);
                auto_vs_same.push((size, dest.to_string(), a.dispatched.clone(), ratio));
            }
        }
    }
    (best, auto_vs_best, auto_vs_same)
}

/// One memcmp measurement.
#[derive(Debug, Clone, Serialize)]
pub struct MemcmpPoint {
    /// Variant.
    pub variant: String,
    /// Bytes compared (equal buffers: the whole length is read).
    pub size: usize,
    /// Misalignment of the second buffer.
    pub misalign: usize,
    /// GB/s.
    pub gbps: f64,
}

/// memcmp variants by size, aligned and misaligned.
pub fn memcmp(sizes: &[usize]) -> Vec<MemcmpPoint> {
    let mut out = Vec::new();
    for &size in sizes {
        let a: Vec<u8> = (0..size).map(|i| (i * 7) as u8).collect();
        let mut b = vec![0u8; size + 8];
        for misalign in [0usize, 3] {
            b[misalign..misalign + size].copy_from_slice(&a);
            let bb = &b[misalign..misalign + size];
            let per_rep = ((64 << 20) / size).max(1);
            for v in Memcmp::ALL {
                let cmp = v.comparator(); // resolved once: no CPU test in the timed loop
                assert_eq!(cmp(&a, bb), std::cmp::Ordering::Equal);
                let secs = time_per_call(5, || {
                    for _ in 0..per_rep {
                        black_box(cmp(black_box(&a), black_box(bb)));
                    }
                });
                out.push(MemcmpPoint {
                    variant: v.name().into(),
                    size,
                    misalign,
                    gbps: (size * per_rep) as f64 / secs / 1e9,
                });
            }
        }
    }
    out
}

/// Remap versus copy for one page count.
#[derive(Debug, Clone, Serialize)]
pub struct RemapPoint {
    /// 4 KiB pages moved.
    pub pages: usize,
    /// `mremap(MREMAP_MAYMOVE|MREMAP_FIXED)` of the range, µs (median).
    pub mremap_us: f64,
    /// mmap of a new range + munmap of the old while another thread of the process runs on
    /// the other CPU (so the unmap needs a TLB shootdown IPI), µs.
    pub mmap_munmap_us: f64,
    /// memcpy of the same bytes, µs.
    pub memcpy_us: f64,
}

/// Remap report with the crossover.
#[derive(Debug, Clone, Serialize)]
pub struct RemapReport {
    /// Per page count.
    pub points: Vec<RemapPoint>,
    /// Smallest page count from which mremap beats memcpy at every larger count measured.
    pub mremap_wins_from_pages: Option<usize>,
    /// Same for mmap+munmap.
    pub mmap_munmap_wins_from_pages: Option<usize>,
}

/// Moving N pages by remapping versus copying them.
pub fn remap(max_pages: usize) -> Result<RemapReport> {
    let page = zcrx_ring::page_size();
    let stop = AtomicBool::new(false);
    let mut points = Vec::new();
    std::thread::scope(|s| -> Result<()> {
        // Another thread of this mm, busy on the other CPU: every unmap must interrupt it.
        s.spawn(|| {
            let mut x = [0u64; 64];
            while !stop.load(Ordering::Relaxed) {
                for v in x.iter_mut() {
                    *v = black_box(*v + 1);
                }
            }
        });
        let mut pages = 1;
        while pages <= max_pages {
            let len = pages * page;
            let reps = (2048 / pages).clamp(5, 101);
            let mut m = Some(Anon::new(len)?);
            m.as_mut().unwrap().as_mut_slice()[len - 1] = 7;
            let mut mremap_t = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                let moved = m.take().unwrap().remap_moving()?;
                mremap_t.push(t.elapsed().as_secs_f64());
                assert_eq!(
                    moved.as_slice()[len - 1],
                    7,
                    "pages moved with their contents"
                );
                m = Some(moved);
            }
            let mut mm_t = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                let fresh = Anon::new(len)?;
                m.take().unwrap().unmap();
                mm_t.push(t.elapsed().as_secs_f64());
                m = Some(fresh);
            }
            let src = vec![3u8; len];
            let mut dst = vec![0u8; len];
            let mut cp_t = Vec::new();
            for _ in 0..reps {
                let t = Instant::now();
                dst.copy_from_slice(black_box(&src));
                black_box(&dst);
                cp_t.push(t.elapsed().as_secs_f64());
            }
            points.push(RemapPoint {
                pages,
                mremap_us: median(mremap_t) * 1e6,
                mmap_munmap_us: median(mm_t) * 1e6,
                memcpy_us: median(cp_t) * 1e6,
            });
            pages *= 2;
        }
        stop.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    let wins_from = |f: &dyn Fn(&RemapPoint) -> f64| {
        points.iter().map(|p| p.pages).find(|&n| {
            points
                .iter()
                .filter(|p| p.pages >= n)
                .all(|p| f(p) < p.memcpy_us)
        })
    };
    Ok(RemapReport {
        mremap_wins_from_pages: wins_from(&|p| p.mremap_us),
        mmap_munmap_wins_from_pages: wins_from(&|p| p.mmap_munmap_us),
        points,
    })
}

/// Draining a pre-filled ring: user-side cost per packet, kernel excluded.
#[derive(Debug, Clone, Serialize)]
pub struct DrainPoint {
    /// Delivery mode.
    pub delivery: String,
    /// What the copier chose (`auto`: its vectors and thresholds), empty for zero-copy.
    pub copier: String,
    /// Frame size.
    pub frame_bytes: usize,
    /// Wall time per packet with one consumer, ns (stage and consumer run in parallel):
    /// the median of the rounds.
    pub wall_ns_per_pkt: f64,
    /// Each round's wall time per packet, ns.
    pub rounds_wall_ns: Vec<f64>,
    /// The stage's own time per packet, ns (median of the rounds).
    pub stage_ns_per_pkt: f64,
    /// Packets per second (from the median wall time).
    pub pps: f64,
}

/// Pre-filled synthetic rings (256 flows) drained with every delivery mode. The modes take
/// turns: each round runs every mode once (in a new order each round), after one
/// warm-up run of each; each figure is the median of its rounds.
pub fn drain(sizes: &[usize], packets: u64, rounds: usize) -> Result<Vec<DrainPoint>> {
    let mut out = Vec::new();
    for &size in sizes {
        let flows: Vec<UdpFlow> = (0..256).map(UdpFlow::synthetic).collect();
        let ring = zcrx_ring::frames::replay_ring(&flows, size, ARENA_BYTES, RING_BLOCKS)?;
        // Frames above 1500 B (GRO-sized, up to 64 KiB): as many bytes as 1500-byte frames.
        let packets = if size > 1500 {
            (packets * 1500 / size as u64).max(1000)
        } else {
            packets
        };
        let modes: Vec<Delivery> = Delivery::ALL
            .into_iter()
            .filter(|d| match d {
                Delivery::Copy(r) => Copier::new(*r).is_ok(),
                _ => true,
            })
            .collect();
        // One run: (wall seconds, stage ns per packet, what the copier chose).
        let once = |delivery: Delivery| -> (f64, f64, String) {
            let config = PipelineConfig::builder()
                .consumers(Consumers::threads(1))
                .delivery(delivery)
                .max_packets(packets)
                .build()
                .expect("a valid configuration");
            let t = Instant::now();
            let stats = Pipeline::new(&ring, config)
                .run(
                    |_| {
                        let mut sum = 0u64;
                        move |d: &Delivered<'_>| {
                            let b = d.data();
                            sum = sum.wrapping_add(u64::from(b[0]) + u64::from(b[b.len() - 1]));
                            black_box(sum);
                        }
                    },
                    Hooks::new(),
                )
                .expect("synthetic pipeline")
                .stats;
            let wall = t.elapsed().as_secs_f64();
            assert_eq!(stats.packets, packets);
            (
                wall,
                stats.stage_ns_per_packet(),
                stats.copier.unwrap_or_default(),
            )
        };
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new(); modes.len()];
        let mut chose = vec![String::new(); modes.len()];
        for (i, &m) in modes.iter().enumerate() {
            chose[i] = once(m).2; // warm-up
        }
        for round in 0..rounds.max(1) {
            for i in shuffled(modes.len(), round) {
                let (wall, stage, _) = once(modes[i]);
                runs[i].push((wall, stage));
            }
        }
        for ((delivery, runs), copier) in modes.iter().zip(runs).zip(chose) {
            let wall = median(runs.iter().map(|r| r.0).collect());
            out.push(DrainPoint {
                delivery: delivery.name(),
                copier,
                frame_bytes: size,
                wall_ns_per_pkt: wall * 1e9 / packets as f64,
                rounds_wall_ns: runs.iter().map(|r| r.0 * 1e9 / packets as f64).collect(),
                stage_ns_per_pkt: median(runs.iter().map(|r| r.1).collect()),
                pps: packets as f64 / wall,
            });
        }
    }
    Ok(out)
}
