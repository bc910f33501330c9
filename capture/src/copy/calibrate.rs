//! `Auto`'s choice by size, measured on the CPU it runs on: once per process, at first use,
//! in bounded time. The fixed routines this CPU runs (libc, `rep movsb`, AVX2, AVX-512) take
//! turns copying each size class's largest size, several times, in three layouts: into a
//! destination in the core's caches, packed into an arena larger than the L2, and (up to
//! the size where a cold destination gets streaming stores) into lines in no cache; each class gets the routine of the least median time, and libc (glibc's memcpy,
//! itself dispatched by the CPU's vendor and model) unless another routine beats it by a
//! clear margin, so that a calibration disturbed by a busy host falls back on glibc's own
//! choice rather than on a bad one. Non-temporal stores are never a candidate: whether they
//! pay depends on the destination's reuse distance, not on a hot copy's speed, and
//! [`AutoPolicy`](super::AutoPolicy) decides it.
//!
//! `ZCRX_COPY_AUTO` pins the choice (reproducible runs): `static` keeps the thresholds from
//! the cache sizes ([`AutoPolicy::for_cpu`](super::AutoPolicy::for_cpu)), a routine's name
//! (`libc`, `erms`, `avx2`, `avx512`) that routine at every size below the non-temporal band.

use std::time::{Duration, Instant};

use super::Routine;

/// What the calibration times: a fixed routine's copier ([`super::Copier`] implements it).
/// A trait, so that the measuring here needs nothing of the module above it.
pub(super) trait Candidate {
    /// The fixed routine it copies with.
    fn routine(&self) -> Routine;
    /// Copies `src` into `dst` (equal lengths).
    fn copy(&self, dst: &mut [u8], src: &[u8]);
    /// Evicts `buf`'s lines from every cache level (the cold layout's destination).
    fn evict(buf: &[u8]);
}

/// From this copy size on, non-temporal stores into a destination that leaves the caches
/// before it is read (`AutoPolicy::for_reuse`): from this size on they are ahead of every
/// other routine for a cold copy (`rxbench copy` compares them); below it, the `sfence` each
/// copy ends with costs more than the stores save.
pub const COLD_NT_FROM: usize = 16 << 10;

/// The largest size of each size class `Auto` calibrates, in order; the last class holds
/// every larger copy (below the non-temporal band) and is measured at 2 MiB. A class is
/// measured at its largest size, so none spans more than a factor of two: routines that tie
/// at 64 KiB can differ by a tenth at 32 KiB. The classes double, but for one more at
/// 1518 B: full-sized Ethernet frames are the commonest large copy of a capture, and
/// where vector widths divide 1518 B unevenly the routines rank otherwise than at 2 KiB.
pub(super) const CLASS_TOPS: [usize; 17] = [
    64,
    128,
    256,
    512,
    1024,
    FULL_FRAME,
    2048,
    4096,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    usize::MAX,
];

/// The largest Ethernet frame without its FCS, a VLAN tag included (1500 B of payload).
const FULL_FRAME: usize = 1518;

/// The size the last class (above 1 MiB) is measured at.
pub const LAST_CLASS_SIZE: usize = 2 << 20;

/// Another routine replaces libc in a class only if its median time is below libc's by this
/// share: within it, the two are level as far as a calibration of a few milliseconds can tell.
pub(super) const LIBC_MARGIN: f64 = 0.03;

/// Repetitions of each measurement (each a turn of every candidate); the median is kept.
const REPEATS: usize = 5;

/// As `REPEATS`, for the cold layout: a cold turn lasts a few microseconds, and the memory
/// a shared host's neighbours load slows some turns by half or more, so that a median of
/// five still picks by the host's load rather than the routine.
const COLD_REPEATS: usize = 11;

/// Bytes copied per timed sample at least: small copies repeat, so that the clock's own cost
/// stays small beside the sample.
const SAMPLE_BYTES: usize = 32 << 10;

