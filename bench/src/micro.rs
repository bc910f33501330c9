//! Micro-benchmarks: copy routines, memcmp variants, remap versus copy, ring drain.
//! Each checks its answer before timing and reports the median of several repetitions.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;
use zcrx_capture::copy::{cpu, AutoPolicy, Copier, Memcmp, Routine};
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig};
use zcrx_ring::frames::UdpFlow;

use crate::sys::Anon;

use crate::report::median;

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
    /// Median throughput, GB/s (1e9 bytes).
    pub gbps: f64,
}

/// Copy results with the crossover table and the recommended non-temporal threshold.
#[derive(Debug, Clone, Serialize)]
pub struct CopyReport {
    /// Every point.
    pub points: Vec<CopyPoint>,
    /// Per size and destination, the fastest routine.
    pub best: Vec<(usize, String, String)>,
    /// Smallest measured size from which non-temporal stores win every larger cold copy.
    pub recommended_nt_threshold: Option<usize>,
    /// The threshold `auto` uses on this CPU (a quarter of the last-level cache).
    pub auto_nt_threshold: usize,
}

/// Routines x sizes x hot/cold destination.
pub fn copy(sizes: &[usize], budget_bytes: usize) -> CopyReport {
    let llc = cpu().llc_bytes.max(8 << 20);
    let mut points = Vec::new();
    for &size in sizes {
        let src: Vec<u8> = (0..size).map(|i| (i * 13 + 5) as u8).collect();
        for dest in ["hot", "cold"] {
            let bufs = if dest == "hot" {
                1
            } else {
                (4 * llc / size).max(2)
            };
            let mut dsts: Vec<Vec<u8>> = (0..bufs).map(|_| vec![1u8; size]).collect();
            // Enough copies per repetition to take ~budget bytes, at least one pass over the
            // rotation for cold destinations.
            let per_rep = (budget_bytes / size)
                .max(if dest == "cold" { bufs } else { 1 })
                .max(1);
            for routine in Routine::ALL {
                let Ok(copier) = Copier::new(routine) else {
                    continue;
                };
                copier.copy(&mut dsts[0], &src);
                assert!(dsts[0] == src, "{routine} copied wrong bytes");
                let mut next = 0;
                let secs = time_per_call(5, || {
                    for _ in 0..per_rep {
                        copier.copy(black_box(&mut dsts[next]), black_box(&src));
                        next = (next + 1) % bufs;
                    }
                });
                points.push(CopyPoint {
                    routine: routine.name().into(),
                    size,
                    dest: dest.into(),
                    gbps: (size * per_rep) as f64 / secs / 1e9,
                });
            }
        }
    }
    let mut best = Vec::new();
    for &size in sizes {
        for dest in ["hot", "cold"] {
            if let Some(p) = points
                .iter()
                .filter(|p| p.size == size && p.dest == dest && p.routine != "auto")
                .max_by(|a, b| a.gbps.total_cmp(&b.gbps))
            {
                best.push((size, dest.to_string(), p.routine.clone()));
            }
        }
    }
    let nt_wins = |size: usize| {
        let get = |r: &str| {
            points
                .iter()
                .find(|p| p.size == size && p.dest == "cold" && p.routine == r)
                .map(|p| p.gbps)
                .unwrap_or(0.0)
        };
        let nt = get("nt");
        nt > 0.0 && ["libc", "erms", "avx2"].iter().all(|r| nt >= get(r))
    };
    let recommended = sizes
        .iter()
        .copied()
        .find(|&s| sizes.iter().filter(|&&x| x >= s).all(|&x| nt_wins(x)));
    CopyReport {
        points,
        best,
        recommended_nt_threshold: recommended,
        auto_nt_threshold: AutoPolicy::for_cpu(cpu()).nt_from,
    }
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
    /// Frame size.
    pub frame_bytes: usize,
    /// Wall time per packet with one consumer, ns (stage and consumer run in parallel).
    pub wall_ns_per_pkt: f64,
    /// The stage's own time per packet, ns.
    pub stage_ns_per_pkt: f64,
    /// Packets per second.
    pub pps: f64,
}

/// Pre-filled synthetic rings (256 flows) drained with every delivery mode.
pub fn drain(sizes: &[usize], packets: u64) -> Result<Vec<DrainPoint>> {
    let mut out = Vec::new();
    for &size in sizes {
        let flows: Vec<UdpFlow> = (0..256).map(UdpFlow::synthetic).collect();
        let ring = zcrx_ring::frames::replay_ring(&flows, size, 1 << 20, 16)?;
        // Frames above 1500 B (GRO-sized, up to 64 KiB): as many bytes as 1500-byte frames.
        let packets = if size > 1500 {
            (packets * 1500 / size as u64).max(1000)
        } else {
            packets
        };
        for delivery in Delivery::ALL {
            if let Delivery::Copy(r) = delivery {
                if Copier::new(r).is_err() {
                    continue;
                }
            }
            let config = PipelineConfig {
                consumers: Consumers::threads(1),
                delivery,
                max_packets: Some(packets),
                ..Default::default()
            };
            let mut stage = Vec::new();
            let wall = time_per_call(5, || {
                let stats = Pipeline::new(&ring, config.clone())
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
                assert_eq!(stats.packets, packets);
                stage.push(stats.stage_ns_per_packet());
            });
            out.push(DrainPoint {
                delivery: delivery.name(),
                frame_bytes: size,
                wall_ns_per_pkt: wall * 1e9 / packets as f64,
                stage_ns_per_pkt: median(stage),
                pps: packets as f64 / wall,
            });
        }
    }
    Ok(out)
}
