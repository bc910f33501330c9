//! The in-kernel flow counter, attached: the program and its maps, the polls that turn the
//! map's entries into flow records and end the flows that went idle, and the counters.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use zcrx_flowcache::{
    ipproto, tcp, Direction, EndReason, FlowKey, FlowRecord, FlowStats, Timeouts,
};

use crate::attach::link;
use crate::bpf;
use crate::config::KernelFlowsConfig;
use crate::entry::{key_of, sum_per_cpu, Counts, DirEntry, Flow};
use crate::error::KernelFlowsError;
use crate::hook::Hook;
use crate::maps::{counter_map, FlowMaps, SHARD_ENTRIES};
use crate::program::{self, C_COUNTED, C_NOT_A_FLOW, C_OVERFLOW, KEY_SIZE, VALUE_SIZE};

/// The program's counters, summed over the CPUs: every packet it saw is in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct KernelCounters {
    /// Packets added to a flow.
    pub counted: u64,
    /// Packets that are not a flow (not IP, too many IPv6 extension headers, a truncated
    /// header).
    pub not_a_flow: u64,
    /// Packets of a new flow that the full map could not take.
    pub overflow: u64,
}

impl KernelCounters {
    /// Every packet the program saw.
    pub fn packets(&self) -> u64 {
        self.counted + self.not_a_flow + self.overflow
    }
}

/// The in-kernel flow counter, attached: the program, its maps and links (dropping it
/// detaches the program and frees the maps), and the flows read so far.
#[derive(Debug)]
pub struct KernelFlows {
    flows: FlowMaps,
    counters_map: OwnedFd,
    _prog: OwnedFd,
    _links: Vec<OwnedFd>,
    /// Where the program runs, for [`KernelFlows::attached_at`].
    attached_at: &'static str,
    cpus: usize,
    /// Wall-clock ns minus monotonic ns, at attach.
    wall_offset: i128,
    timeouts: Timeouts,
    table: HashMap<FlowKey, Flow>,
    /// Whether the kernel takes `BPF_MAP_LOOKUP_BATCH` (until it refuses it).
    batch: bool,
}

impl KernelFlows {
    /// Loads the program and attaches it to `iface` (in the calling thread's network
    /// namespace) at the hooks `config` names. Needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN
    /// (or root).
    pub fn attach(iface: &str, config: KernelFlowsConfig) -> Result<KernelFlows, KernelFlowsError> {
        if config.max_entries == 0 {
            return Err(KernelFlowsError::Config("max_entries must be at least 1"));
        }
        if !config.ingress && !config.egress {
            return Err(KernelFlowsError::Config(
                "neither ingress nor egress: nothing to count",
            ));
        }
        if config.hook == Hook::Xdp && config.egress {
            return Err(KernelFlowsError::Config(
                "XDP sees received frames only: egress needs the tcx hook (Hook::Tcx)",
            ));
        }
        let ifindex = bpf::ifindex(iface).map_err(|source| KernelFlowsError::Interface {
            iface: iface.to_string(),
            source,
        })?;
        let cpus = possible_cpus().map_err(KernelFlowsError::Read)?;
        let flows = FlowMaps::new(config.max_entries, SHARD_ENTRIES).map_err(|source| {
            KernelFlowsError::Map {
                what: "flow",
                source,
            }
        })?;
        let counters_map = counter_map().map_err(|source| KernelFlowsError::Map {
            what: "counter",
            source,
        })?;
        let insns = program::program(
            flows.outer.as_raw_fd(),
            flows.bits,
            counters_map.as_raw_fd(),
            config.hook,
        )
        .map_err(|log| KernelFlowsError::Verifier {
            source: io::Error::other("assembling"),
            log,
        })?;
        let load = match config.hook {
            Hook::Tcx => bpf::load_sched_cls,
            Hook::Xdp => bpf::load_xdp,
        };
        let prog = load(&insns, "zcrx_flows")
            .map_err(|(source, log)| KernelFlowsError::Verifier { source, log })?;
        let (links, attached_at) = link(&prog, ifindex, iface, &config)?;
        let wall_offset = i128::from(bpf::realtime_ns()) - i128::from(bpf::monotonic_ns());
        Ok(KernelFlows {
            flows,
            counters_map,
            _prog: prog,
            _links: links,
            attached_at,
            cpus,
            wall_offset,
            timeouts: config.timeouts,
            table: HashMap::new(),
            batch: true,
        })
    }

