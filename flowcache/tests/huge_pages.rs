//! `FlowTableConfig::prepare_memory`: the hook sees each array before it is written, and with
//! `zcrx_ring::advise_huge_pages` a large table lands on transparent huge pages (this
//! process's AnonHugePages grows by most of the table's size). Skipped only where the kernel
//! has THP switched off, which CI (this machine, THP "madvise") does not.

use std::sync::Mutex;

use zcrx_flowcache::{FlowKey, FlowTable, FlowTableConfig};

static SEEN: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn record(addr: usize, len: usize) {
    SEEN.lock().unwrap().push((addr, len));
}

/// This process's anonymous memory on huge pages, bytes.
fn anon_huge_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap();
    let kib: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("AnonHugePages in smaps_rollup");
    kib * 1024
}

#[test]
fn the_hook_sees_both_arrays_and_huge_pages_back_a_large_table() {
    let t = FlowTable::new(FlowTableConfig::with_capacity(1000).with_prepare_memory(Some(record)))
        .expect("capacity within MAX_CAPACITY");
    let seen = SEEN.lock().unwrap().clone();
    // 1024 slots: one tag byte each, then the slots themselves (at most 128 bytes a flow).
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].1, 1024);
    assert!(
        seen[1].1 >= 1024 * 64 && seen[1].1 <= 1024 * 127,
        "{seen:?}"
    );
    assert!(seen.iter().all(|&(a, _)| a != 0));
    drop(t);

    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.is_empty() || thp.contains("[never]") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "transparent huge pages are off on the CI machine: {thp:?}"
        );
        eprintln!("skipped: transparent huge pages are off ({thp:?})");
        return;
    }
    let before = anon_huge_bytes();
    let mut t = FlowTable::new(
        FlowTableConfig::with_capacity(1 << 20)
            .with_prepare_memory(Some(zcrx_ring::advise_huge_pages)),
    )
    .expect("capacity within MAX_CAPACITY");
    let grew = anon_huge_bytes().saturating_sub(before);
    // About 96 MiB of slots and 1 MiB of tags; the unaligned ends stay on small pages.
    assert!(grew >= 64 << 20, "AnonHugePages grew by {grew} bytes only");
    // And the table works as ever.
    let k = FlowKey::default();
    t.track(zcrx_flowcache::TrackInput {
        key: k,
        len: 60,
        ts_ns: 1,
        tcp_flags: 0,
    });
    assert_eq!(t.lookup(&k).unwrap().1.packets, [1, 0]);
}