/// A calibration that runs longer than this (a host far busier than usual, or an
/// instrumented run such as valgrind's) stops, and the classes not yet measured keep libc.
pub(super) const DEADLINE: Duration = Duration::from_millis(100);

/// What `Auto` chose on this CPU and how.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Calibration {
    /// Each size class: its largest size (the calibration's class tops) and the routine
    /// chosen for a destination in the core's caches (one buffer copied into again and again).
    pub classes: Vec<(usize, Routine)>,
    /// Each measured class: its largest size, and each candidate's median nanoseconds per
    /// copy of the size measured, into a destination in the core's caches.
    pub timings: Vec<(usize, Vec<(Routine, f64)>)>,
    /// As `classes`, for copies packed one after another into a destination larger than the
    /// L2 from 2-byte-aligned frames (the pipeline's consumer arena); the classes of which
    /// the arena holds two copies or fewer as `classes`.
    pub arena: Vec<(usize, Routine)>,
    /// As `timings`, for the arena layout.
    pub arena_timings: Vec<(usize, Vec<(Routine, f64)>)>,
    /// As `classes`, for copies into a destination whose lines are in no cache (evicted
    /// before each timed turn), up to [`COLD_NT_FROM`], from where a
    /// cold destination gets streaming stores; the larger classes as `arena`.
    pub cold: Vec<(usize, Routine)>,
    /// As `timings`, for the cold layout.
    pub cold_timings: Vec<(usize, Vec<(Routine, f64)>)>,
    /// How long the calibration took.
    pub took: Duration,
    /// How the choice was made: `measured`, `measured (stopped at the deadline …)`, or
    /// pinned by `ZCRX_COPY_AUTO`.
    pub how: String,
    /// `ZCRX_COPY_AUTO=static`: the thresholds from the cache sizes, not `classes`.
    pub static_policy: bool,
}

impl Calibration {
    /// The routine chosen for a copy of `n` bytes into a destination in the core's caches
    /// (below the non-temporal band).
    pub fn routine_for(&self, n: usize) -> Routine {
        Calibration::pick(&self.classes, n)
    }

    /// The routine chosen for a copy of `n` bytes packed into an arena larger than the L2.
    pub fn arena_routine_for(&self, n: usize) -> Routine {
        Calibration::pick(&self.arena, n)
    }

    /// The routine chosen for a copy of `n` bytes into a destination in no cache.
    pub fn cold_routine_for(&self, n: usize) -> Routine {
        Calibration::pick(&self.cold, n)
    }

    fn pick(classes: &[(usize, Routine)], n: usize) -> Routine {
        classes
            .iter()
            .find(|&&(top, _)| n <= top)
            .map_or(Routine::Libc, |&(_, r)| r)
    }

    /// One line for reports: how it was chosen and how long it took.
    pub fn summary(&self) -> String {
        format!("{} in {:.2} ms", self.how, self.took.as_secs_f64() * 1e3)
    }
}

/// The routine for one size class from each candidate's median time (ns per copy, the same
/// order as `candidates`): the fastest, unless libc is a candidate and the fastest does not
/// beat it by [`LIBC_MARGIN`]. Times that are not finite and positive are not candidates.
pub fn choose(candidates: &[(Routine, f64)]) -> Routine {
    let valid = |t: f64| t.is_finite() && t > 0.0;
    let best = candidates
        .iter()
        .filter(|(_, t)| valid(*t))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let libc = candidates
        .iter()
        .find(|(r, t)| *r == Routine::Libc && valid(*t));
    match (best, libc) {
        (Some(&(r, t)), Some(&(_, lt))) if r != Routine::Libc && t < lt * (1.0 - LIBC_MARGIN) => r,
        (Some(_), Some(_)) | (None, _) => Routine::Libc,
        (Some(&(r, _)), None) => r,
    }
}

