//! [`Copier`]: a chosen routine, ready to call, and [`calibration`], `Auto`'s measured
//! choice.

use std::fmt;
use std::sync::OnceLock;

use super::arch::{copy_libc, evict, routine_fn, Unsupported};
use super::calibrate::{self, Calibration, CLASS_TOPS};
use super::detect::cpu;
use super::policy::{AutoPolicy, Band};
use super::routine::{CopyFn, Routine};

/// Which of the calibration's layouts a destination is like.
#[derive(Clone, Copy)]
enum Layout {
    /// Reused within half the L2.
    Hot,
    /// Reused within half the last-level cache (or not known).
    Arena,
    /// Reused beyond: its lines have left the caches.
    Cold,
}

/// Bands of copy sizes a copier tells apart at most: a band per size class and the
/// non-temporal band.
const MAX_BANDS: usize = CLASS_TOPS.len() + 1;

// `Copier::start` holds band indices as `u8`.
const _: () = assert!(MAX_BANDS <= u8::MAX as usize);

/// A chosen copy routine, ready to call (function pointers; no per-call feature test).
#[derive(Clone, Copy)]
pub struct Copier {
    routine: Routine,
    /// The widest vectors the CPU has: `NonTemporal`'s (`Avx512`, `Avx2` or `Libc`).
    vectors: Routine,
    /// Bands in use (1 for a fixed routine).
    bands: usize,
    /// Band `i` copies sizes `from[i]..from[i + 1]` (the last, every larger size); `from[0]`
    /// is 0.
    from: [usize; MAX_BANDS],
    /// Each band's function.
    fns: [CopyFn; MAX_BANDS],
    /// Each band's fixed routine (whose function `fns` holds).
    routines: [Routine; MAX_BANDS],
    /// By a size's bit length (0 for 0 bytes, `k + 1` for `2^k..2^(k+1)`), the band of the
    /// smallest size of that length: where `band_of`'s walk starts, so that a copy passes at
    /// most the cuts inside its own power of two (with the calibration's class tops, one,
    /// or two from 1 KiB to 2 KiB: 1025 and 1519) instead of every band below it.
    start: [u8; usize::BITS as usize + 1],
    policy: AutoPolicy,
    /// `Auto` chose by the calibration ([`calibration`]), not by `policy`'s thresholds
    /// (whose `nt_from` still places the non-temporal band).
    calibrated: bool,
}

impl fmt::Debug for Copier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Copier({})", self.describe())
    }
}

/// The fixed routines `Auto` may choose between for a destination in the cache: libc, and
/// `rep movsb` (on a CPU with ERMS), AVX2 and AVX-512 where the CPU has them.
fn auto_candidates() -> Vec<Routine> {
    let c = cpu();
    let mut v = vec![Routine::Libc];
    if cfg!(all(target_arch = "x86_64", not(zcrx_portable))) {
        if c.erms {
            v.push(Routine::Erms);
        }
        if c.avx2 {
            v.push(Routine::Avx2);
        }
        if c.avx512 {
            v.push(Routine::Avx512);
        }
    }
    v
}

/// `Auto`'s choice by size on this CPU: measured once per process, at first use, in at most
/// a few milliseconds (module `calibrate`'s docs), or pinned by the environment variable
/// `ZCRX_COPY_AUTO` (`static`: the thresholds from the cache sizes, [`AutoPolicy::for_cpu`];
/// `libc`, `erms`, `avx2`, `avx512`: that routine).
pub fn calibration() -> &'static Calibration {
    static CALIBRATION: OnceLock<Calibration> = OnceLock::new();
    CALIBRATION.get_or_init(|| {
        let candidates = auto_candidates();
        let env = std::env::var("ZCRX_COPY_AUTO").ok();
        let measure = || {
            let copiers: Vec<Copier> = candidates
                .iter()
                .filter_map(|&r| Copier::with_policy(r, AutoPolicy::for_cpu(cpu())).ok())
                .collect();
            calibrate::measure(&copiers, cpu().l2_bytes)
        };
        match calibrate::pinned(env.as_deref(), &candidates) {
            Ok(Some(pinned)) => pinned,
            Ok(None) => measure(),
            Err(why) => {
                let mut c = measure();
                c.how = format!("{}; {why}", c.how);
                c
            }
        }
    })
}

