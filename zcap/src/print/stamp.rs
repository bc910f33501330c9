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
    /// The fraction of a second: 6 digits, or 9 with `--nano`.
    fn frac(&self, out: &mut String, ns: u64) {
        if self.nano {
            digits(out, ns % 1_000_000_000, 9);
        } else {
            digits(out, ns % 1_000_000_000 / 1000, 6);
        }
    }

    /// "HH:MM:SS.frac" of `secs` (whole days drop out) and the fraction of `ns`.
    fn clock(&self, out: &mut String, secs: u64, ns: u64) {
        digits(out, secs / 3600 % 24, 2);
        out.push(':');
        digits(out, secs / 60 % 60, 2);
        out.push(':');
        digits(out, secs % 60, 2);
        out.push('.');
        self.frac(out, ns);
    }

    /// " HH:MM:SS.frac" of a signed delta, as tcpdump's -ttt/-ttttt (which format it as a
    /// time of day: whole days drop out).
    fn delta(&self, out: &mut String, from: u64, to: u64) {
        let (sign, d) = if to >= from {
            (' ', to - from)
        } else {
            ('-', from - to)
        };
        out.push(sign);
        self.clock(out, d / 1_000_000_000, d);
    }

    /// Appends the stamp of a packet at `ts_ns` after one at `prev_ns` in a capture that
    /// began at `first_ns` (UTC), without the space that follows it; nothing for `-t`.
    pub fn write(&self, out: &mut String, ts_ns: u64, prev_ns: u64, first_ns: u64) {
        let secs = ts_ns / 1_000_000_000;
        match self.format {
            1 => {}
            2 => {
                out.push_str(itoa::Buffer::new().format(secs));
                out.push('.');
                self.frac(out, ts_ns);
            }
            3 => self.delta(out, prev_ns, ts_ns),
            4 => {
                let (y, m, d) = civil_from_days((secs / 86_400) as i64);
                digits(out, y.unsigned_abs(), 4);
                out.push('-');
                digits(out, u64::from(m), 2);
                out.push('-');
                digits(out, u64::from(d), 2);
                out.push(' ');
                self.clock(out, secs, ts_ns);
            }
            5 => self.delta(out, first_ns, ts_ns),
            _ => self.clock(out, secs, ts_ns),
        }
    }

    /// [`Stamp::write`] into a new string.
    pub fn format(&self, ts_ns: u64, prev_ns: u64, first_ns: u64) -> String {
        let mut s = String::new();
        self.write(&mut s, ts_ns, prev_ns, first_ns);
        s
    }
}

/// `v` in decimal, zero-padded to `width` digits (more when it needs more).
fn digits(out: &mut String, v: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let text = buf.format(v);
    for _ in text.len()..width {
        out.push('0');
    }
    out.push_str(text);
}