/// The median of `v` (empty: NaN).
fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Where one layout's copies read and write: `hot`, a few places at the start of each buffer
/// in turn (a destination in the core's caches); `arena`, frames of a ring (2-byte aligned, one after another) packed
/// one after another into a destination larger than the L2, as the pipeline's consumer arena
/// receives them, each copy where the previous one left off.
struct Layout {
    arena: bool,
    /// The destination's lines are evicted before each turn, which copies into buffers laid
    /// out from its start as an allocator hands them out ([`cold_stride`]; the source stays
    /// in the cache).
    cold: bool,
    /// Bytes of the source and the destination the arena walks through.
    region: usize,
    src_at: usize,
    dst_at: usize,
}

impl Layout {
    /// The next copy's source and destination offsets.
    #[inline(always)]
    fn next(&mut self, size: usize) -> (usize, usize) {
        if self.cold {
            let at = self.dst_at;
            self.dst_at += cold_stride(size);
            return (0, at);
        }
        if !self.arena {
            // One source, one destination, at a few distances from each other in turn: a
            // destination at the source's offset in a page (4 KiB apart, or a multiple)
            // makes the loads wait on the stores' addresses on some cores, and two separate
            // buffers sit at any distance.
            const HOT: [(usize, usize); 4] = [(0, 0), (0, 1088), (64, 2112), (32, 3152)];
            self.dst_at = (self.dst_at + 1) % HOT.len();
            return HOT[self.dst_at];
        }
        let stride = (size + 82).next_multiple_of(8);
        if self.src_at + 66 + size > self.region {
            self.src_at = 0;
        }
        if self.dst_at + size > self.region {
            self.dst_at = 0;
        }
        let at = (self.src_at + 66, self.dst_at);
        self.src_at += stride;
        self.dst_at += size;
        at
    }
}

/// Copies of `size` bytes in a timed sample: at least [`SAMPLE_BYTES`] and, for the cold
/// layout, at least four, so that the largest cold class covers every 16-byte offset in a
/// line.
fn copies_per_sample(size: usize, cold: bool) -> usize {
    (SAMPLE_BYTES / size).max(if cold { 4 } else { 1 })
}

/// How far apart the cold layout's destinations lie: one after another as an allocator
/// hands out buffers of `size` bytes (a 16-byte header before each, 16-byte granules), so that
/// their starts take every 16-byte offset within a cache line in turn. A destination's offset
/// in its line decides cold copies on some cores (`rep movsb`, and glibc's `memcpy` with it,
/// slows down into lines it does not start on, where wide vector stores do not), and a
/// buffer the caller copies into has whatever offset its allocator gave it.
fn cold_stride(size: usize) -> usize {
    let stride = (size + 16).next_multiple_of(16);
    // A stride of whole lines (1518 B: 1536) would start every destination on a line.
    if stride % 64 == 0 {
        stride + 16
    } else {
        stride
    }
}

/// A buffer of `len` bytes that starts on a 64-byte line (offsets in the layouts are from
/// its start, so that where the allocator put the vector changes nothing): the vector and
/// the start's index in it.
fn line_aligned(len: usize, fill: impl Fn(usize) -> u8) -> (Vec<u8>, usize) {
    let v: Vec<u8> = (0..len + 64).map(fill).collect();
    let at = v.as_ptr().align_offset(64).min(64);
    (v, at)
}

/// A timed sample: `copies` copies of `size` bytes by `f` where `layout` puts them, in
/// nanoseconds per copy.
fn sample<C: Candidate>(
    f: &C,
    src: &[u8],
    dst: &mut [u8],
    size: usize,
    copies: usize,
    layout: &mut Layout,
) -> f64 {
    let t = Instant::now();
    for _ in 0..copies {
        let (so, d) = layout.next(size);
        f.copy(
            std::hint::black_box(&mut dst[d..d + size]),
            std::hint::black_box(&src[so..so + size]),
        );
    }
    t.elapsed().as_nanos() as f64 / copies as f64
}