    /// Where the program runs, for people: "tcx ingress", "tcx egress", "tcx ingress and
    /// egress", "XDP (native)" (in the driver) or "XDP (generic)" (on the skb: a driver
    /// without XDP).
    pub fn attached_at(&self) -> &'static str {
        self.attached_at
    }

    /// The program's counters, summed over the CPUs.
    pub fn counters(&self) -> Result<KernelCounters, KernelFlowsError> {
        let mut buf = vec![0u8; 8 * self.cpus];
        let mut read = |i: u32| -> Result<u64, KernelFlowsError> {
            bpf::lookup(&self.counters_map, &i.to_ne_bytes(), &mut buf)
                .map_err(KernelFlowsError::Read)?;
            Ok(buf
                .chunks_exact(8)
                .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
                .sum())
        };
        Ok(KernelCounters {
            counted: read(C_COUNTED)?,
            not_a_flow: read(C_NOT_A_FLOW)?,
            overflow: read(C_OVERFLOW)?,
        })
    }

    /// Reads the map into the flows known so far, then ends the flows idle past their
    /// timeouts (deleting their entries) and returns their records, with a report
    /// ([`EndReason::Active`]) of every flow whose packets since its last report began longer
    /// than [`Timeouts::active`] ago: its packets and bytes since then (the flow goes on in
    /// the map, its entries kept: no packet is lost to the report).
    pub fn poll(&mut self) -> Result<Vec<FlowRecord>, KernelFlowsError> {
        // Every packet not in this read came after this instant.
        let read_at = bpf::monotonic_ns();
        self.read_map()?;
        let now = bpf::monotonic_ns();
        let active = self.timeouts.active.map(|a| a.as_nanos());
        let mut ended = Vec::new();
        let mut due = Vec::new();
        for (key, flow) in &self.table {
            let stats = self.stats(key, flow);
            let timeout = if key.proto() == ipproto::TCP {
                if stats.closed {
                    self.timeouts.tcp_closed
                } else {
                    self.timeouts.tcp
                }
            } else if matches!(key.proto(), ipproto::UDP | ipproto::UDPLITE) {
                self.timeouts.udp
            } else if matches!(key.proto(), ipproto::ICMP | ipproto::ICMPV6) {
                self.timeouts.icmp
            } else {
                self.timeouts.other
            };
            let last = flow
                .dirs
                .iter()
                .flatten()
                .map(|d| d.counts.last)
                .max()
                .unwrap_or(0);
            if u128::from(now.saturating_sub(last)) > timeout.as_nanos() {
                ended.push(*key);
            } else if active.is_some_and(|a| {
                flow.new_packets() > 0 && u128::from(now.saturating_sub(flow.period_start())) >= a
            }) {
                due.push(*key);
            }
        }
        let mut records = Vec::with_capacity(ended.len() + due.len());
        for key in ended {
            let mut flow = self.table.remove(&key).expect("listed above");
            self.delete(&mut flow)?;
            if flow.new_packets() == 0 {
                continue; // all reported already
            }
            let stats = self.stats(&key, &flow);
            let end = if stats.closed {
                EndReason::EndOfFlow
            } else {
                EndReason::Idle
            };
            records.push(FlowRecord { stats, end });
        }
        for key in due {
            let flow = self.table.get(&key).expect("listed above");
            records.push(FlowRecord {
                stats: self.stats(&key, flow),
                end: EndReason::Active,
            });
            let flow = self.table.get_mut(&key).expect("listed above");
            for d in flow.dirs.iter_mut().flatten() {
                d.reported = [d.counts.packets, d.counts.bytes];
            }
            flow.reported_at = Some(read_at);
        }
        Ok(records)
    }

    /// The flows live now (read from the map), as [`FlowStats`] (packets and bytes since the
    /// last active-timeout report, as the flow table's); nothing ends or is deleted.
    pub fn active(&mut self) -> Result<Vec<FlowStats>, KernelFlowsError> {
        self.read_map()?;
        Ok(self.table.iter().map(|(k, f)| self.stats(k, f)).collect())
    }

    /// Ends every flow (records with [`EndReason::Flush`]) and deletes their entries, e.g.
    /// at the end of a capture.
    pub fn flush(&mut self) -> Result<Vec<FlowRecord>, KernelFlowsError> {
        self.read_map()?;
        let mut records = Vec::with_capacity(self.table.len());
        for (key, mut flow) in std::mem::take(&mut self.table) {
            self.delete(&mut flow)?;
            if flow.new_packets() == 0 {
                continue; // all reported already
            }
            records.push(FlowRecord {
                stats: self.stats(&key, &flow),
                end: EndReason::Flush,
            });
        }
        Ok(records)
    }

    /// Reads and deletes `flow`'s entries, keeping their last counts.
    fn delete(&self, flow: &mut Flow) -> Result<(), KernelFlowsError> {
        let mut buf = vec![0u8; VALUE_SIZE * self.cpus];
        for d in flow.dirs.iter_mut().flatten() {
            match bpf::lookup_and_delete(&self.flows.shards[d.shard], &d.raw, &mut buf) {
                Ok(()) => d.counts = sum_per_cpu(&buf),
                // Gone already: the last read's counts stand.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => return Err(KernelFlowsError::Read(e)),
            }
        }
        Ok(())
    }

    /// Reads every entry of the map into the table (their counts are totals: each read
    /// replaces the last).
    fn read_map(&mut self) -> Result<(), KernelFlowsError> {
        for (shard, key, counts) in self.entries()? {
            let (canonical, dir) = key_of(&key).canonical();
            let d = &mut self.table.entry(canonical).or_default().dirs[dir as usize];
            match d {
                Some(d) => d.counts = counts,
                None => {
                    *d = Some(DirEntry {
                        shard,
                        raw: key,
                        counts,
                        reported: [0; 2],
                    })
                }
            }
        }
        Ok(())
    }

    /// `flow` as the flow table would report it: packets and bytes per direction of the
    /// canonical key since the last report, wall-clock times, the initiator the direction
    /// seen first. The TCP flags are those of the flow's whole life (an entry keeps one OR,
    /// which user space cannot reset without losing a concurrent packet's counts).
    fn stats(&self, key: &FlowKey, flow: &Flow) -> FlowStats {
        let mut s = FlowStats::default();
        s.key = *key;
        let wall = |t: u64| u64::try_from(i128::from(t) + self.wall_offset).unwrap_or(0);
        let mut first = u64::MAX;
        for (i, d) in flow.dirs.iter().enumerate() {
            let Some(d) = d else { continue };
            s.packets[i] = d.counts.packets.saturating_sub(d.reported[0]);
            s.bytes[i] = d.counts.bytes.saturating_sub(d.reported[1]);
            s.tcp_flags[i] = d.counts.flags;
            if d.counts.first < first {
                first = d.counts.first;
                s.initiator = if i == 0 {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
            }
            s.last_ns = s.last_ns.max(wall(d.counts.last));
        }
        s.first_ns = match flow.reported_at {
            None => wall(first),
            Some(_) if flow.new_packets() > 0 => wall(flow.period_start()),
            Some(at) => wall(at),
        };
        s.closed = key.proto() == ipproto::TCP
            && (s.tcp_flags[0] | s.tcp_flags[1]) & (tcp::FIN | tcp::RST) != 0;
        s
    }
}

