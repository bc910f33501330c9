//! Interfaces: names by index (a leaf that the printers share) and the interface a live
//! capture reads, resolved once into what follows from it ([`Iface`]).

/// The name of interface `index` in the calling thread's network namespace (as tcpdump
/// shows the interface of a LINUX_SLL2 record), "?" when there is none.
pub(crate) fn interface_name(index: u32) -> String {
    nix::net::if_::if_indextoname(index)
        .map_or_else(|_| "?".into(), |name| name.to_string_lossy().into_owned())
}

/// LINKTYPE_ETHERNET (`pcap-linktype(7)`): frames as the wire carries them.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// LINKTYPE_RAW: packets that start at the IP header (what a filter for `-i any` reads).
pub const LINKTYPE_RAW: u32 = 101;
/// LINKTYPE_LINUX_SLL2: Linux "cooked" v2 records (`-i any`, as libpcap writes them).
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// The interface a live capture reads, resolved once from `-i`: whether the kernel hands
/// over cooked packets (`any`), whether it is loopback, and the link types that follow from
/// that for the stage, the filter and the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iface {
    name: String,
    cooked: bool,
    loopback: bool,
}

impl Iface {
    /// The interface `-i name` names (`any`: every interface, cooked).
    pub fn new(name: &str) -> Iface {
        Iface {
            name: name.to_string(),
            cooked: name == "any",
            loopback: name == "lo",
        }
    }

    /// The name as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `-i any`: the kernel hands over cooked packets, which start at the network layer.
    pub fn cooked(&self) -> bool {
        self.cooked
    }

    /// `lo`, or `any` (which includes it): the kernel hands over each loopback packet twice.
    pub fn sees_loopback(&self) -> bool {
        self.loopback || self.cooked
    }

    /// `lo` itself.
    pub fn loopback(&self) -> bool {
        self.loopback
    }

    /// The LINKTYPE_* of what is written: LINUX_SLL2 records for `any`, else Ethernet.
    pub fn linktype(&self) -> u32 {
        if self.cooked {
            LINKTYPE_LINUX_SLL2
        } else {
            LINKTYPE_ETHERNET
        }
    }

    /// The LINKTYPE_* a filter is compiled for: raw IP for cooked packets, else Ethernet.
    pub fn filter_linktype(&self) -> u32 {
        if self.cooked {
            LINKTYPE_RAW
        } else {
            LINKTYPE_ETHERNET
        }
    }

    /// What the stage parses: cooked packets start at the IP header.
    pub fn link(&self) -> zcrx_flowcache::LinkType {
        if self.cooked {
            zcrx_flowcache::LinkType::RawIp
        } else {
            zcrx_flowcache::LinkType::Ethernet
        }
    }

    /// tcpdump's name for the link type, for the "listening on" line.
    pub fn link_name(&self) -> &'static str {
        if self.cooked {
            "LINUX_SLL2 (Linux cooked v2)"
        } else {
            "EN10MB (Ethernet)"
        }
    }
}

impl std::fmt::Display for Iface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn any_is_cooked_and_lo_is_loopback() {
        let any = Iface::new("any");
        assert!(any.cooked() && any.sees_loopback() && !any.loopback());
        assert_eq!(
            (any.linktype(), any.filter_linktype()),
            (LINKTYPE_LINUX_SLL2, LINKTYPE_RAW)
        );
        let lo = Iface::new("lo");
        assert!(!lo.cooked() && lo.sees_loopback() && lo.loopback());
        let eth = Iface::new("eth0");
        assert!(!eth.cooked() && !eth.sees_loopback());
        assert_eq!((eth.linktype(), eth.filter_linktype()), (1, 1));
        assert_eq!(eth.link(), zcrx_flowcache::LinkType::Ethernet);
        assert_eq!(eth.to_string(), "eth0");
    }
}
