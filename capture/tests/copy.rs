//! Copy routines against `copy_from_slice`, memcmp variants against `<[u8]>::cmp`: every length
//! 0..=4160 and every source and destination misalignment 0..63 under `CI=true`; a shorter
//! sweep elsewhere (say `ZCRX_FULL_SWEEP=1` to run the full one, `ZCRX_SHORT_SWEEP=1` for the
//! short one even in CI: the AddressSanitizer pass, whose full sweep would take minutes and
//! repeat the plain pass's).

use std::cmp::Ordering;
use zcrx_capture::copy::memcmp::Memcmp;
use zcrx_capture::copy::{AutoPolicy, Copier, Routine};

const MAX_LEN: usize = 4160;
const ALIGN: usize = 64;

fn full() -> bool {
    if std::env::var("ZCRX_SHORT_SWEEP").is_ok() {
        return false;
    }
    std::env::var("CI").is_ok_and(|v| v == "true") || std::env::var("ZCRX_FULL_SWEEP").is_ok()
}

/// (lengths, source misalignments, destination misalignments)
fn sweep() -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    if full() {
        (
            (0..=MAX_LEN).collect(),
            (0..ALIGN).collect(),
            (0..ALIGN).collect(),
        )
    } else {
        let mut lens: Vec<usize> = (0..=300).collect();
        lens.extend((301..=MAX_LEN).step_by(37));
        lens.push(MAX_LEN);
        (lens, (0..ALIGN).collect(), vec![0, 1, 7, 31, 32, 33, 63])
    }
}

/// Runs `f(src_misalign, dst_misalign, len)` over the sweep on two threads.
fn run(f: impl Fn(&mut Vec<u8>, &mut Vec<u8>, usize, usize, usize) + Sync) {
    let (lens, sas, das) = sweep();
    std::thread::scope(|s| {
        for half in 0..2 {
            let (lens, sas, das, f) = (&lens, &sas, &das, &f);
            s.spawn(move || {
                // Over-aligned buffers: the base is 64-aligned, offsets give every misalignment.
                let mut a = vec![0u8; MAX_LEN + 3 * ALIGN];
                let mut b = vec![0u8; MAX_LEN + 3 * ALIGN];
                for &sa in sas.iter().skip(half).step_by(2) {
                    for &da in das {
                        for &len in lens {
                            f(&mut a, &mut b, sa, da, len);
                        }
                    }
                }
            });
        }
    });
}

fn aligned_base(v: &[u8]) -> usize {
    (ALIGN - (v.as_ptr() as usize % ALIGN)) % ALIGN
}

fn check_routine(copier: Copier) {
    run(|src, dst, sa, da, len| {
        let (bs, bd) = (aligned_base(src), aligned_base(dst));
        if src[bs] == 0 && src[bs + 1] == 0 {
            for (i, x) in src.iter_mut().enumerate() {
                *x = (i as u8).wrapping_mul(31).wrapping_add(7) | 1;
            }
            dst.fill(0);
        }
        let s = &src[bs + sa..bs + sa + len];
        let d0 = bd + da;
        copier.copy(&mut dst[d0..d0 + len], s);
        assert!(
            dst[d0..d0 + len] == *s,
            "{:?}: len {len} src+{sa} dst+{da}: bytes differ",
            copier.routine()
        );
        assert!(
            dst[..d0].iter().all(|&x| x == 0),
            "{:?}: wrote before dst (len {len}, +{sa}/+{da})",
            copier.routine()
        );
        assert!(
            dst[d0 + len..].iter().take(ALIGN).all(|&x| x == 0),
            "{:?}: wrote past dst (len {len}, +{sa}/+{da})",
            copier.routine()
        );
        dst[d0..d0 + len].fill(0);
    });
}

#[test]
fn libc_copies_exactly() {
    check_routine(Copier::new(Routine::Libc).unwrap());
}

/// Whether the x86-64 routines are built (not on other targets, nor with
/// `--cfg zcrx_portable`, which builds the portable fallback on x86 to test it).
const X86: bool = cfg!(all(target_arch = "x86_64", not(zcrx_portable)));

#[test]
fn erms_copies_exactly() {
    match Copier::new(Routine::Erms) {
        Ok(c) => check_routine(c),
        Err(e) if X86 => panic!("rep movsb needs no feature on x86-64: {e}"),
        Err(_) => {} // not built here: the portable fallback has libc only
    }
}

