//! [`Bench`]: the lab, the generator and the flows, kept across the modes of a run.

use anyhow::{bail, Context, Result};
use zcrx_ring::frames::{UdpFlow, DPORT_BASE};
use zcrx_ring::lab::Lab;
use zcrx_ring::TxRing;

use super::schema::RunConfig;
use crate::sys;

/// The lab, the generator, and the flows, kept across modes.
pub struct Bench {
    pub(super) lab: Lab,
    pub(super) tx: TxRing,
    pub(super) config: RunConfig,
    /// After the lab, so that it is dropped after it: a signal meanwhile still cleans up.
    _held: crate::lab::interrupt::Lab,
}

impl Bench {
    /// Builds the lab (needs root).
    pub fn new(config: RunConfig) -> Result<Bench> {
        if !zcrx_ring::has_cap_net_raw() {
            bail!("rxbench needs root (CAP_NET_RAW for AF_PACKET, CAP_SYS_ADMIN for network namespaces); run it with sudo");
        }
        let held = crate::lab::interrupt::Lab::hold();
        let lab = Lab::new().context("creating the netns lab (needs root and iproute2)")?;
        if config.distinct_sources {
            // b's stack answers nothing, but a route back keeps reverse-path filtering (if
            // on) from dropping the sources outside b's subnet.
            lab.b
                .ip(&["route", "add", "198.19.0.0/16", "dev", &lab.b.iface])
                .context("adding the route for the distinct sources")?;
        }
        // One socket per flow, up to 20 000: the soft open-file limit is often 1024.
        sys::raise_nofile().context("raising RLIMIT_NOFILE")?;
        let iface = lab.a.iface.clone();
        let tx = lab
            .a
            .run(move || TxRing::builder(iface).frame_count(8192).build())??;
        for s in &config.sizes {
            if *s < 60 || *s > tx.max_frame_len() {
                bail!(
                    "--sizes {s}: frames must be 60..={} bytes",
                    tx.max_frame_len()
                );
            }
        }
        Ok(Bench {
            lab,
            tx,
            config,
            _held: held,
        })
    }

    /// One frame per flow: to b's IP stack (`to_stack`) or to a foreign MAC (seen only by
    /// promiscuous receivers, which the stack then ignores).
    pub(super) fn frames(&self, size: usize, to_stack: bool) -> Vec<Vec<u8>> {
        (0..self.config.flows)
            .map(|i| {
                let mut flow = UdpFlow::lab(
                    &self.lab.a,
                    &self.lab.b,
                    i as u16,
                    DPORT_BASE + i as u16,
                    to_stack,
                );
                if self.config.distinct_sources {
                    flow.src_ip = distinct_source(i);
                }
                flow.frame(i as u64, size)
            })
            .collect()
    }

    /// The netns lab the modes run in (a sends, b receives).
    pub fn lab(&self) -> &Lab {
        &self.lab
    }
}

/// Source address of flow `i` with distinct sources: 198.19.0.0/16 from .0.1 on (the
/// benchmarking range's upper half; the lab's own addresses are in 198.18.0.0/24).
fn distinct_source(i: usize) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::from(u32::from(std::net::Ipv4Addr::new(198, 19, 0, 1)) + i as u32)
}

/// Fills in the UDP checksum of a lab frame (IPv4, no VLAN), which the lab leaves 0 ("not
/// computed"). The kernel's UDP GRO coalesces only datagrams with a checksum (the GSO it
/// would be resegmented by computes one), so `sockets-gro` sends them with one.
pub(super) fn with_udp_checksum(frame: &mut [u8]) {
    const IP: usize = 14;
    const UDP: usize = IP + 20;
    if frame.len() < UDP + 8 || frame[12..14] != [0x08, 0x00] || frame[IP + 9] != 17 {
        return;
    }
    let udp_len = usize::from(u16::from_be_bytes([frame[UDP + 4], frame[UDP + 5]]));
    let Some(udp) = frame.get(UDP..UDP + udp_len) else {
        return;
    };
    let mut sum: u32 = 0;
    let mut add = |b: &[u8]| {
        for pair in b.chunks(2) {
            let hi = u32::from(pair[0]) << 8;
            sum += hi | pair.get(1).map_or(0, |&lo| u32::from(lo));
        }
    };
    add(&frame[IP + 12..IP + 20]); // source and destination addresses
    add(&[0, 17]);
    add(&(udp_len as u16).to_be_bytes());
    add(&udp[..6]);
    add(&udp[8..]);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let c = match !(sum as u16) {
        0 => 0xffff,
        c => c,
    };
    frame[UDP + 6..UDP + 8].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_udp_checksum_sums_to_all_ones() {
        // RFC 1071: the one's-complement sum over the pseudo-header and the datagram,
        // checksum included, is 0xffff.
        for len in [64, 61, 1400] {
            let mut f = zcrx_ring::frames::UdpFlow::synthetic(3).frame(9, len);
            with_udp_checksum(&mut f);
            let c = u16::from_be_bytes([f[40], f[41]]);
            assert_ne!(c, 0);
            let mut sum: u32 = 0;
            let udp_len = f.len() - 34;
            let mut words = f[26..34].to_vec(); // addresses
            words.extend_from_slice(&[0, 17]);
            words.extend_from_slice(&(udp_len as u16).to_be_bytes());
            words.extend_from_slice(&f[34..]);
            for w in words.chunks(2) {
                sum += u32::from(w[0]) << 8 | w.get(1).map_or(0, |&b| u32::from(b));
            }
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            assert_eq!(sum, 0xffff, "{len} B");
        }
    }

    #[test]
    fn distinct_sources_count_up_from_198_19_0_1() {
        assert_eq!(distinct_source(0), std::net::Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(
            distinct_source(4095),
            std::net::Ipv4Addr::new(198, 19, 16, 0)
        );
        assert_eq!(
            distinct_source(19_999),
            std::net::Ipv4Addr::new(198, 19, 78, 32)
        );
    }
}
