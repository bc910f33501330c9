//! The program's maps: the flow map in shards of bounded buckets (a map of maps), the
//! counters, and the reads of a shard's entries (batched, or key by key).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::bpf;
use crate::program::{COUNTERS, KEY_SIZE, VALUE_SIZE};

/// Entries of one shard of the flow map, at most (but where [`MAX_SHARDS`] shards would not
/// hold the map). A poll reads each shard in commands of its own, and a read scans every
/// hash bucket of the shard (as many as its entries, rounded up to a power of two) in one
/// command that does not give up the CPU: on a kernel that does not preempt system calls,
/// a threaded NAPI on the same CPU waits for it, and its device's queue fills meanwhile.
/// 8 192 buckets take some tens of microseconds; the 131 072 of one map the size of zcap's
/// default, a few hundred, longer than a veth's 256-frame queue lasts at 1 Mpps.
pub(crate) const SHARD_ENTRIES: u32 = 8192;

/// Shards of the flow map at most (each an fd while attached).
pub(crate) const MAX_SHARDS: u64 = 64;

/// The program's flow map: a power of two of per-CPU hash maps (shards), the key's shard
/// chosen by a hash of it, in a map of maps that the program looks the shard up in.
#[derive(Debug)]
pub(crate) struct FlowMaps {
    pub(crate) outer: OwnedFd,
    pub(crate) shards: Vec<OwnedFd>,
    /// log2 of the shards.
    pub(crate) bits: u32,
}

impl FlowMaps {
    /// `entries` entries in shards of at most `shard_entries` ([`shard_plan`]).
    pub(crate) fn new(entries: u32, shard_entries: u32) -> io::Result<FlowMaps> {
        let (n, per) = shard_plan(entries, shard_entries);
        let shards = (0..n)
            .map(|_| flow_map(per))
            .collect::<io::Result<Vec<_>>>()?;
        let outer = bpf::create_map_of_maps(&shards[0], n as u32)?;
        for (i, m) in shards.iter().enumerate() {
            bpf::update(
                &outer,
                &(i as u32).to_ne_bytes(),
                &(m.as_raw_fd() as u32).to_ne_bytes(),
            )?;
        }
        Ok(FlowMaps {
            outer,
            shards,
            bits: n.trailing_zeros(),
        })
    }
}

/// How [`FlowMaps::new`] splits `entries`: (shards, entries a shard). A power of two of
/// shards, each its share: as many hash buckets in all as one map of `entries` has (a hash
/// map has its entries rounded up to a power of two of buckets), so the shards cost no more
/// memory and no less locality than one map.
pub(crate) fn shard_plan(entries: u32, shard_entries: u32) -> (u64, u32) {
    let n = u64::from(entries)
        .div_ceil(u64::from(shard_entries.max(1)))
        .next_power_of_two()
        .min(MAX_SHARDS);
    (
        n,
        u32::try_from(u64::from(entries).div_ceil(n)).unwrap_or(u32::MAX),
    )
}

/// One shard of the flow map: per-CPU values under [`KEY_SIZE`]-byte keys, `entries` of them.
pub(crate) fn flow_map(entries: u32) -> io::Result<OwnedFd> {
    bpf::create_map(
        bpf::BPF_MAP_TYPE_PERCPU_HASH,
        KEY_SIZE as u32,
        VALUE_SIZE as u32,
        entries,
    )
}

/// The program's counters: a per-CPU array of [`COUNTERS`] u64s.
pub(crate) fn counter_map() -> io::Result<OwnedFd> {
    bpf::create_map(bpf::BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, COUNTERS)
}
