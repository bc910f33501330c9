//! The DNS printers over crafted messages.

use super::super::Payload;

fn line(f: super::super::Printer, msg: &[u8], len: usize, verbose: u8) -> String {
    let p = Payload {
        data: msg,
        len,
        sport: 1024,
        dport: 53,
        verbose,
    };
    let mut out = String::new();
    f(&mut out, &p);
    out
}