impl calibrate::Candidate for Copier {
    fn routine(&self) -> Routine {
        Copier::routine(self)
    }
    fn copy(&self, dst: &mut [u8], src: &[u8]) {
        Copier::copy(self, dst, src)
    }
    fn evict(buf: &[u8]) {
        evict(buf)
    }
}

impl Copier {
    /// The routine, if this CPU supports it; `Auto` as [`calibration`] chose for this CPU
    /// for copies into a destination beyond the L2 (its arena layout: where the destination
    /// is not known), non-temporal from [`AutoPolicy::for_cpu`]'s `nt_from` (a quarter of
    /// the last-level cache).
    pub fn new(routine: Routine) -> Result<Copier, Unsupported> {
        if routine == Routine::Auto {
            return Ok(Copier::calibrated(
                AutoPolicy::for_cpu(cpu()),
                Layout::Arena,
            ));
        }
        Copier::with_policy(routine, AutoPolicy::for_cpu(cpu()))
    }

    /// As [`Copier::new`], `Auto` choosing by copy size and by the destination's reuse
    /// distance ([`AutoPolicy::for_reuse`]) as [`calibration`] measured: within half the L2,
    /// the routines fastest into a destination in the core's caches; within half the
    /// last-level cache, those fastest into an arena larger than the L2; beyond (the lines
    /// leave the caches before they are read), those fastest into lines in no cache, and
    /// non-temporal stores from [`COLD_NT_FROM`], the only place `Auto` streams. Fixed
    /// routines are unaffected.
    ///
    /// [`COLD_NT_FROM`]: crate::copy::COLD_NT_FROM
    pub fn for_destination(routine: Routine, reuse_bytes: usize) -> Result<Copier, Unsupported> {
        let c = cpu();
        let policy = AutoPolicy::for_reuse(c, reuse_bytes);
        if routine == Routine::Auto {
            let llc = if c.llc_bytes > 0 {
                c.llc_bytes
            } else {
                8 << 20
            };
            let layout = if reuse_bytes > llc / 2 {
                Layout::Cold
            } else if c.l2_bytes > 0 && reuse_bytes <= c.l2_bytes / 2 {
                Layout::Hot
            } else {
                Layout::Arena
            };
            return Ok(Copier::calibrated(policy, layout));
        }
        Copier::with_policy(routine, policy)
    }

    /// `Auto` by the calibration's choices in `layout` below `policy.nt_from`,
    /// non-temporal from there (by `policy` alone when the calibration is pinned to
    /// `static`).
    fn calibrated(policy: AutoPolicy, layout: Layout) -> Copier {
        let cal = calibration();
        if cal.static_policy {
            return Copier::by_policy(policy);
        }
        let classes = match layout {
            Layout::Hot => &cal.classes,
            Layout::Arena => &cal.arena,
            Layout::Cold => &cal.cold,
        };
        let mut bands = vec![(0usize, classes.first().map_or(Routine::Libc, |c| c.1))];
        for w in classes.windows(2) {
            let from = w[0].0.saturating_add(1);
            if from < policy.nt_from {
                bands.push((from, w[1].1));
            }
        }
        if policy.nt_from != usize::MAX {
            bands.push((policy.nt_from, Copier::streaming()));
        }
        let mut c = Copier::from_bands(Routine::Auto, &bands, policy);
        c.calibrated = true;
        c
    }

    /// The routine of `Auto`'s non-temporal band: `NonTemporal`, or libc on a CPU without
    /// the vectors it needs.
    fn streaming() -> Routine {
        if cfg!(all(target_arch = "x86_64", not(zcrx_portable))) && cpu().avx2 {
            Routine::NonTemporal
        } else {
            Routine::Libc
        }
    }