/// One layout's classes and timings, or `None` past `deadline`.
#[allow(clippy::type_complexity)]
fn measure_layout<C: Candidate>(
    copiers: &[C],
    src: &[u8],
    dst: &mut [u8],
    layout: &mut Layout,
    start: Instant,
) -> (
    Vec<(usize, Routine)>,
    Vec<(usize, Vec<(Routine, f64)>)>,
    bool,
) {
    let (mut classes, mut timings, mut stopped) = (Vec::new(), Vec::new(), false);
    for top in CLASS_TOPS {
        let size = if top == usize::MAX {
            LAST_CLASS_SIZE
        } else {
            top
        };
        if layout.cold && top > COLD_NT_FROM {
            // Streaming stores from here on for a cold destination: the caller copies the
            // arena's choice over.
            break;
        }
        if layout.arena && 2 * size > layout.region {
            // The arena holds two copies or fewer: the hot layout's figure stands (the
            // caller copies it over).
            break;
        }
        if stopped || start.elapsed() > DEADLINE {
            stopped = true;
            classes.push((top, Routine::Libc));
            continue;
        }
        // The cold layout's copies take every 16-byte offset in a line in turn.
        let copies = copies_per_sample(size, layout.cold);
        let repeats = if layout.cold { COLD_REPEATS } else { REPEATS };
        let mut times = vec![Vec::with_capacity(repeats); copiers.len()];
        // One untimed turn each (the code and, for the hot layout, the destination in the
        // cache), then `repeats` turns, the candidates in a different order each time so
        // that a burst of load on the host falls on each alike.
        let mut turn = |c: &C, dst: &mut [u8]| {
            if layout.cold {
                C::evict(&dst[..copies * cold_stride(size)]);
                layout.dst_at = 0;
            }
            sample(c, src, dst, size, copies, layout)
        };
        for c in copiers {
            turn(c, dst);
        }
        for rep in 0..repeats {
            for k in 0..copiers.len() {
                let i = (k + rep) % copiers.len();
                times[i].push(turn(&copiers[i], dst));
            }
        }
        let medians: Vec<(Routine, f64)> = copiers
            .iter()
            .zip(times)
            .map(|(c, t)| (c.routine(), median(t)))
            .collect();
        classes.push((top, choose(&medians)));
        timings.push((top, medians));
    }
    (classes, timings, stopped)
}

/// Measures every candidate at every class in both layouts (or stops at [`DEADLINE`]);
/// `l2_bytes` sizes the arena (twice the L2, 1 to 4 MiB).
pub(super) fn measure<C: Candidate>(copiers: &[C], l2_bytes: usize) -> Calibration {
    let start = Instant::now();
    let region = (2 * l2_bytes).clamp(1 << 20, 4 << 20);
    let len = region.max(LAST_CLASS_SIZE) + 4096;
    // Written before use: the pages are faulted in here, not in a timed copy.
    let (src, s0) = line_aligned(len, |i| (i * 13 + 5) as u8);
    let (mut dst, d0) = line_aligned(len, |_| 1);
    let (src, dst) = (&src[s0..s0 + len], &mut dst[d0..d0 + len]);
    let mut hot = Layout {
        arena: false,
        cold: false,
        region,
        src_at: 0,
        dst_at: 0,
    };
    let (classes, timings, stopped_hot) = measure_layout(copiers, src, dst, &mut hot, start);
    let mut arena = Layout { arena: true, ..hot };
    let (mut arena_classes, mut arena_timings, stopped_arena) =
        measure_layout(copiers, src, dst, &mut arena, start);
    // The classes too large for the arena layout: as hot.
    arena_classes.extend(classes[arena_classes.len()..].iter().copied());
    arena_timings.extend(
        timings[arena_timings.len().min(timings.len())..]
            .iter()
            .cloned(),
    );
    let mut cold = Layout {
        cold: true,
        dst_at: 0,
        ..hot
    };
    let (mut cold_classes, cold_timings, stopped_cold) =
        measure_layout(copiers, src, dst, &mut cold, start);
    cold_classes.extend(arena_classes[cold_classes.len()..].iter().copied());
    let took = start.elapsed();
    Calibration {
        classes,
        timings,
        arena: arena_classes,
        arena_timings,
        cold: cold_classes,
        cold_timings,
        took,
        how: if stopped_hot || stopped_arena || stopped_cold {
            format!(
                "measured (stopped at the {} ms deadline; the rest keep libc)",
                DEADLINE.as_millis()
            )
        } else {
            "measured".to_string()
        },
        static_policy: false,
    }
}

