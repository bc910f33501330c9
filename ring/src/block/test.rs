use super::*;
use crate::error::BlockError;
use std::mem::{offset_of, size_of};

#[test]
fn offsets_match_the_kernel_structs() {
    use libc::{
        tpacket3_hdr as H, tpacket_block_desc as D, tpacket_hdr_v1 as V1,
        tpacket_hdr_variant1 as HV,
    };
    assert_eq!(size_of::<D>(), bd::LEN);
    assert_eq!(offset_of!(D, version), bd::VERSION);
    let h = offset_of!(D, hdr);
    assert_eq!(h + offset_of!(V1, block_status), bd::BLOCK_STATUS);
    assert_eq!(h + offset_of!(V1, num_pkts), bd::NUM_PKTS);
    assert_eq!(
        h + offset_of!(V1, offset_to_first_pkt),
        bd::OFFSET_TO_FIRST_PKT
    );
    assert_eq!(h + offset_of!(V1, blk_len), bd::BLK_LEN);
    assert_eq!(h + offset_of!(V1, seq_num), bd::SEQ_NUM);
    assert_eq!(h + offset_of!(V1, ts_first_pkt), bd::TS_FIRST_PKT);
    assert_eq!(h + offset_of!(V1, ts_last_pkt), bd::TS_LAST_PKT);
    assert_eq!(size_of::<H>(), hdr3::SIZE);
    assert_eq!(offset_of!(H, tp_next_offset), hdr3::NEXT_OFFSET);
    assert_eq!(offset_of!(H, tp_sec), hdr3::SEC);
    assert_eq!(offset_of!(H, tp_nsec), hdr3::NSEC);
    assert_eq!(offset_of!(H, tp_snaplen), hdr3::SNAPLEN);
    assert_eq!(offset_of!(H, tp_len), hdr3::LEN);
    assert_eq!(offset_of!(H, tp_status), hdr3::STATUS);
    assert_eq!(offset_of!(H, tp_mac), hdr3::MAC);
    assert_eq!(offset_of!(H, tp_net), hdr3::NET);
    assert_eq!(offset_of!(H, hv1) + offset_of!(HV, tp_rxhash), hdr3::RXHASH);
    assert_eq!(
        offset_of!(H, hv1) + offset_of!(HV, tp_vlan_tci),
        hdr3::VLAN_TCI
    );
    assert_eq!(
        offset_of!(H, hv1) + offset_of!(HV, tp_vlan_tpid),
        hdr3::VLAN_TPID
    );
    // The kernel ABI itself (linux/if_packet.h), independent of libc.
    assert_eq!(libc::TPACKET3_HDRLEN, 68);
    assert_eq!(libc::TPACKET_ALIGNMENT, 16);
    assert_eq!(size_of::<libc::tpacket_req3>(), 28);
    assert_eq!(size_of::<libc::tpacket_stats_v3>(), 12);
    assert_eq!(size_of::<libc::tpacket2_hdr>(), 32);
    assert_eq!(size_of::<libc::sockaddr_ll>(), 20);
}

/// A block of `n` 60-byte packets 144 bytes apart; packet `bad` (if any) with a tp_mac
/// inside its own header.
fn block_of(n: u32, bad: Option<usize>) -> Vec<u8> {
    let mut b = vec![0u8; 4096];
    let put = |b: &mut [u8], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    let first = 48;
    put(&mut b, bd::NUM_PKTS, n);
    put(&mut b, bd::OFFSET_TO_FIRST_PKT, first as u32);
    put(&mut b, bd::BLK_LEN, (first + 144 * n as usize) as u32);
    for i in 0..n as usize {
        let h = first + 144 * i;
        put(
            &mut b,
            h + hdr3::NEXT_OFFSET,
            if i + 1 < n as usize { 144 } else { 0 },
        );
        put(&mut b, h + hdr3::SNAPLEN, 60);
        put(&mut b, h + hdr3::LEN, 60);
        let mac: u16 = if bad == Some(i) { 8 } else { 80 };
        b[h + hdr3::MAC..h + hdr3::MAC + 2].copy_from_slice(&mac.to_ne_bytes());
        b[h + 80] = i as u8;
    }
    b
}

/// `until_error` yields what `map_while(Result::ok)` yields: every packet of a good
/// block, and those before the first bad header of a bad one.
#[test]
fn until_error_stops_at_the_first_bad_header() {
    for (n, bad, good) in [
        (20, None, 20),
        (20, Some(0), 0),
        (20, Some(7), 7),
        (1, None, 1),
    ] {
        let b = block_of(n, bad);
        let v = BlockView::parse(&b).unwrap();
        let got: Vec<u8> = v.packets().until_error().map(|p| p.data()[0]).collect();
        let want: Vec<u8> = v
            .packets()
            .map_while(Result::ok)
            .map(|p| p.data()[0])
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            got,
            (0..good as u8).collect::<Vec<_>>(),
            "{n} packets, bad {bad:?}"
        );
    }
}

#[test]
fn short_and_empty_blocks() {
    assert_eq!(
        BlockView::parse(&[0u8; 47]).unwrap_err(),
        BlockError::TooShort { len: 47 }
    );
    let mut b = vec![0u8; 4096];
    b[bd::BLK_LEN..bd::BLK_LEN + 4].copy_from_slice(&48u32.to_ne_bytes());
    let v = BlockView::parse(&b).unwrap();
    assert_eq!(v.packets().count(), 0);
}
