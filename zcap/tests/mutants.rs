//! Hostile captures for the printer: the crafted TCP, DNS and link-layer frames of the
//! comparison tests, each cut short and with bits flipped (a seeded generator, so a failure
//! replays), printed at every verbosity and output mode. zcap must print one line (or group)
//! per packet and exit 0, within a deadline: no panic, no hang.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ZCAP;

/// A small xorshift generator: the mutants are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Each frame, cut at a random point and with 1-4 random bits flipped, several times.
fn mutants(frames: &[(Vec<u8>, u32)]) -> Vec<(Vec<u8>, u32)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for (f, wire) in frames {
        for _ in 0..6 {
            let mut m = f.clone();
            for _ in 0..=(rng.next() % 4) {
                if !m.is_empty() {
                    let at = (rng.next() as usize) % m.len();
                    m[at] ^= 1 << (rng.next() % 8);
                }
            }
            if rng.next() % 2 == 0 && m.len() > 14 {
                let cut = 14 + (rng.next() as usize) % (m.len() - 14);
                m.truncate(cut);
            }
            out.push((m, *wire));
        }
    }
    out
}

#[test]
fn mutated_captures_print_without_a_panic_or_a_hang() {
    let frames = mutants(&crate::tcp_lines::frames());
    let path = common::tmp("mutants.pcap");
    let stamped = frames
        .iter()
        .enumerate()
        .map(|(i, (f, w))| (Duration::new(1_700_000_000 + i as u64, 0), &f[..], *w));
    common::write_pcap_cut(&path, stamped);
    for flags in [
        &["-n"][..],
        &["-n", "-v"],
        &["-n", "-vvv"],
        &["-n", "-e", "-X"],
        &["-n", "-q", "-A"],
        &["-S", "-vv", "-K"],
    ] {
        let started = Instant::now();
        let mut child = Command::new(ZCAP)
            .args(flags)
            .arg("-#")
            .arg("-r")
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = std::thread::scope(|s| {
            let reader = s.spawn(move || {
                let mut text = String::new();
                use std::io::Read as _;
                stdout.read_to_string(&mut text).map(|_| text)
            });
            // A hang is a failure: the whole file prints in well under a second.
            while child.try_wait().unwrap().is_none() {
                if started.elapsed() > Duration::from_secs(120) {
                    let _ = child.kill();
                    panic!("{flags:?}: zcap did not finish in 120 s");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            reader.join().unwrap().unwrap()
        });
        assert!(child.wait().unwrap().success(), "{flags:?}: zcap failed");
        let numbered = out
            .lines()
            .filter(|l| l.get(5..7) == Some("  ") && l[..5].trim().parse::<u32>().is_ok())
            .count();
        assert_eq!(numbered, frames.len(), "{flags:?}: a line per packet");
    }
}
