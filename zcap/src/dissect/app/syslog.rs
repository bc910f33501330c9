//! Syslog (UDP 514) as tcpdump 4.99's print-syslog.c prints it: the facility and severity
//! of the `<PRI>`; with `-v` the message text, with `-vv` a hex dump of the whole payload.

use std::fmt::Write as _;

use super::nd::{hex_print, printn};
use super::Payload;

const SEVERITY: [&str; 8] = [
    "emergency",
    "alert",
    "critical",
    "error",
    "warning",
    "notice",
    "info",
    "debug",
];

const FACILITY: [&str; 24] = [
    "kernel", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
    "authpriv", "ftp", "ntp", "security", "console", "cron", "local0", "local1", "local2",
    "local3", "local4", "local5", "local6", "local7",
];

/// Prints a syslog message.
pub fn print(out: &mut String, p: &Payload<'_>) {
    if message(out, p).is_none() {
        out.push_str(" [|syslog]");
    }
}

fn name(table: &[&str], v: u16) -> String {
    table
        .get(usize::from(v))
        .map_or_else(|| format!("unknown ({v})"), |s| (*s).to_string())
}

fn message(out: &mut String, p: &Payload<'_>) -> Option<()> {
    let d = p.data;
    if *d.first()? != b'<' {
        out.push_str(" (invalid)");
        return Some(());
    }
    let mut off = 1;
    let mut pri: u16 = 0;
    while off <= 3 {
        let c = *d.get(off)?;
        if !c.is_ascii_digit() {
            break;
        }
        pri = pri * 10 + u16::from(c - b'0');
        off += 1;
    }
    if *d.get(off)? != b'>' {
        out.push_str(" (invalid)");
        return Some(());
    }
    off += 1;
    let (facility, severity) = ((pri & 0x3f8) >> 3, pri & 7);
    let (f, s) = (name(&FACILITY, facility), name(&SEVERITY, severity));
    if p.verbose == 0 {
        let _ = write!(out, "SYSLOG {f}.{s}, length: {}", p.len);
        return Some(());
    }
    let _ = write!(
        out,
        "SYSLOG, length: {}\n\tFacility {f} ({facility}), Severity {s} ({severity})\n\tMsg: ",
        p.len
    );
    if p.len > off && printn(out, d.get(off..).unwrap_or_default(), p.len - off) {
        return None;
    }
    if p.verbose > 1 {
        hex_print(out, "\n\t", d, p.len)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data: &[u8], verbose: u8) -> String {
        super::super::payload::printed(print, data, (514, 514), verbose)
    }

    #[test]
    fn priority_and_message() {
        assert_eq!(text(b"<34>su: hi", 0), "SYSLOG auth.critical, length: 10");
        assert_eq!(
            text(b"<34>su: hi", 1),
            "SYSLOG, length: 10\n\tFacility auth (4), Severity critical (2)\n\tMsg: su: hi"
        );
        assert_eq!(text(b"<1000>x", 0), " (invalid)");
        assert_eq!(text(b"<999>", 0), "SYSLOG unknown (124).debug, length: 5");
        assert_eq!(text(b"<3", 0), " [|syslog]");
    }
}
