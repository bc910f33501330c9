//! What an application printer is given, and its type.

use std::cell::Cell;

/// What an application printer reads.
#[derive(Debug, Clone, Copy)]
pub struct Payload<'a> {
    /// The payload's bytes that were captured (shorter than `len` when the snapshot cut it).
    pub data: &'a [u8],
    /// The payload's length by the transport header (UDP's length, or what the IP length
    /// leaves after the TCP header).
    pub len: usize,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// The `-v` count.
    pub verbose: u8,
    /// Without `-n`: MAC addresses carry their maker (as tcpdump names them).
    pub names: bool,
    /// Set by a printer that stopped where tcpdump's would have jumped out (a read past the
    /// capture): tcpdump's `-x`/`-X`/`-A` dumps then start at the link layer.
    pub jumped: &'a Cell<bool>,
}

impl Payload<'_> {
    /// Whether `port` is the source or the destination port.
    pub fn either(&self, port: u16) -> bool {
        self.sport == port || self.dport == port
    }
}

/// Appends a protocol's text for a payload to the line.
pub type Printer = fn(&mut String, &Payload<'_>);

/// A printer's text for a whole payload `data` between `ports` (source, destination) at the
/// `-v` count `verbose`, numeric: what the printers' unit tests read.
#[cfg(test)]
pub(super) fn printed(print: Printer, data: &[u8], ports: (u16, u16), verbose: u8) -> String {
    let mut s = String::new();
    let p = Payload {
        names: false,
        jumped: &Cell::new(false),
        data,
        len: data.len(),
        sport: ports.0,
        dport: ports.1,
        verbose,
    };
    print(&mut s, &p);
    s
}
