//! tcpdump's flags that are not about zcap's own machinery: the compiled filter's listing
//! (`-d`), the link and time-stamp types (`-L`, `-y`, `-J`, `-j`), the printer's switches
//! (`-K`, `-N`, `-f`, `--lengths`, `-O`), those that name protocols zcap does not decode
//! (`-b`, `-u`, `-H`: accepted, nothing to change), and those zcap refuses with its reason
//! (`-I`, `-E`, `-T`).

use anyhow::{bail, Result};
use clap::Args as ClapArgs;

/// The flags, flattened into zcap's command line.
#[derive(ClapArgs, Debug, Default)]
pub(super) struct Compat {
    /// Print the compiled filter and exit: -d as readable instructions, -dd as a C array,
    /// -ddd as decimal numbers (for the link type of -r's file, -i's interface, else
    /// Ethernet).
    #[arg(short = 'd', action = clap::ArgAction::Count, help_heading = "Capture")]
    pub(super) dump_filter: u8,
    /// Compile the filter without libpcap's optimiser.
    #[arg(short = 'O', long = "no-optimize", help_heading = "Capture")]
    pub(super) no_optimize: bool,
    /// List the link types of -i's interface (-y's choices) and exit.
    #[arg(short = 'L', long = "list-data-link-types", help_heading = "Capture")]
    pub(super) list_link_types: bool,
    /// The link type to capture with: EN10MB on an Ethernet-like interface, LINUX_SLL2 on
    /// `any` (the one each offers zcap's rings).
    #[arg(
        short = 'y',
        long = "linktype",
        value_name = "TYPE",
        help_heading = "Capture"
    )]
    pub(super) link_type: Option<String>,
    /// List the time stamp types of -i's interface (-j's choices) and exit.
    #[arg(short = 'J', long = "list-time-stamp-types", help_heading = "Capture")]
    pub(super) list_stamp_types: bool,
    /// The time stamp type: host (the kernel's stamp as a packet arrives, the one zcap's
    /// rings carry).
    #[arg(
        short = 'j',
        long = "time-stamp-type",
        value_name = "TYPE",
        help_heading = "Capture"
    )]
    pub(super) stamp_type: Option<String>,
    /// Do not verify IP, TCP or UDP checksums (no checksum notes with -v).
    #[arg(short = 'K', long = "dont-verify-checksums", help_heading = "Output")]
    pub(super) no_checksums: bool,
    /// Host names without their domain (without -n).
    #[arg(short = 'N', help_heading = "Output")]
    pub(super) short_names: bool,
    /// Foreign IPv4 addresses as numbers (without -n): those outside -i's interface's
    /// networks; a file has no interface, so with -r every address is named (as tcpdump).
    #[arg(short = 'f', help_heading = "Output")]
    pub(super) foreign_numeric: bool,
    /// Put the captured and original lengths before each line (`caplen N len M`).
    #[arg(long = "lengths", help_heading = "Output")]
    pub(super) lengths: bool,
    /// BGP AS numbers in ASDOT notation: accepted; zcap does not decode BGP.
    #[arg(short = 'b', help_heading = "Output")]
    pub(super) asdot: bool,
    /// Undecoded NFS handles: accepted; zcap does not decode NFS.
    #[arg(short = 'u', help_heading = "Output")]
    pub(super) nfs_handles: bool,
    /// 802.11s mesh headers: accepted; zcap captures no 802.11 links.
    #[arg(short = 'H', help_heading = "Output")]
    pub(super) mesh: bool,
    /// Monitor mode: refused (zcap's rings capture Ethernet-like links, not 802.11 radios).
    #[arg(short = 'I', long = "monitor-mode", help_heading = "Capture")]
    pub(super) monitor: bool,
    /// ESP decryption: refused (zcap does not decrypt ESP).
    #[arg(short = 'E', value_name = "SPEC", help_heading = "Output")]
    pub(super) esp_secret: Option<String>,
    /// Force packets to be read as TYPE: refused (zcap chooses protocols by port).
    #[arg(short = 'T', value_name = "TYPE", help_heading = "Output")]
    pub(super) packet_type: Option<String>,
}

/// The link types zcap offers on `iface` (tcpdump's names and descriptions).
pub(crate) fn link_types(iface: &str) -> &'static [(&'static str, &'static str)] {
    if iface == "any" {
        &[("LINUX_SLL2", "Linux cooked v2")]
    } else {
        &[("EN10MB", "Ethernet")]
    }
}

/// The refusals, and `-y`/`-j` checked against what zcap offers.
pub(super) fn check(c: &Compat, iface: Option<&str>) -> Result<()> {
    if c.monitor {
        bail!("-I: monitor mode is for 802.11 radios; zcap's rings capture Ethernet-like links");
    }
    if c.esp_secret.is_some() {
        bail!("-E: zcap does not decrypt ESP; its packets print as ESP");
    }
    if let Some(t) = &c.packet_type {
        bail!("-T {t}: zcap chooses each packet's protocol by its ports and cannot be told to read packets as another");
    }
    if let Some(t) = &c.link_type {
        let offered = link_types(iface.unwrap_or_default());
        if iface.is_none() {
            bail!("-y {t}: a link type is chosen for a live capture (-i)");
        }
        if !offered.iter().any(|(name, _)| name.eq_ignore_ascii_case(t)) {
            bail!(
                "-y {t}: {} offers {} only",
                iface.unwrap_or_default(),
                offered[0].0
            );
        }
    }
    if let Some(t) = &c.stamp_type {
        if !t.eq_ignore_ascii_case("host") {
            bail!("-j {t}: zcap's rings carry the kernel's stamp only (host)");
        }
    }
    Ok(())
}
