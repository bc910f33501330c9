//! NTP (UDP 123) as tcpdump 4.99's print-ntp.c prints it: the version, the mode and the
//! length; with `-v` a time message's stratum, poll, precision, root delay and dispersion,
//! reference ID and time stamps (seconds.fraction and the UTC date), or a control message's
//! header.

use std::fmt::Write as _;

use super::nd::{be32, printn, u8at};
use super::Payload;
use crate::dissect::field::{be16, v4};

/// A time message's length without the key ID and digest.
const TIME_LEN: usize = 48;
/// A control message's header.
const CONTROL_LEN: usize = 12;
/// Seconds from 1900 (NTP's epoch) to 1970.
const JAN_1970: i64 = 2_208_988_800;

/// Prints an NTP message.
pub fn print(out: &mut String, p: &Payload<'_>) {
    if message(out, p).is_none() {
        out.push_str(" [|ntp]");
    }
}

fn message(out: &mut String, p: &Payload<'_>) -> Option<()> {
    let d = p.data;
    let status = u8at(d, 0)?;
    let mode = status & 7;
    let name = match mode {
        0 => "unspecified",
        1 => "symmetric active",
        2 => "symmetric passive",
        3 => "Client",
        4 => "Server",
        5 => "Broadcast",
        6 => "Control Message",
        _ => "Reserved",
    };
    let _ = write!(
        out,
        "NTPv{}, {name}, length {}",
        (status & 0x38) >> 3,
        p.len
    );
    if p.verbose == 0 {
        return Some(());
    }
    let leap = status & 0xc0;
    let leap_name = match leap {
        0 => "",
        0x40 => "+1s",
        0x80 => "-1s",
        _ => "clock unsynchronized",
    };
    let _ = write!(out, "\n\tLeap indicator: {leap_name} ({leap})");
    match mode {
        0..=5 => time(out, d, p.len),
        6 => control(out, d, p.len),
        _ => Some(()),
    }
}

/// " (invalid)", and the truncation mark if the capture lacks the `len` bytes.
fn invalid(out: &mut String, d: &[u8], len: usize) -> Option<()> {
    out.push_str(" (invalid)");
    (d.len() >= len).then_some(())
}

/// A time request's or reply's fields.
fn time(out: &mut String, d: &[u8], len: usize) -> Option<()> {
    if len < TIME_LEN {
        return invalid(out, d, len);
    }
    let stratum = u8at(d, 1)?;
    let kind = match stratum {
        0 => "unspecified",
        1 => "primary reference",
        2..=15 => "secondary reference",
        _ => "reserved",
    };
    let _ = write!(out, ", Stratum {stratum} ({kind})");
    let poll = u8at(d, 2)? as i8;
    let _ = write!(out, ", poll {poll}");
    match poll {
        0..=31 => {
            let _ = write!(out, " ({}s)", 1u32 << poll);
        }
        -31..=-1 => {
            let _ = write!(out, " (1/{}s)", 1u32 << -poll);
        }
        _ => {}
    }
    let _ = write!(out, ", precision {}", u8at(d, 3)? as i8);
    let _ = write!(out, "\n\tRoot Delay: {}", sfix(d, 4)?);
    let _ = write!(out, ", Root dispersion: {}", sfix(d, 8)?);
    let refid = be32(d, 12)?;
    out.push_str(", Reference-ID: ");
    match stratum {
        0 => out.push_str("(unspec)"),
        1 => {
            printn(out, d.get(12..16).unwrap_or_default(), 4);
        }
        62 | 63 => {
            let what = if stratum == 62 { "QUERY" } else { "REPLY" };
            let _ = write!(out, "{} INFO_{what}", v4(d, 12)?);
            return Some(());
        }
        _ => {
            let _ = write!(out, "0x{refid:08x}");
        }
    }
    stamps(out, d)?;
    trailer(out, d, len)
}

/// The four time stamps and the two differences.
fn stamps(out: &mut String, d: &[u8]) -> Option<()> {
    for (at, name) in [
        (16, "Reference Timestamp:  "),
        (24, "Originator Timestamp: "),
        (32, "Receive Timestamp:    "),
        (40, "Transmit Timestamp:   "),
    ] {
        let t = (be32(d, at)?, be32(d, at + 4)?);
        let _ = write!(out, "\n\t  {name}");
        ntp_time(out, t);
    }
    let org = (be32(d, 24)?, be32(d, 28)?);
    for (at, name) in [(32, "Receive"), (40, "Transmit")] {
        let t = (be32(d, at)?, be32(d, at + 4)?);
        let pad = if at == 32 { " " } else { "" };
        let _ = write!(out, "\n\t    Originator - {name} Timestamp: {pad}");
        delta(out, org, t);
    }
    Some(())
}

/// What follows the 48 bytes: a key ID, a key ID and a digest, or a count of bytes.
fn trailer(out: &mut String, d: &[u8], len: usize) -> Option<()> {
    match len - TIME_LEN {
        0 => {}
        4 => {
            let _ = write!(out, "\n\tKey id: {}", be32(d, 48)?);
        }
        n @ (20 | 24) => {
            let _ = write!(out, "\n\tKey id: {}", be32(d, 48)?);
            d.get(52..52 + n - 4)?;
            out.push_str("\n\tAuthentication: ");
            for at in (52..48 + n).step_by(4) {
                let _ = write!(out, "{:08x}", be32(d, at)?);
            }
        }
        n => {
            let _ = write!(out, "\n\t({n} more bytes after the header)");
        }
    }
    Some(())
}