    /// `Auto` by `policy`'s thresholds.
    fn by_policy(policy: AutoPolicy) -> Copier {
        let vectors = cpu().widest();
        let portable = !cfg!(all(target_arch = "x86_64", not(zcrx_portable)));
        let routine_of = |b: Band| match (b, vectors) {
            _ if portable => Routine::Libc, // the portable Auto is libc at every size
            (Band::Large, Routine::Libc) => Routine::Libc,
            (Band::Large, _) => Routine::NonTemporal,
            (Band::Mid, _) => Routine::Erms,
            (Band::Small, Routine::Avx512) => Routine::Avx2,
            (Band::Wide | Band::Small, v) => v,
        };
        let mut cuts = vec![
            0,
            policy.wide_until.saturating_add(1),
            policy.erms_from,
            policy.erms_until,
            policy.nt_from,
        ];
        cuts.retain(|&c| c != usize::MAX);
        cuts.sort_unstable();
        cuts.dedup();
        let bands: Vec<(usize, Routine)> = cuts
            .into_iter()
            .map(|c| (c, routine_of(policy.band(c))))
            .collect();
        Copier::from_bands(Routine::Auto, &bands, policy)
    }

    /// A copier of `bands` (ascending starts, the first 0; each routine one this CPU runs),
    /// neighbours of the same routine merged.
    fn from_bands(routine: Routine, bands: &[(usize, Routine)], policy: AutoPolicy) -> Copier {
        let mut c = Copier {
            routine,
            vectors: cpu().widest(),
            bands: 0,
            from: [usize::MAX; MAX_BANDS],
            fns: [copy_libc as CopyFn; MAX_BANDS],
            routines: [Routine::Libc; MAX_BANDS],
            start: [0; usize::BITS as usize + 1],
            policy,
            calibrated: false,
        };
        for &(from, r) in bands {
            // Every routine here was offered by this CPU's detection; libc if not.
            let (r, f) = match routine_fn(r) {
                Ok(f) => (r, f),
                Err(_) => (Routine::Libc, copy_libc as CopyFn),
            };
            if c.bands > 0 && c.routines[c.bands - 1] == r {
                continue;
            }
            if c.bands == MAX_BANDS {
                break; // more bands than sizes told apart: the last one goes on
            }
            c.from[c.bands] = if c.bands == 0 { 0 } else { from };
            c.fns[c.bands] = f;
            c.routines[c.bands] = r;
            c.bands += 1;
        }
        if c.bands == 0 {
            c.from[0] = 0;
            c.bands = 1;
        }
        for len in 1..c.start.len() {
            // Below MAX_BANDS, which fits a u8.
            c.start[len] = c.walk_from(0, 1usize << (len - 1)) as u8;
        }
        c
    }

    /// A fixed routine (not `Auto`).
    fn fixed(routine: Routine, policy: AutoPolicy) -> Result<Copier, Unsupported> {
        let f = routine_fn(routine)?;
        let mut c = Copier::from_bands(routine, &[], policy);
        c.fns[0] = f;
        c.routines[0] = routine;
        Ok(c)
    }

    /// As [`Copier::new`] with explicit `Auto` thresholds (overrides; no calibration).
    pub fn with_policy(routine: Routine, policy: AutoPolicy) -> Result<Copier, Unsupported> {
        if routine == Routine::Auto {
            return Ok(Copier::by_policy(policy));
        }
        Copier::fixed(routine, policy)
    }

    /// Which routine this is.
    pub fn routine(&self) -> Routine {
        self.routine
    }

    /// The `Auto` thresholds in force (with a calibrated `Auto`, only `nt_from`: the sizes
    /// below it go as [`calibration`] chose).
    pub fn policy(&self) -> AutoPolicy {
        self.policy
    }

    /// Whether this `Auto` chose by the calibration ([`calibration`]).
    pub fn is_calibrated(&self) -> bool {
        self.calibrated
    }

    /// One line saying what was chosen, for logs.
    pub fn describe(&self) -> String {
        match self.routine {
            Routine::Auto => {
                let bands: Vec<String> = (0..self.bands)
                    .map(|i| {
                        let name = match self.routines[i] {
                            Routine::NonTemporal => format!("non-temporal {}", self.vectors),
                            Routine::Erms => "rep movsb".to_string(),
                            r => r.name().to_string(),
                        };
                        if i == 0 {
                            name
                        } else {
                            format!("{name} from {} B", self.from[i])
                        }
                    })
                    .collect();
                let nt = if self.policy.nt_from == usize::MAX {
                    "; never non-temporal (the destination is read back from cache)"
                } else {
                    ""
                };
                let how = if self.calibrated { " (calibrated)" } else { "" };
                format!("auto: {}{nt}{how}", bands.join(", "))
            }
            Routine::NonTemporal => format!("nt ({} streaming stores)", self.vectors),
            r => r.name().to_string(),
        }
    }

