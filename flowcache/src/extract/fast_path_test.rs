use super::*;
use proptest::prelude::*;

/// Ethernet (optionally one 802.1Q tag) / IPv4 or IPv6 / TCP or UDP, with payload.
fn frame(v6: bool, tcp: bool, vlan: Option<u16>, payload: usize) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if let Some(v) = vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&v.to_be_bytes());
    }
    let l4_len = if tcp { 20 } else { 8 } + payload;
    let proto = if tcp { 6 } else { 17 };
    if v6 {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        f.extend_from_slice(&(l4_len as u16).to_be_bytes());
        f.extend_from_slice(&[proto, 64]);
        f.extend((0..32u8).map(|i| 0x20 + i));
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        f.extend_from_slice(&(20 + l4_len as u16).to_be_bytes());
        f.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
    }
    f.extend_from_slice(&[0x04, 0xd2, 0x00, 0x35]);
    if tcp {
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x12, 0xff, 0xff, 0, 0, 0, 0]);
    } else {
        f.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
    }
    f.resize(f.len() + payload, 0xab);
    f
}

#[test]
fn the_common_shapes_take_the_fast_path() {
    for v6 in [false, true] {
        for tcp in [false, true] {
            for vlan in [None, Some(100)] {
                let f = frame(v6, tcp, vlan, 10);
                let fast = fast_ethernet(&f, None).expect("fast path");
                assert_eq!(Ok(fast), extract_general(LinkType::Ethernet, &f, None));
                assert_eq!(extract_fast(LinkType::Ethernet, &f, None), Some(fast));
                // Only Ethernet framing has a fast path.
                assert_eq!(extract_fast(LinkType::RawIp, &f[14..], None), None);
            }
        }
    }
}

#[test]
fn ipv4_flags_and_fragment_offset_decide_the_fast_path() {
    // (bytes 6-7 of the IPv4 header, fast path taken): DF and the reserved bit do not
    // matter; MF or any offset bit makes a fragment, for the general path.
    for (flags, fast) in [
        ([0x00, 0x00], true),
        ([0x40, 0x00], true),
        ([0x80, 0x00], true),
        ([0xc0, 0x00], true),
        ([0x20, 0x00], false),
        ([0x00, 0x01], false),
        ([0x10, 0x00], false),
        ([0x40, 0x80], false),
        ([0x5f, 0xff], false),
    ] {
        for tcp in [false, true] {
            let mut f = frame(false, tcp, None, 10);
            f[14 + 6..14 + 8].copy_from_slice(&flags);
            let got = fast_ethernet(&f, None);
            assert_eq!(got.is_some(), fast, "{flags:02x?}");
            if let Some(x) = got {
                assert_eq!(Ok(x), extract_general(LinkType::Ethernet, &f, None));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// Whatever the bytes: where the fast path answers, it answers as the general path.
    #[test]
    fn fast_path_agrees_with_the_general_path(
        v6: bool, tcp: bool, vlan in proptest::option::of(0u16..8192), payload in 0usize..40,
        flips in proptest::collection::vec((0usize..80, any::<u8>()), 0..4),
        cut in 0usize..120, meta in proptest::option::of(any::<u16>()),
    ) {
        let mut f = frame(v6, tcp, vlan, payload);
        for (at, x) in flips {
            if at < f.len() {
                f[at] ^= x;
            }
        }
        f.truncate(f.len().min(cut.max(14)));
        if let Some(fast) = fast_ethernet(&f, meta) {
            prop_assert_eq!(Ok(fast), extract_general(LinkType::Ethernet, &f, meta));
        }
    }
}
