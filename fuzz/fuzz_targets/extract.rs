//! `zcrx_flowcache::extract` on every link type, then the flow table: never a panic, and the
//! offsets it reports stay inside the frame. Input: byte 0 picks the link type, byte 1 says
//! whether a stripped VLAN tag (bytes 2-3) came out of band, the rest is the frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::{extract, Fragment, LinkType};

const LINKS: [LinkType; 8] = [
    LinkType::Ethernet,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::RawIp,
    LinkType::Ipv4,
    LinkType::Ipv6,
    LinkType::Null,
    LinkType::Loop,
];

fuzz_target!(|data: &[u8]| {
    let [pick, vlan_on, t0, t1, frame @ ..] = data else {
        return;
    };
    let link = LINKS[usize::from(*pick) % LINKS.len()];
    let vlan = (vlan_on & 1 == 1).then(|| u16::from_be_bytes([*t0, *t1]));
    let Ok(x) = extract(link, frame, vlan) else {
        return;
    };
    let (l3, l4, pay) = (
        x.l3_offset as usize,
        x.l4_offset as usize,
        x.payload_offset as usize,
    );
    assert!(l3 < l4 && l4 <= pay, "offsets {l3} {l4} {pay}");
    if x.fragment != Fragment::Later {
        assert!(
            pay <= frame.len(),
            "payload offset {pay} past the frame ({})",
            frame.len()
        );
    }
    // The key round-trips through the table: same flow, both directions.
    let config = zcrx_flowcache::FlowTableConfig::with_capacity(64).with_seed(Some(1)); // deterministic runs
    let mut table =
        zcrx_flowcache::FlowTable::new(config).expect("64 flows is within MAX_CAPACITY");
    let a = table.track(x.track_input(frame.len() as u32, 1));
    let mut back = x.track_input(frame.len() as u32, 2);
    back.key = x.key.reversed();
    back.tcp_flags = 0;
    let b = table.track(back);
    assert_eq!(a.id, b.id);
    if x.key != x.key.reversed() {
        assert_ne!(a.dir, b.dir);
    }
});
