//! Time stamps as tcpdump's `-t` flags write them.

use crate::dissect::field::civil_from_days;

/// How a line's time stamp is written: tcpdump's `-t` count (0: time of day, 1: none,
/// 2: seconds since the epoch, 3: delta since the previous packet, 4: date and time, 5: delta
/// since the first packet) and its precision (`--micro`/`--nano`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// tcpdump's `-t` count, 0..=5.
    pub format: u8,
    /// Nanoseconds instead of microseconds.
    pub nano: bool,
}

impl Stamp {
    fn frac(&self, ns: u64) -> String {
        if self.nano {
            format!("{:09}", ns % 1_000_000_000)
        } else {
            format!("{:06}", ns % 1_000_000_000 / 1000)
        }
    }

    /// " HH:MM:SS.frac" of a signed delta, as tcpdump's -ttt/-ttttt (which format it as a
    /// time of day: whole days drop out).
    fn delta(&self, from: u64, to: u64) -> String {
        let (sign, d) = if to >= from {
            (' ', to - from)
        } else {
            ('-', from - to)
        };
        let secs = d / 1_000_000_000;
        format!(
            "{sign}{:02}:{:02}:{:02}.{}",
            secs / 3600 % 24,
            secs / 60 % 60,
            secs % 60,
            self.frac(d)
        )
    }

    /// The stamp of a packet at `ts_ns` after one at `prev_ns` in a capture that began at
    /// `first_ns` (UTC), without the space that follows it; empty for `-t`.
    pub fn format(&self, ts_ns: u64, prev_ns: u64, first_ns: u64) -> String {
        let secs = ts_ns / 1_000_000_000;
        let time_of_day = |secs: u64| {
            format!(
                "{:02}:{:02}:{:02}.{}",
                secs / 3600 % 24,
                secs / 60 % 60,
                secs % 60,
                self.frac(ts_ns)
            )
        };
        match self.format {
            1 => String::new(),
            2 => format!("{secs}.{}", self.frac(ts_ns)),
            3 => self.delta(prev_ns, ts_ns),
            4 => {
                let (y, m, d) = civil_from_days((secs / 86_400) as i64);
                format!("{y:04}-{m:02}-{d:02} {}", time_of_day(secs))
            }
            5 => self.delta(first_ns, ts_ns),
            _ => time_of_day(secs),
        }
    }
}
