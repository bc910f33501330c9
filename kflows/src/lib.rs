//! Flows counted in the kernel's receive path: an eBPF program at tcx (ingress, and egress
//! for the host's own traffic), or at XDP for received frames ([`Hook::Xdp`]), reads each
//! packet's 5-tuple and adds the packet to its flow's entry in a per-CPU hash map (packets,
//! IP octets, TCP flags, first and last time, per flow and direction), then passes the
//! packet on: the host and other sniffers see everything, and no packet crosses into user
//! space. [`KernelFlows`] loads and attaches the program, reads the map
//! ([`KernelFlows::poll`]) into the flow cache's types ([`FlowRecord`](zcrx_flowcache::FlowRecord), [`FlowStats`](zcrx_flowcache::FlowStats):
//! per-direction counters under the flow's canonical key, as the pipeline's flow table gives
//! them) and deletes the entries of flows that ended, so the map does not fill forever.
//!
//! ```no_run
//! use zcrx_kflows::{KernelFlows, KernelFlowsConfig};
//! let mut flows = KernelFlows::attach("eth0", KernelFlowsConfig::new().egress(true))?;
//! loop {
//!     std::thread::sleep(std::time::Duration::from_secs(1));
//!     for record in flows.poll()? {
//!         println!("{} {:?} {:?}", record.stats.key, record.stats.packets, record.end);
//!     }
//!     let c = flows.counters()?;
//!     println!("{} counted, {} not a flow, {} overflow", c.counted, c.not_a_flow, c.overflow);
//! }
//! # Ok::<(), zcrx_kflows::KernelFlowsError>(())
//! ```
//!
//! What is counted (the program's parse): Ethernet; the VLAN tag the kernel took out of the
//! frame and up to two more in it (the outermost is the key's VLAN); IPv4 with any header
//! length (a non-first fragment: ports 0, marked as a later fragment) and IPv6 with up to as
//! many extension headers as the flow cache walks (hop-by-hop, routing, fragment, AH,
//! destination options, mobility, HIP, shim6; a non-first fragment: ports 0, marked so);
//! the ports of TCP, UDP, UDP-Lite, SCTP and DCCP, the type and code of ICMP and ICMPv6
//! (other IP protocols: ports 0). Bytes are IP octets (the declared length), as the pipeline
//! counts them. Anything else — ARP, more IPv6 extension headers, a third VLAN tag, a
//! truncated header, headers beyond the skb's linear part (the program pulls the first 128
//! bytes into it) — counts in [`KernelCounters::not_a_flow`], so that the counters add up to
//! the packets the program saw.
//!
//! At XDP ([`Hook::Xdp`]) the same parse runs on the frame as the driver hands it over,
//! before any skb exists; see [`Hook::Xdp`] for what it counts differently.
//!
//! The map is sharded: up to 8 192 entries it is one per-CPU hash map; beyond, a power of two
//! of them (at most 64), each its share, the program choosing a directional key's shard by a
//! hash of the key (a map of maps holds them). A poll reads one
//! shard per command, and a command that reads a hash map scans every bucket of it without
//! giving up the CPU: with one map the size of zcap's default (131 072 buckets) that is a few
//! hundred microseconds, in which a threaded NAPI on the same CPU (on a kernel that does not
//! preempt system calls) cannot run and its device's queue overflows; a shard's scan (8 192
//! buckets at most, up to 524 288 entries) takes a few tens.
//!
//! A full shard cannot take a new flow: that flow's packets count in
//! [`KernelCounters::overflow`] (until an entry is freed), never silently. With hashed keys
//! the shards fill alike: the first entry refused comes a little before the map as a whole
//! holds `max_entries` (a shard's count varies by about its square root).
//!
//! Ending flows: a flow idle past its protocol's timeout ([`Timeouts`](zcrx_flowcache::Timeouts)) is read and deleted
//! with one `BPF_MAP_LOOKUP_AND_DELETE_ELEM` per direction. A packet that another CPU is
//! adding to the entry at that very moment (it found the entry just before the delete) is
//! lost from the counts; a packet after the delete starts a new flow.
//!
//! Long flows: with an active timeout ([`Timeouts::active`](zcrx_flowcache::Timeouts::active)) a flow whose packets since its
//! last report began longer ago than the timeout is reported at the next poll
//! ([`EndReason::Active`](zcrx_flowcache::EndReason::Active)), with its packets and bytes since the last report, as the flow
//! table does and IPFIX collectors expect; the reports and the flow's last record add up to
//! its totals. Its entries stay in the map and go on counting: user space remembers the
//! counts each report took and reports the difference next time. (Reading and deleting the
//! entry instead would lose the packets another CPU adds between the read and the delete.)
//! What differs from the flow table: an entry keeps one first time and one OR of the TCP
//! flags, so a later report's `first_ns` is the previous report's read where more than one
//! packet came in a direction (none came before it), and its TCP flags are the flow's so far.
//!
//! Reads: a poll reads each shard in a few `BPF_MAP_LOOKUP_BATCH` commands (1 024 entries
//! each), or two commands an entry (next key, lookup) on a kernel without batch reads.
//!
//! Times: `bpf_ktime_get_ns` (CLOCK_MONOTONIC), turned into wall-clock ns with the offset
//! between the two clocks measured at attach.
//!
//! Needs Linux 6.6+ (tcx; XDP: 5.18+) and CAP_BPF, CAP_PERFMON (the verifier refuses the
//! program's pointer arithmetic without it) and CAP_NET_ADMIN (or root) to attach;
//! reading and deleting through the map's fd needs no privilege afterwards. No BTF is
//! needed: the program is assembled by hand (no compiler, no object file).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

mod attach;
pub mod bpf;
mod config;
mod entry;
mod error;
mod flows;
mod hook;
mod maps;
mod program;

pub use config::KernelFlowsConfig;
pub use error::KernelFlowsError;
pub use flows::{KernelCounters, KernelFlows};
pub use hook::Hook;