/// What `ZCRX_COPY_AUTO` asks for, or the calibration to run: `Ok(None)` to measure,
/// `Ok(Some(c))` a pinned choice, `Err(why)` a value not understood (then measured).
pub(super) fn pinned(
    value: Option<&str>,
    available: &[Routine],
) -> Result<Option<Calibration>, String> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let pin = |how: String, r: Routine, static_policy: bool| Calibration {
        classes: CLASS_TOPS.iter().map(|&t| (t, r)).collect(),
        timings: Vec::new(),
        arena: CLASS_TOPS.iter().map(|&t| (t, r)).collect(),
        arena_timings: Vec::new(),
        cold: CLASS_TOPS.iter().map(|&t| (t, r)).collect(),
        cold_timings: Vec::new(),
        took: Duration::ZERO,
        how,
        static_policy,
    };
    if v == "static" {
        return Ok(Some(pin(
            "pinned by ZCRX_COPY_AUTO=static (thresholds from the cache sizes)".into(),
            Routine::Libc,
            true,
        )));
    }
    match Routine::from_name(v) {
        Some(r) if available.contains(&r) => {
            Ok(Some(pin(format!("pinned by ZCRX_COPY_AUTO={v}"), r, false)))
        }
        _ => Err(format!(
            "ZCRX_COPY_AUTO={v} not understood (static, or one of {}): measured instead",
            available
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_wins_by_a_clear_margin_over_libc_only() {
        use Routine::*;
        // A clear win: chosen.
        assert_eq!(choose(&[(Libc, 10.0), (Avx2, 9.0), (Erms, 12.0)]), Avx2);
        // Within the margin of libc: libc stays.
        assert_eq!(choose(&[(Libc, 10.0), (Avx2, 9.8), (Erms, 12.0)]), Libc);
        // libc fastest.
        assert_eq!(choose(&[(Libc, 8.0), (Avx512, 9.0)]), Libc);
        // The fastest of several non-libc routines.
        assert_eq!(
            choose(&[(Libc, 20.0), (Avx2, 12.0), (Avx512, 11.0), (Erms, 15.0)]),
            Avx512
        );
        // Timings that are not finite or not positive are not candidates.
        assert_eq!(choose(&[(Libc, 10.0), (Avx2, 0.0), (Erms, f64::NAN)]), Libc);
        assert_eq!(choose(&[(Libc, f64::INFINITY), (Avx2, 3.0)]), Avx2);
        // Without libc among the candidates: the fastest.
        assert_eq!(choose(&[(Avx2, 5.0), (Erms, 4.0)]), Erms);
        // Nothing measured: libc.
        assert_eq!(choose(&[]), Libc);
    }

    #[test]
    fn cold_destinations_take_every_offset_in_a_line_at_every_class() {
        for size in CLASS_TOPS.into_iter().filter(|&t| t <= COLD_NT_FROM) {
            let copies = copies_per_sample(size, true);
            let mut offsets: Vec<usize> = (0..copies).map(|i| i * cold_stride(size) % 64).collect();
            offsets.sort_unstable();
            offsets.dedup();
            assert_eq!(offsets, [0, 16, 32, 48], "{size} B");
            assert!(cold_stride(size) >= size + 16, "{size} B");
        }
    }

    /// A candidate (named `rep movsb`, so that a class it won is told from one kept for
    /// libc) whose first copy takes longer than the whole deadline: a host that took the
    /// calibration's CPU away, made certain.
    struct Stalled(std::cell::Cell<bool>);

    impl Candidate for Stalled {
        fn routine(&self) -> Routine {
            Routine::Erms
        }
        fn copy(&self, dst: &mut [u8], src: &[u8]) {
            if !self.0.replace(true) {
                std::thread::sleep(DEADLINE + Duration::from_millis(20));
            }
            dst.copy_from_slice(src);
        }
        fn evict(_: &[u8]) {}
    }

    /// Past its deadline the calibration measures no further class (the one under way is
    /// finished) and says so; the classes it did not reach keep libc, in every layout.
    #[test]
    fn past_the_deadline_no_class_is_measured_and_the_rest_keep_libc() {
        let c = measure(&[Stalled(std::cell::Cell::new(false))], 1 << 20);
        assert!(c.took > DEADLINE, "{c:?}");
        assert!(
            c.how.contains("stopped at the 100 ms deadline"),
            "{}",
            c.how
        );
        assert_eq!(c.timings.len(), 1, "only the class under way: {c:?}");
        assert_eq!(c.classes[0], (CLASS_TOPS[0], Routine::Erms));
        assert_eq!(c.classes.len(), CLASS_TOPS.len());
        assert!(c.cold_timings.is_empty(), "{c:?}");
        // The arena and cold layouts begin after the deadline: none of theirs measured.
        for (layout, classes) in [
            ("hot", &c.classes[1..]),
            ("arena", &c.arena[..]),
            ("cold", &c.cold[..]),
        ] {
            assert!(
                classes.iter().all(|&(_, r)| r == Routine::Libc),
                "{layout}: {classes:?}"
            );
        }
    }

    #[test]
    fn medians_ignore_one_outlier() {
        assert_eq!(median(vec![5.0, 1.0, 1000.0, 2.0, 3.0]), 3.0);
        assert_eq!(median(vec![4.0, 2.0]), 3.0);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn a_pin_is_understood_or_refused_with_the_names() {
        let avail = [Routine::Libc, Routine::Avx2];
        assert_eq!(pinned(None, &avail), Ok(None));
        assert_eq!(pinned(Some(""), &avail), Ok(None));
        let s = pinned(Some("static"), &avail).unwrap().unwrap();
        assert!(s.static_policy);
        let a = pinned(Some("avx2"), &avail).unwrap().unwrap();
        assert!(a.classes.iter().all(|&(_, r)| r == Routine::Avx2));
        assert_eq!(a.routine_for(1 << 30), Routine::Avx2);
        let e = pinned(Some("avx512"), &avail).unwrap_err();
        assert!(e.contains("libc, avx2"), "{e}");
        assert!(pinned(Some("nt"), &avail).is_err());
    }

    #[test]
    fn routine_for_follows_the_classes() {
        let c = Calibration {
            classes: vec![
                (64, Routine::Libc),
                (1024, Routine::Avx2),
                (usize::MAX, Routine::Erms),
            ],
            timings: Vec::new(),
            arena: vec![(usize::MAX, Routine::Avx2)],
            arena_timings: Vec::new(),
            cold: vec![(usize::MAX, Routine::Libc)],
            cold_timings: Vec::new(),
            took: Duration::ZERO,
            how: String::new(),
            static_policy: false,
        };
        assert_eq!(c.routine_for(0), Routine::Libc);
        assert_eq!(c.routine_for(64), Routine::Libc);
        assert_eq!(c.routine_for(65), Routine::Avx2);
        assert_eq!(c.routine_for(1025), Routine::Erms);
        assert_eq!(c.arena_routine_for(64), Routine::Avx2);
        assert_eq!(c.cold_routine_for(64), Routine::Libc);
    }
}