/// Entries a batch read asks for.
const BATCH: usize = 1024;
/// The kernel's ENOTSUPP (not in libc: an internal code that leaks to user space).
const ENOTSUPP: i32 = 524;

/// The number of possible CPUs (per-CPU map values come one per possible CPU).
fn possible_cpus() -> io::Result<usize> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    let mut n = 0;
    for part in s.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let bad = |_| io::Error::other(format!("cannot parse possible CPUs {s:?}"));
        let (a, b): (usize, usize) = (a.parse().map_err(bad)?, b.parse().map_err(bad)?);
        n = n.max(b + 1).max(a + 1);
    }
    Ok(n.max(1))
}

impl KernelFlows {
    /// Every entry of the map with packets: its shard, raw key and counts, shard by shard.
    /// Batch reads (`BPF_MAP_LOOKUP_BATCH`: a few commands a shard) where the kernel has
    /// them, else (EINVAL, EOPNOTSUPP: before Linux 5.6) two commands an entry; a kernel
    /// without them is remembered.
    fn entries(&mut self) -> Result<Vec<(usize, [u8; KEY_SIZE], Counts)>, KernelFlowsError> {
        let mut out = Vec::new();
        for shard in 0..self.flows.shards.len() {
            for (key, counts) in self.shard_entries(shard)? {
                out.push((shard, key, counts));
            }
        }
        Ok(out)
    }