/// A control message's header.
fn control(out: &mut String, d: &[u8], len: usize) -> Option<()> {
    if len < CONTROL_LEN {
        return invalid(out, d, len);
    }
    let c = u8at(d, 1)?;
    let _ = write!(
        out,
        ", {}, {}, {}, OpCode={}",
        if c & 0x80 != 0 { "Response" } else { "Request" },
        if c & 0x40 != 0 { "Error" } else { "OK" },
        if c & 0x20 != 0 { "More" } else { "Last" },
        c & 0x1f
    );
    out.push('\n');
    let _ = write!(out, "\tSequence={}", be16(d, 2)?);
    match be16(d, 4)? {
        0 => out.push_str(", Status=0"),
        s => {
            let _ = write!(out, ", Status={s:#x}");
        }
    }
    let _ = write!(out, ", Assoc.={}", be16(d, 6)?);
    let _ = write!(out, ", Offset={}", be16(d, 8)?);
    let count = usize::from(be16(d, 10)?);
    let _ = write!(out, ", Count={count}");
    if CONTROL_LEN + count > len {
        return invalid(out, d, len);
    }
    if count != 0 {
        d.get(CONTROL_LEN..CONTROL_LEN + count)?;
        out.push_str("\n\tTO-BE-DONE: data not interpreted");
    }
    Some(())
}

/// A 16.16 fixed-point value as seconds and microseconds.
fn sfix(d: &[u8], at: usize) -> Option<String> {
    let (i, f) = (be16(d, at)?, be16(d, at + 2)?);
    let micros = (f64::from(f) / 65536.0 * 1_000_000.0) as i32;
    Some(format!("{i}.{micros:06}"))
}

/// A 32-bit fraction of a second in nanoseconds, as tcpdump rounds it.
fn nanos(frac: u32) -> u32 {
    (f64::from(frac) / 4_294_967_296.0 * 1_000_000_000.0) as u32
}

/// A time stamp as seconds.nanoseconds since 1900 and, unless 0, its UTC date.
fn ntp_time(out: &mut String, (secs, frac): (u32, u32)) {
    let _ = write!(out, "{secs}.{:09}", nanos(frac));
    if secs != 0 {
        let t = i64::from(secs) - JAN_1970;
        let (y, m, d) = crate::dissect::field::civil_from_days(t.div_euclid(86_400));
        let s = t.rem_euclid(86_400);
        let _ = write!(
            out,
            " ({y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z)",
            s / 3600,
            s / 60 % 60,
            s % 60
        );
    }
}

/// The difference `t - org`, signed, or `t` itself when `org` is 0.
fn delta(out: &mut String, org: (u32, u32), t: (u32, u32)) {
    if org == (0, 0) {
        ntp_time(out, t);
        return;
    }
    let ((u, uf), (ou, ouf)) = (t, org);
    let (minus, i, f) = if u > ou {
        (false, (u - ou) - u32::from(ouf > uf), uf.wrapping_sub(ouf))
    } else if u < ou {
        (true, (ou - u) - u32::from(uf > ouf), ouf.wrapping_sub(uf))
    } else if uf > ouf {
        (false, 0, uf - ouf)
    } else {
        (true, 0, ouf - uf)
    };
    let sign = if minus { '-' } else { '+' };
    let _ = write!(out, "{sign}{i}.{:09}", nanos(f));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data: &[u8], verbose: u8) -> String {
        super::super::payload::printed(print, data, (123, 123), verbose)
    }

    #[test]
    fn time_stamps_and_differences() {
        let mut s = String::new();
        ntp_time(&mut s, (3_908_119_099, 0x8000_0000));
        ntp_time(&mut s, (1, 0xffff_ffff));
        assert_eq!(
            s,
            "3908119099.500000000 (2023-11-04T20:38:19Z)1.999999999 (1900-01-01T00:00:01Z)"
        );
        let mut s = String::new();
        delta(&mut s, (10, 0x8000_0000), (12, 0x4000_0000));
        delta(&mut s, (12, 0x4000_0000), (10, 0x8000_0000));
        delta(&mut s, (10, 5), (10, 5));
        assert_eq!(s, "+1.750000000-1.750000000-0.000000000");
        assert_eq!(sfix(&[0, 1, 0x80, 0], 0).unwrap(), "1.500000");
    }

    #[test]
    fn a_client_request_and_a_short_one() {
        let mut m = vec![0xe3, 0, 6, 0xe9];
        m.resize(48, 0);
        assert_eq!(text(&m, 0), "NTPv4, Client, length 48");
        let v = text(&m, 1);
        assert!(v.starts_with(
            "NTPv4, Client, length 48\n\tLeap indicator: clock unsynchronized (192), \
             Stratum 0 (unspecified), poll 6 (64s), precision -23\n\tRoot Delay: 0.000000"
        ));
        assert_eq!(
            text(&m[..20], 1),
            "NTPv4, Client, length 20\n\tLeap indicator: clock unsynchronized (192) (invalid)"
        );
        assert_eq!(text(&m[..0], 1), " [|ntp]");
        let control = [0x16, 0x82, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            text(&control, 1),
            "NTPv2, Control Message, length 12\n\tLeap indicator:  (0), Response, OK, Last, \
             OpCode=2\n\tSequence=1, Status=0, Assoc.=0, Offset=0, Count=0"
        );
    }
}
