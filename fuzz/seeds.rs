//! Writes the seed corpora of the fuzz targets from the test frames: every link type the
//! extractor knows, VLAN tags in band and out of band, IPv6 extension headers, fragments,
//! pcap and pcapng files (whole and cut by a snaplen), and TPACKET_V3 blocks laid out by the
//! synthetic ring. `scripts/fuzz.sh seed` runs it; the corpora are then minimised and
//! committed under fuzz/corpus/.

use std::path::Path;

use zcrx_capture::pcapfile::{Format, SaveFile};
use zcrx_flowcache::testdata::{tcp4_big, tcp6_jumbo, tcp6_with_ext, udp4, with_vlan};
use zcrx_ring::{Frame, SyntheticRing};

/// Ethernet frames: UDP/IPv4, TCP/IPv6 with extension headers, tagged, a later fragment, ARP.
fn ethernet_frames() -> Vec<Vec<u8>> {
    let a = [198, 18, 0, 1];
    let b = [198, 19, 0, 1];
    let mut v6a = [0u8; 16];
    v6a[..2].copy_from_slice(&[0x20, 0x01]);
    v6a[15] = 1;
    let mut v6b = v6a;
    v6b[15] = 2;
    let udp = udp4(a, b, 40000, 53, 32);
    let tcp = tcp6_with_ext(v6a, v6b, 443, 51000, 0x12);
    let mut frag = udp4(a, b, 1, 2, 64);
    frag[20] = 0x00; // flags/offset: a later fragment at offset 8*0x10
    frag[21] = 0x10;
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.resize(42, 0);
    vec![
        udp.clone(),
        tcp.clone(),
        with_vlan(&udp, 100),
        with_vlan(&with_vlan(&tcp, 7), 200),
        frag,
        arp,
        tcp4_big(a, b, 5201, 40000, 200),
        tcp6_jumbo(v6a, v6b, 5201, 40000, 100),
    ]
}

/// The frame re-framed for `linktype` (the IP packet after the Ethernet header).
fn reframe(eth: &[u8], linktype: u32) -> Vec<u8> {
    let ethertype = [eth[12], eth[13]];
    let ip = &eth[14..];
    let v6 = ethertype == [0x86, 0xdd];
    let mut f = Vec::new();
    match linktype {
        1 => return eth.to_vec(),
        113 => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6]);
            f.extend_from_slice(&eth[6..12]);
            f.extend_from_slice(&[0, 0]);
            f.extend_from_slice(&ethertype);
        }
        276 => {
            f.extend_from_slice(&ethertype);
            f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
            f.extend_from_slice(&eth[6..12]);
            f.extend_from_slice(&[0, 0]);
        }
        0 => f.extend_from_slice(&(if v6 { 10u32 } else { 2 }).to_ne_bytes()),
        108 => f.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        _ => {} // raw IP
    }
    f.extend_from_slice(ip);
    f
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn capture(format: Format, linktype: u32, snaplen: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut save = SaveFile::new(Vec::new(), format, linktype, snaplen);
    for (i, f) in frames.iter().enumerate() {
        let cut = &f[..f.len().min(snaplen as usize)];
        save.write(
            1_700_000_000_000_000_000 + i as u64 * 1000,
            f.len() as u32,
            cut,
            None,
        )
        .unwrap();
    }
    save.flush().unwrap();
    std::mem::take(save.get_mut())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let eth = ethernet_frames();
    // extract: [link index, vlan-out-of-band flag, TCI hi, TCI lo, frame...]
    let links: [(u8, u32); 8] = [
        (0, 1),
        (1, 113),
        (2, 276),
        (3, 101),
        (4, 228),
        (5, 229),
        (6, 0),
        (7, 108),
    ];
    for (pick, linktype) in links {
        for (i, f) in eth.iter().enumerate() {
            if linktype == 229 && !(f.len() > 14 && f[12..14] == [0x86, 0xdd]) {
                continue;
            }
            let mut seed = vec![pick, (i % 2) as u8, 0x00, 0x64];
            seed.extend_from_slice(&reframe(f, linktype));
            write(
                &root.join("extract"),
                &format!("seed-{linktype}-{i}"),
                &seed,
            );
        }
    }
    // capture_file and zcap_offline: pcap and pcapng files.
    for linktype in [1u32, 113, 276, 101, 0] {
        let frames: Vec<Vec<u8>> = eth
            .iter()
            .filter(|f| linktype == 1 || f[12..14] != [0x08, 0x06])
            .map(|f| reframe(f, linktype))
            .collect();
        for (format, ext) in [(Format::Pcap, "pcap"), (Format::PcapNg, "pcapng")] {
            for snaplen in [262_144u32, 40] {
                let bytes = capture(format, linktype, snaplen, &frames);
                let name = format!("seed-{linktype}-{snaplen}.{ext}");
                write(&root.join("capture_file"), &name, &bytes);
                write(&root.join("zcap_offline"), &name, &bytes);
            }
        }
    }
    // block_walker: blocks the synthetic ring lays out as af_packet.c does.
    for (i, (frames, vlan)) in [(eth.clone(), false), (eth.clone(), true)]
        .into_iter()
        .enumerate()
    {
        let ring = SyntheticRing::builder()
            .block_size(4096)
            .snaplen(if i == 0 { 262_144 } else { 50 })
            .build(frames.into_iter().map(|f| {
                let mut fr = Frame::new(f);
                if vlan {
                    fr.vlan = Some((5, 0x8100));
                }
                fr
            }))
            .unwrap();
        let mut n = 0;
        while let Some(block) = ring.next_block() {
            let view = block.view().unwrap();
            write(
                &root.join("block_walker"),
                &format!("seed-{i}-{n}"),
                view.bytes(),
            );
            n += 1;
        }
    }
}