    /// One shard's entries with packets (see [`KernelFlows::entries`]).
    fn shard_entries(
        &mut self,
        shard: usize,
    ) -> Result<Vec<([u8; KEY_SIZE], Counts)>, KernelFlowsError> {
        if self.batch {
            match self.entries_batch(shard) {
                Ok(v) => return Ok(v),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINVAL | libc::EOPNOTSUPP | ENOTSUPP)
                    ) =>
                {
                    self.batch = false;
                }
                Err(e) => return Err(KernelFlowsError::Read(e)),
            }
        }
        self.entries_by_key(shard).map_err(KernelFlowsError::Read)
    }

    /// [`KernelFlows::entries`] by `BPF_MAP_LOOKUP_BATCH`, [`BATCH`] entries a command (more
    /// where one hash bucket holds more: the kernel's ENOSPC).
    fn entries_batch(&self, shard: usize) -> io::Result<Vec<([u8; KEY_SIZE], Counts)>> {
        let mut out = Vec::new();
        let mut n = BATCH;
        let mut keys = vec![0u8; KEY_SIZE * n];
        let mut values = vec![0u8; VALUE_SIZE * self.cpus * n];
        let (mut at, mut next) = (None, bpf::BatchToken::default());
        loop {
            let (read, more) = match bpf::lookup_batch(
                &self.flows.shards[shard],
                at.as_ref(),
                &mut next,
                KEY_SIZE,
                &mut keys,
                &mut values,
            ) {
                Ok(r) => r,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) && n < 1 << 20 => {
                    n *= 4;
                    keys.resize(KEY_SIZE * n, 0);
                    values.resize(VALUE_SIZE * self.cpus * n, 0);
                    continue;
                }
                Err(e) => return Err(e),
            };
            for i in 0..read.min(n) {
                let key: [u8; KEY_SIZE] = keys[KEY_SIZE * i..KEY_SIZE * (i + 1)]
                    .try_into()
                    .expect("KEY_SIZE");
                let per_cpu = VALUE_SIZE * self.cpus;
                let counts = sum_per_cpu(&values[per_cpu * i..per_cpu * (i + 1)]);
                if counts.packets > 0 {
                    out.push((key, counts));
                }
            }
            if !more {
                return Ok(out);
            }
            at = Some(next);
        }
    }

    /// [`KernelFlows::entries`] by `BPF_MAP_GET_NEXT_KEY` and `BPF_MAP_LOOKUP_ELEM`.
    fn entries_by_key(&self, shard: usize) -> io::Result<Vec<([u8; KEY_SIZE], Counts)>> {
        let map = &self.flows.shards[shard];
        let mut out = Vec::new();
        let mut buf = vec![0u8; VALUE_SIZE * self.cpus];
        let mut key = [0u8; KEY_SIZE];
        let mut next = [0u8; KEY_SIZE];
        let mut first = true;
        while bpf::next_key(map, (!first).then_some(&key[..]), &mut next)? {
            first = false;
            key = next;
            match bpf::lookup(map, &key, &mut buf) {
                Ok(()) => {}
                // Deleted between the two commands.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                Err(e) => return Err(e),
            }
            let counts = sum_per_cpu(&buf);
            if counts.packets > 0 {
                out.push((key, counts));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::maps::{shard_plan, MAX_SHARDS};
    use crate::program::{F_IPV6, F_LATER_FRAGMENT, F_VLAN, KEY_SIZE, VALUE_SIZE};
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Per-CPU values as the map hands them: packets, bytes, first, last, flags per CPU.
    fn per_cpu(slots: &[[u64; 5]]) -> Vec<u8> {
        let mut buf = vec![0u8; VALUE_SIZE * slots.len()];
        for (v, slot) in buf.chunks_exact_mut(VALUE_SIZE).zip(slots) {
            for (i, x) in slot.iter().enumerate() {
                v[8 * i..8 * i + 8].copy_from_slice(&x.to_ne_bytes());
            }
        }
        buf
    }

    /// A CPU that added to an entry another CPU created has no first time (0): the entry's
    /// first time is the creator's, not 0 (which made the other direction of a TCP
    /// connection its initiator when its packets ran on two CPUs). CPUs without packets
    /// count for nothing.
    #[test]
    fn a_cpu_that_did_not_create_the_entry_has_no_first_time() {
        let c = sum_per_cpu(&per_cpu(&[
            [0, 0, 0, 0, 0],
            [2, 120, 0, 900, 0x10],
            [3, 180, 500, 700, 0x02],
        ]));
        assert_eq!(
            c,
            Counts {
                packets: 5,
                bytes: 300,
                first: 500,
                last: 900,
                flags: 0x12
            }
        );
        // No slot with a first time (not written by this program): the least last stands.
        let c = sum_per_cpu(&per_cpu(&[[1, 60, 0, 800, 0], [1, 60, 0, 600, 0]]));
        assert_eq!((c.first, c.last), (600, 800));
        assert_eq!(sum_per_cpu(&per_cpu(&[[0; 5], [0; 5]])), Counts::default());
    }

    #[test]
    fn raw_keys_become_flow_keys() {
        let mut raw = [0u8; KEY_SIZE];
        raw[..4].copy_from_slice(&[198, 18, 0, 1]);
        raw[16..20].copy_from_slice(&[198, 18, 0, 2]);
        raw[32..36].copy_from_slice(&[0x1f, 0x90, 0x00, 0x35]);
        raw[36] = ipproto::UDP;
        raw[37] = F_VLAN;
        raw[38..40].copy_from_slice(&7u16.to_ne_bytes());
        let k = key_of(&raw);
        assert_eq!(
            k,
            FlowKey::v4(
                Ipv4Addr::new(198, 18, 0, 1),
                Ipv4Addr::new(198, 18, 0, 2),
                ipproto::UDP,
                8080,
                53
            )
            .with_vlan(7)
        );
        raw[37] = F_LATER_FRAGMENT;
        raw[32..36].fill(0);
        assert!(key_of(&raw).is_later_fragment());
        raw[37] = F_IPV6;
        raw[..16].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
        assert_eq!(
            key_of(&raw).src(),
            std::net::IpAddr::V6(Ipv6Addr::LOCALHOST)
        );
    }

    /// A program the verifier refuses (it exits without setting R0) comes back as the kernel's
    /// error with the verifier's reason: the load without a log is tried again with one.
    #[test]
    fn a_refused_program_keeps_the_verifiers_log() {
        zcrx_ring::require!();
        let mut asm = bpf::Asm::default();
        asm.exit();
        let insns = asm.finish().expect("one exit");
        let (err, log) = bpf::load_sched_cls(&insns, "zcrx_refused").expect_err("refused");
        assert_eq!(err.raw_os_error(), Some(libc::EACCES), "{err}");
        assert!(log.contains("R0 !read_ok"), "the verifier's log: {log}");
    }

    /// A flow map of 3 000 entries in shards of 1 024 at most, filled from user space with
    /// different counts on each CPU, reads the same by batches as by next-key and lookup,
    /// and as written, each entry from its own shard.
    #[test]
    fn batch_reads_match_reads_by_key() {
        zcrx_ring::require!();
        let n = 3000u32;
        let cpus = possible_cpus().unwrap();
        let map = |ty, k, v, e| bpf::create_map(ty, k, v, e).expect("map (needs CAP_BPF)");
        let flows_maps = FlowMaps::new(n, 1024).expect("maps (needs CAP_BPF)");
        assert_eq!((flows_maps.shards.len(), flows_maps.bits), (4, 2));
        let mut expected = Vec::new();
        for i in 0..n {
            let mut key = [0u8; KEY_SIZE];
            key[..4].copy_from_slice(&[198, 18, (i >> 8) as u8, i as u8]);
            key[16..20].copy_from_slice(&[198, 19, 0, 1]);
            key[32..36].copy_from_slice(&[(i >> 8) as u8, i as u8, 0, 53]);
            key[36] = ipproto::UDP;
            let mut value = vec![0u8; VALUE_SIZE * cpus];
            let mut sum = Counts::default();
            for (c, v) in value.chunks_exact_mut(VALUE_SIZE).enumerate() {
                let c = c as u64;
                // CPU 1 has not seen the flow: its value is all zeroes.
                if c == 1 {
                    continue;
                }
                let (i64_, flags) = (u64::from(i), u64::from(i % 64) << c.min(2));
                let words = [
                    i64_ + c + 1,
                    100 * i64_ + c,
                    1000 + i64_ + c,
                    5000 + i64_ + c,
                    flags,
                ];
                for (w, x) in v.chunks_exact_mut(8).zip(words) {
                    w.copy_from_slice(&x.to_ne_bytes());
                }
                sum.first = if sum.packets == 0 {
                    words[2]
                } else {
                    sum.first.min(words[2])
                };
                sum.packets += words[0];
                sum.bytes += words[1];
                sum.last = sum.last.max(words[3]);
                sum.flags |= flags as u8;
            }
            let shard = i as usize % flows_maps.shards.len();
            bpf::update(&flows_maps.shards[shard], &key, &value).expect("update");
            expected.push((shard, key, sum));
        }
        let mut flows = KernelFlows {
            flows: flows_maps,
            counters_map: counter_map().expect("map (needs CAP_BPF)"),
            _prog: map(bpf::BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1),
            _links: Vec::new(),
            attached_at: "nowhere",
            cpus,
            wall_offset: 0,
            timeouts: Timeouts::default(),
            table: HashMap::new(),
            batch: true,
        };
        let read = |f: &KernelFlows, batch: bool| {
            let mut all = Vec::new();
            for shard in 0..f.flows.shards.len() {
                let v = if batch {
                    f.entries_batch(shard).expect("batch read")
                } else {
                    f.entries_by_key(shard).expect("read by key")
                };
                all.extend(v.into_iter().map(|(k, c)| (shard, k, c)));
            }
            all.sort_by_key(|a| a.1);
            all
        };
        let (batch, by_key) = (read(&flows, true), read(&flows, false));
        expected.sort_by_key(|a| a.1);
        assert_eq!(batch.len(), n as usize);
        assert!(batch == by_key, "the two reads differ");
        assert!(batch == expected, "the reads differ from what was written");
        flows.read_map().unwrap();
        assert!(flows.batch, "this kernel reads in batches");
        assert_eq!(flows.table.len(), n as usize);
        let packets: u64 = flows
            .active()
            .unwrap()
            .iter()
            .map(|s| s.total_packets())
            .sum();
        assert_eq!(packets, expected.iter().map(|e| e.2.packets).sum::<u64>());
        // A poll on a kernel without batch reads (as after its EINVAL) reads the same.
        let mut batched: Vec<FlowStats> = flows.active().unwrap();
        flows.table.clear();
        flows.batch = false;
        let mut by_key: Vec<FlowStats> = flows.active().unwrap();
        batched.sort_by_key(|s| s.key);
        by_key.sort_by_key(|s| s.key);
        assert_eq!(batched.len(), n as usize);
        assert!(batched == by_key, "the table differs between the two reads");
    }

    /// One shard up to `SHARD_ENTRIES`; beyond, a power of two of shards whose buckets (each
    /// shard's entries rounded up to a power of two) stay within it and add up to no more
    /// than one map's; never more than `MAX_SHARDS`.
    #[test]
    fn the_map_is_split_into_shards_of_bounded_buckets() {
        assert_eq!(shard_plan(2, SHARD_ENTRIES), (1, 2));
        assert_eq!(shard_plan(SHARD_ENTRIES, SHARD_ENTRIES), (1, SHARD_ENTRIES));
        assert_eq!(shard_plan(SHARD_ENTRIES + 1, SHARD_ENTRIES), (2, 4097));
        // zcap's default: 65 536 flows, two directions.
        assert_eq!(shard_plan(131_072, SHARD_ENTRIES), (16, SHARD_ENTRIES));
        let buckets = |e: u64| e.next_power_of_two();
        for entries in [8193, 20_000, 65_536, 131_072, 500_000] {
            let (n, per) = shard_plan(entries, SHARD_ENTRIES);
            assert!(n.is_power_of_two(), "{entries}");
            assert!(per.next_power_of_two() <= SHARD_ENTRIES, "{entries}: {per}");
            assert!(n * u64::from(per) >= u64::from(entries), "{entries}");
            let all = n * buckets(u64::from(per));
            assert!(all <= buckets(u64::from(entries)), "{entries}: {all}");
        }
        assert_eq!(shard_plan(u32::MAX, SHARD_ENTRIES).0, MAX_SHARDS);
    }

    /// An IPv4 key from `src`:`sport` to `dst`:`dport` over UDP, as the program writes it.
    fn v4_key(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> [u8; KEY_SIZE] {
        let mut key = [0u8; KEY_SIZE];
        key[..4].copy_from_slice(&src);
        key[16..20].copy_from_slice(&dst);
        key[32..34].copy_from_slice(&sport.to_be_bytes());
        key[34..36].copy_from_slice(&dport.to_be_bytes());
        key[36] = ipproto::UDP;
        key
    }

    /// Keys a small step apart — one client's ports to one server, one port from many
    /// addresses, IPv6 — spread over the shards: no shard holds a quarter more or less than
    /// its share.
    #[test]
    fn keys_a_small_step_apart_spread_over_the_shards() {
        let bits = 4;
        let check = |what: &str, keys: Vec<[u8; KEY_SIZE]>| {
            let mut counts = [0usize; 16];
            for k in &keys {
                counts[program::shard_of(k, bits)] += 1;
            }
            let share = keys.len() / 16;
            for c in counts {
                assert!(c * 4 > share * 3 && c * 4 < share * 5, "{what}: {counts:?}");
            }
        };
        let server = [198, 18, 0, 2];
        check(
            "one client's ports",
            (0..16_384u16)
                .map(|p| v4_key([198, 18, 0, 1], 1024 + p, server, 443))
                .collect(),
        );
        check(
            "one port from many addresses",
            (0..16_384u16)
                .map(|i| v4_key([198, 19, (i >> 8) as u8, i as u8], 40_000, server, 53))
                .collect(),
        );
        check(
            "IPv6",
            (0..16_384u16)
                .map(|i| {
                    let mut k = [0u8; KEY_SIZE];
                    k[0] = 0x20;
                    k[1] = 0x01;
                    k[14..16].copy_from_slice(&i.to_be_bytes());
                    k[16] = 0x20;
                    k[31] = 1;
                    k[32..34].copy_from_slice(&5353u16.to_be_bytes());
                    k[36] = ipproto::UDP;
                    k[37] = program::F_IPV6;
                    k
                })
                .collect(),
        );
    }

    /// The program puts each flow in the shard [`program::shard_of`] names (run on crafted
    /// frames by `BPF_PROG_TEST_RUN`), so the two hashes are one.
    #[test]
    fn the_program_puts_each_key_in_the_shard_user_space_names() {
        zcrx_ring::require!();
        let flows = FlowMaps::new(4096, 512).expect("maps (needs CAP_BPF)");
        assert_eq!(flows.bits, 3);
        let counters_map = counter_map().expect("map (needs CAP_BPF)");
        let insns = program::program(
            flows.outer.as_raw_fd(),
            flows.bits,
            counters_map.as_raw_fd(),
            Hook::Tcx,
        )
        .unwrap();
        let prog = bpf::load_sched_cls(&insns, "zcrx_flows").expect("load");
        let cpus = possible_cpus().unwrap();
        let mut seen = [0usize; 8];
        for sport in 0..64u16 {
            let mut f = vec![0u8; 42];
            f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[16..18].copy_from_slice(&28u16.to_be_bytes());
            f[22] = 64;
            f[23] = ipproto::UDP;
            f[26..30].copy_from_slice(&[198, 18, 0, 1]);
            f[30..34].copy_from_slice(&[198, 18, 0, 2]);
            f[34..36].copy_from_slice(&(20_000 + sport).to_be_bytes());
            f[36..38].copy_from_slice(&53u16.to_be_bytes());
            f[38..40].copy_from_slice(&8u16.to_be_bytes());
            bpf::test_run(&prog, &f).expect("test run");
            let key = v4_key([198, 18, 0, 1], 20_000 + sport, [198, 18, 0, 2], 53);
            let want = program::shard_of(&key, flows.bits);
            let mut buf = vec![0u8; VALUE_SIZE * cpus];
            for (i, m) in flows.shards.iter().enumerate() {
                let found = bpf::lookup(m, &key, &mut buf).is_ok();
                assert_eq!(found, i == want, "port {}: shard {i}", 20_000 + sport);
            }
            seen[want] += 1;
        }
        assert!(
            seen.iter().all(|&n| n > 0),
            "64 keys over 8 shards: {seen:?}"
        );
    }

    #[test]
    fn config_refuses_nothing_to_count() {
        let e = KernelFlows::attach("lo", KernelFlowsConfig::new().max_entries(0)).unwrap_err();
        assert!(matches!(e, KernelFlowsError::Config(_)));
        let e = KernelFlows::attach("lo", KernelFlowsConfig::new().ingress(false)).unwrap_err();
        assert!(matches!(e, KernelFlowsError::Config(_)));
    }

    /// XDP has no egress: asking for it is refused before anything is loaded, whether
    /// ingress is asked too or not.
    #[test]
    fn config_refuses_egress_at_xdp() {
        assert_eq!(KernelFlowsConfig::new().hook, Hook::Tcx);
        for ingress in [true, false] {
            let config = KernelFlowsConfig::new()
                .hook(Hook::Xdp)
                .ingress(ingress)
                .egress(true);
            let e = KernelFlows::attach("lo", config).unwrap_err();
            assert!(matches!(e, KernelFlowsError::Config(_)), "{e}");
            assert!(
                e.to_string().contains("XDP") && e.to_string().contains("egress"),
                "{e}"
            );
        }
    }

    /// The verifier takes the program for either hook, loaded as that hook's program type.
    #[test]
    fn the_verifier_takes_both_hooks_programs() {
        zcrx_ring::require!();
        let counters_map = counter_map().expect("map (needs CAP_BPF)");
        // One shard (no hash) and several.
        for (hook, entries) in [
            (Hook::Tcx, 16),
            (Hook::Xdp, 16),
            (Hook::Tcx, 5000),
            (Hook::Xdp, 5000),
        ] {
            let flows = FlowMaps::new(entries, 1024).expect("maps (needs CAP_BPF)");
            assert_eq!(flows.bits, if entries == 16 { 0 } else { 3 });
            let insns = program::program(
                flows.outer.as_raw_fd(),
                flows.bits,
                counters_map.as_raw_fd(),
                hook,
            )
            .unwrap();
            let load = match hook {
                Hook::Tcx => bpf::load_sched_cls,
                Hook::Xdp => bpf::load_xdp,
            };
            if let Err((e, log)) = load(&insns, "zcrx_flows") {
                panic!("{hook:?}: {e}; the verifier's log:\n{log}");
            }
        }
    }
}
