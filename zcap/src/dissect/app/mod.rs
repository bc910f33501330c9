//! Application-layer printers, one file a protocol, and the port tables that choose them.
//!
//! A printer is given a [`Payload`] (the bytes the capture holds, the length the transport
//! header gives, the ports and the `-v` count) and appends to the packet's one line buffer what
//! tcpdump 4.99 prints after the transport's part: after `a.p > b.q: ` for UDP, after
//! `, length N` for TCP (so a TCP printer writes its own `": "`). Printers read only through
//! checked accessors (`get`, the `field` readers): a short or hostile payload ends the text
//! with tcpdump's truncation mark, never a panic.
//!
//! A protocol joins the dispatch with one line in [`UDP`] or [`TCP`]: the tables are searched
//! in order and the first entry whose port is the source or the destination port wins, the
//! order of tcpdump's `udp_print` and `tcp_print` chains.

mod bootp;
mod dhcp6;
pub mod dns;
mod nd;
mod ntp;
mod payload;
mod resp;
mod ssh;
mod syslog;
mod text;
mod tftp;

pub use payload::{Payload, Printer};

/// UDP's printers by port, in tcpdump's order of precedence.
pub const UDP: &[(u16, Printer)] = &[
    (53, dns::udp),       // DNS
    (5353, dns::mdns),    // mDNS
    (69, tftp::print),    // TFTP
    (67, bootp::print),   // BOOTP/DHCP server
    (68, bootp::print),   // BOOTP/DHCP client
    (123, ntp::print),    // NTP
    (546, dhcp6::print),  // DHCPv6 client
    (547, dhcp6::print),  // DHCPv6 server
    (5060, text::sip),    // SIP
    (514, syslog::print), // syslog
];

/// TCP's printers by port, in tcpdump's order of precedence (printed after `, length N`,
/// only when the segment carries data).
pub const TCP: &[(u16, Printer)] = &[
    (25, text::smtp),
    (6379, resp::resp),
    (22, ssh::ssh),
    (21, text::ftp),
    (80, text::http),
    (8080, text::http),
    (554, text::rtsp),
    (8554, text::rtsp),
    (53, dns::tcp),
];

/// The printer for `p` in `table`, if one of its ports has one.
pub fn printer(table: &[(u16, Printer)], p: &Payload<'_>) -> Option<Printer> {
    table
        .iter()
        .find(|(port, _)| p.either(*port))
        .map(|(_, f)| *f)
}