    /// The fixed routine that runs a copy of `n` bytes: this copier's own routine, or for
    /// `Auto` the one it picks (the same function a fixed copier of that routine calls:
    /// `rxbench copy` uses it to measure its own noise).
    pub fn dispatch(&self, n: usize) -> Routine {
        self.routines[self.band_of(n)]
    }

    /// Copies `src` into `dst` (lengths must be equal).
    #[inline]
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        self.fn_for(src.len())(dst, src)
    }

    /// The band a copy of `n` bytes falls in: the last whose start is at most `n`. Bands
    /// rise with the size, so the walk may start at the band of `n`'s power of two.
    #[inline(always)]
    fn band_of(&self, n: usize) -> usize {
        self.walk_from(
            self.start[(usize::BITS - n.leading_zeros()) as usize] as usize,
            n,
        )
    }

    /// The band of `n` bytes, walking up from band `i` (at or below it).
    #[inline(always)]
    fn walk_from(&self, mut i: usize, n: usize) -> usize {
        while i + 1 < self.bands && n >= self.from[i + 1] {
            i += 1;
        }
        i
    }

    /// The function that copies `n` bytes.
    #[inline(always)]
    fn fn_for(&self, n: usize) -> CopyFn {
        self.fns[self.band_of(n)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::calibrate::COLD_NT_FROM;

    /// `dispatch` names the fixed routine whose very function `Auto` calls, at every size
    /// around every threshold, for the policies the pipeline and the benches make.
    #[test]
    fn dispatch_names_the_function_auto_calls() {
        let c = cpu();
        let policies = [
            AutoPolicy::for_cpu(c),
            AutoPolicy::for_reuse(c, 1 << 20),
            AutoPolicy::for_reuse(c, 1 << 40),
            AutoPolicy {
                wide_until: 70,
                erms_from: 100,
                erms_until: 700,
                nt_from: 1000,
            },
        ];
        for policy in policies {
            let auto = Copier::with_policy(Routine::Auto, policy).unwrap();
            let mut sizes = vec![0, 1, 64, 65, 512, 513, 1500, 4096, 1 << 30];
            for t in [
                policy.wide_until,
                policy.erms_from,
                policy.erms_until,
                policy.nt_from,
            ] {
                if t < usize::MAX {
                    sizes.extend([t.saturating_sub(1), t, t + 1]);
                }
            }
            for n in sizes {
                let fixed = Copier::with_policy(auto.dispatch(n), policy).unwrap();
                assert_eq!(
                    auto.fn_for(n) as usize,
                    fixed.fn_for(n) as usize,
                    "{n} bytes under {policy:?}: auto is not {:?}",
                    auto.dispatch(n)
                );
            }
        }
    }

    /// The walk that starts at the band of a size's power of two finds the same band as a
    /// walk from the first, at every cut, every power of two and their neighbours, for
    /// copiers with one band, the policies' few and the most a copier holds (cuts that fall
    /// inside and on powers of two).
    #[test]
    fn band_of_matches_a_walk_from_the_first_band() {
        let walk = |c: &Copier, n: usize| c.walk_from(0, n);
        let routines = [Routine::Libc, Routine::Erms];
        let many: Vec<(usize, Routine)> = (0..MAX_BANDS + 2)
            .map(|i| (if i == 0 { 0 } else { 3 + 7 * i * i * i }, routines[i % 2]))
            .collect();
        let on_powers: Vec<(usize, Routine)> = (0..8)
            .map(|i| (if i == 0 { 0 } else { 1 << (2 * i) }, routines[i % 2]))
            .collect();
        let policy = AutoPolicy::for_cpu(cpu());
        let copiers = [
            Copier::with_policy(Routine::Libc, policy).unwrap(),
            Copier::with_policy(Routine::Auto, policy).unwrap(),
            Copier::from_bands(Routine::Auto, &many, policy),
            Copier::from_bands(Routine::Auto, &on_powers, policy),
        ];
        for c in &copiers {
            let mut sizes = vec![0, 1, 2, 3, usize::MAX];
            for k in 0..usize::BITS {
                let p = 1usize << k;
                sizes.extend([p - 1, p, p + 1]);
            }
            for &f in &c.from[..c.bands] {
                sizes.extend([f.saturating_sub(1), f, f.saturating_add(1)]);
            }
            for n in sizes {
                assert_eq!(c.band_of(n), walk(c, n), "{n} bytes, {}", c.describe());
            }
        }
        // Where `rep movsb` is not offered (the portable build) its bands are libc's, merged.
        let expected = if routine_fn(Routine::Erms).is_ok() {
            MAX_BANDS
        } else {
            1
        };
        assert_eq!(copiers[2].bands, expected, "{}", copiers[2].describe());
    }

    /// The calibration runs once per process (every call returns the same one), measures
    /// every class or says it stopped at its deadline (the classes it did not reach keeping
    /// libc; how long it took is the host's, and the deadline is tested in `calibrate` with
    /// a candidate slow on purpose), and names a routine of this CPU for every class; `Auto`
    /// copiers follow it below the non-temporal band, and never stream into a destination
    /// read back from cache.
    #[test]
    fn calibration_runs_once_and_auto_follows_it() {
        let first = calibration();
        assert!(std::ptr::eq(first, calibration()), "calibrated twice");
        assert_eq!(first.classes.len(), CLASS_TOPS.len());
        if first.how.starts_with("measured") {
            let measured = first.timings.len();
            assert!(
                measured == CLASS_TOPS.len() || first.how.contains("stopped at the"),
                "{measured} classes measured: {}",
                first.how
            );
            assert!(
                first.classes[measured..]
                    .iter()
                    .all(|&(_, r)| r == Routine::Libc),
                "{:?}",
                first.classes
            );
        }
        let candidates = auto_candidates();
        for &(_, r) in &first.classes {
            assert!(candidates.contains(&r), "{r} is not a candidate here");
        }
        if first.static_policy {
            return; // ZCRX_COPY_AUTO=static: the thresholds, tested above
        }
        let auto = Copier::new(Routine::Auto).unwrap();
        assert!(auto.is_calibrated());
        let nt_from = auto.policy().nt_from;
        for &top in CLASS_TOPS.iter().filter(|&&t| t < nt_from) {
            assert_eq!(auto.dispatch(top), first.arena_routine_for(top), "{top} B");
        }
        let hot = Copier::for_destination(Routine::Auto, 4096).unwrap();
        if cpu().l2_bytes >= 8192 {
            for &top in CLASS_TOPS.iter() {
                assert_eq!(hot.dispatch(top), first.routine_for(top), "{top} B");
            }
        }
        let arena = Copier::for_destination(Routine::Auto, 1 << 20).unwrap();
        assert!(arena.is_calibrated());
        for n in [0, 64, 1500, 1 << 16, 1 << 24, 1 << 30] {
            assert_ne!(
                arena.dispatch(n),
                Routine::NonTemporal,
                "{n} B into the arena"
            );
            assert_ne!(
                hot.dispatch(n),
                Routine::NonTemporal,
                "{n} B into a hot buffer"
            );
        }
        // A destination that leaves the caches: streaming from COLD_NT_FROM, and below it
        // the cold layout's choice.
        let cold = Copier::for_destination(Routine::Auto, 1 << 40).unwrap();
        assert!(cold.is_calibrated());
        for &top in CLASS_TOPS.iter().filter(|&&t| t < COLD_NT_FROM) {
            assert_eq!(cold.dispatch(top), first.cold_routine_for(top), "{top} B");
        }
        if cpu().avx2 && cfg!(all(target_arch = "x86_64", not(zcrx_portable))) {
            assert_eq!(cold.dispatch(COLD_NT_FROM), Routine::NonTemporal);
            assert_ne!(cold.dispatch(COLD_NT_FROM - 1), Routine::NonTemporal);
        }
    }
}