/// `routine`'s copier where the CPU and the build have what it needs (`supported`); elsewhere
/// checks that it is refused, says that `test` skipped, and gives `None`.
fn offered_where_supported(test: &str, routine: Routine, supported: bool) -> Option<Copier> {
    match Copier::new(routine) {
        Ok(c) => {
            assert!(supported, "{routine:?} offered where it cannot run");
            assert_eq!(c.routine(), routine);
            Some(c)
        }
        Err(e) => {
            assert!(!supported, "{routine:?} refused where it can run: {e}");
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

#[test]
fn avx2_copies_exactly() {
    let supported = X86 && zcrx_capture::copy::cpu().avx2;
    if let Some(c) = offered_where_supported("avx2_copies_exactly", Routine::Avx2, supported) {
        check_routine(c);
    }
}

#[test]
fn avx512_copies_exactly() {
    let supported = X86 && zcrx_capture::copy::cpu().avx512;
    if let Some(c) = offered_where_supported("avx512_copies_exactly", Routine::Avx512, supported) {
        check_routine(c);
    }
}

/// Where the CPU has AVX-512F and BW (as /proc/cpuinfo lists them), it is detected and
/// chosen: the vector routines' tests above then ran the AVX-512 code, and `auto` and `nt`
/// use it. Elsewhere the AVX2 (or libc) choice is reported instead.
#[test]
fn the_widest_vectors_are_detected_chosen_and_reported() {
    use zcrx_capture::copy::cpu;
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has = |f: &str| {
        flags
            .lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|l| l.split_whitespace().any(|w| w == f))
    };
    let built = zcrx_capture::copy::AVX512_BUILT;
    if X86 {
        assert_eq!(cpu().avx512, built && has("avx512f") && has("avx512bw"));
        assert_eq!(cpu().avx2, has("avx2"));
        // CI's compiler is new enough: there an AVX-512 CPU must get the AVX-512 routines,
        // not a silent fallback.
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            assert!(
                built,
                "CI builds with Rust >= 1.89: the AVX-512 routines must be built"
            );
        }
    }
    let widest = cpu().widest();
    // The thresholds from the cache sizes start with the widest vectors; the calibrated
    // choice names the routines it measured fastest.
    let by_policy = Copier::with_policy(Routine::Auto, AutoPolicy::for_cpu(cpu()))
        .unwrap()
        .describe();
    assert!(
        by_policy.starts_with(&format!("auto: {widest}")),
        "{by_policy}"
    );
    let auto = Copier::new(Routine::Auto).unwrap().describe();
    assert!(auto.starts_with("auto: "), "{auto}");
    if let Ok(nt) = Copier::new(Routine::NonTemporal) {
        assert_eq!(nt.describe(), format!("nt ({widest} streaming stores)"));
    }
    if cpu().avx512 {
        assert_eq!(widest, Routine::Avx512);
        assert_eq!(Memcmp::Avx512.resolved(), Memcmp::Avx512);
    } else {
        assert!(Copier::new(Routine::Avx512).is_err());
        assert_ne!(Memcmp::Avx512.resolved(), Memcmp::Avx512);
    }
}

/// Where the x86-64 routines are built and the CPU has AVX2 (what the streaming routine
/// needs), `nt` is offered and copies exactly, its streaming body included (the sweep goes
/// well past 512 bytes); elsewhere it must be refused, and the test says that it skipped.
#[test]
fn non_temporal_copies_exactly() {
    // The streaming routine is the widest vector routine the CPU has, AVX2 at least.
    let supported = X86 && zcrx_capture::copy::cpu().avx2;
    let test = "non_temporal_copies_exactly";
    if let Some(c) = offered_where_supported(test, Routine::NonTemporal, supported) {
        let what = c.describe();
        assert!(what.contains("streaming stores"), "{what}");
        check_routine(c);
    }
}

#[test]
fn auto_copies_exactly_in_every_band() {
    // Small thresholds so the sweep crosses all five bands (avx512 where the CPU has it,
    // avx2, rep movsb, avx2 again, non-temporal).
    if let Ok(c) = Copier::with_policy(
        Routine::Auto,
        AutoPolicy {
            wide_until: 70,
            erms_from: 100,
            erms_until: 700,
            nt_from: 1000,
        },
    ) {
        check_routine(c);
    }
    check_routine(Copier::new(Routine::Auto).unwrap());
    // A far destination: the widest vectors at every size below the streaming band.
    check_routine(Copier::for_destination(Routine::Auto, 1 << 40).unwrap());
}

#[test]
fn memcmp_variants_agree_with_slice_cmp_including_sign() {
    run(|a, b, sa, sb, len| {
        let (ba, bb) = (aligned_base(a), aligned_base(b));
        let (x0, y0) = (ba + sa, bb + sb);
        for i in 0..len {
            let v = (i as u8).wrapping_mul(13).wrapping_add(5);
            a[x0 + i] = v;
            b[y0 + i] = v;
        }
        // Equal, then a difference at a position that depends on the case, both signs.
        let pos = if len == 0 {
            0
        } else {
            (len * 7 + sa * 3 + sb) % len
        };
        for m in Memcmp::ALL {
            assert_eq!(
                m.compare(&a[x0..x0 + len], &b[y0..y0 + len]),
                Ordering::Equal,
                "{m:?} len {len}"
            );
        }
        if len > 0 {
            for delta in [1u8, 255] {
                let saved = b[y0 + pos];
                b[y0 + pos] = saved.wrapping_add(delta);
                let want = a[x0..x0 + len].cmp(&b[y0..y0 + len]);
                for m in Memcmp::ALL {
                    assert_eq!(
                        m.compare(&a[x0..x0 + len], &b[y0..y0 + len]),
                        want,
                        "{m:?} len {len} diff at {pos} +{sa}/+{sb}"
                    );
                }
                b[y0 + pos] = saved;
            }
        }
    });
}

#[test]
fn routine_names_round_trip_and_auto_describes_itself() {
    for r in Routine::ALL {
        assert_eq!(Routine::from_name(r.name()), Some(r));
    }
    assert_eq!(Routine::from_name("memcpy"), None);
    let d = Copier::new(Routine::Auto).unwrap().describe();
    assert!(d.starts_with("auto:"), "{d}");
    // Streaming stores need the x86 vectors: elsewhere the large band is libc's.
    assert_eq!(
        d.contains("non-temporal"),
        X86 && zcrx_capture::copy::cpu().avx2,
        "{d}"
    );
}

#[test]
fn auto_never_streams_into_a_destination_read_back_from_cache() {
    use zcrx_capture::copy::cpu;
    let c = cpu();
    let llc = if c.llc_bytes > 0 {
        c.llc_bytes
    } else {
        8 << 20
    };
    // The pipeline's arenas (a packet, a batch of at most a block): never non-temporal.
    for reuse in [2048, 1 << 20, llc / 2] {
        let p = AutoPolicy::for_reuse(c, reuse);
        assert_eq!(p.nt_from, usize::MAX, "reuse {reuse}");
        let d = Copier::for_destination(Routine::Auto, reuse)
            .unwrap()
            .describe();
        assert!(d.contains("never non-temporal"), "{d}");
    }
    // A destination the caches cannot hold until it is read: streaming from COLD_NT_FROM,
    // the widest vectors below.
    let far = AutoPolicy::for_reuse(c, 4 * llc);
    assert_eq!(
        far.nt_from,
        zcrx_capture::copy::COLD_NT_FROM,
        "far destination"
    );
    assert_eq!(
        far.wide_until,
        if c.avx512 { usize::MAX } else { 0 },
        "far destination"
    );
    // Cached: 512-bit vectors only for copies without a loop.
    assert_eq!(
        AutoPolicy::for_reuse(c, 1 << 20).wide_until,
        if c.avx512 { 512 } else { 0 }
    );
    // Fixed routines are what they are.
    assert_eq!(
        Copier::for_destination(Routine::Libc, 1 << 20)
            .unwrap()
            .routine(),
        Routine::Libc
    );
}

/// Read/write pages fenced by inaccessible ones: any access past either end faults.
struct Fenced {
    base: *mut u8,
    page: usize,
}

// Guard pages need mmap, mprotect and munmap: the only unsafe code of this test.
#[allow(unsafe_code)]
impl Fenced {
    /// One accessible page between two `PROT_NONE` pages.
    fn new() -> Fenced {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
        // SAFETY: a fresh anonymous private mapping; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                3 * page,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let base = base.cast::<u8>();
        // SAFETY: the middle page lies within the mapping just made.
        let rc = unsafe {
            libc::mprotect(
                base.add(page).cast(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        assert_eq!(rc, 0, "mprotect");
        Fenced { base, page }
    }

    /// The accessible page.
    fn page(&mut self) -> &mut [u8] {
        // SAFETY: the middle page is mapped read/write for the life of `self` and only
        // reachable through this `&mut self` borrow.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.page), self.page) }
    }
}

#[allow(unsafe_code)]
impl Drop for Fenced {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no slice of it outlives `self`.
        unsafe { libc::munmap(self.base.cast(), 3 * self.page) };
    }
}

/// The masked and overlapping head/tail accesses stay inside the buffers: copies and compares
/// of every length up to 300 bytes with both buffers ending at (then starting at) a page
/// whose neighbour is inaccessible do not fault, and give the right bytes and order.
#[test]
fn no_routine_touches_a_byte_past_either_end() {
    let (mut s, mut d) = (Fenced::new(), Fenced::new());
    let page = s.page().len();
    for (i, x) in s.page().iter_mut().enumerate() {
        *x = (i as u8).wrapping_mul(29).wrapping_add(3);
    }
    let copiers: Vec<Copier> = Routine::ALL
        .into_iter()
        .filter_map(|r| Copier::new(r).ok())
        .collect();
    for len in 0..=300 {
        for at_end in [true, false] {
            let off = if at_end { page - len } else { 0 };
            for c in &copiers {
                d.page().fill(0);
                let src = &s.page()[off..off + len];
                c.copy(&mut d.page()[off..off + len], src);
                assert!(
                    d.page()[off..off + len] == *src,
                    "{:?} len {len}",
                    c.routine()
                );
            }
            let src = s.page()[off..off + len].to_vec();
            let dst = &mut d.page()[off..off + len];
            dst.copy_from_slice(&src);
            if len > 0 {
                dst[len - 1] ^= 0x80;
            }
            let want = src.as_slice().cmp(dst);
            for m in Memcmp::ALL {
                assert_eq!(
                    m.compare(&s.page()[off..off + len], &d.page()[off..off + len]),
                    want,
                    "{m:?} len {len}"
                );
            }
        }
    }
}
