//! zcap's TCP lines against tcpdump 4.99's, packet for packet, on crafted captures: every
//! flag, every option kind tcpdump names (SACK, timestamps, MD5, TFO, MPTCP's subtypes,
//! TCP-AO, unknown kinds, wrong lengths), a conversation's relative numbers in both
//! directions, bad header lengths, a RST's text, checksums, the text protocols' first lines,
//! and the frame cut at every byte of a full segment — at default, -v, -vv, -S, -e, -x, -X,
//! -A and without -n.

use crate::common;

use std::time::Duration;

use common::ZCAP;
use zcrx_ring::lab::Need;

const A4: [u8; 4] = [198, 18, 0, 1];
const B4: [u8; 4] = [198, 18, 0, 2];
const A6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn sum(parts: &[&[u8]]) -> u16 {
    let bytes: Vec<u8> = parts.concat();
    let mut s: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A TCP segment as the tests describe it.
#[derive(Clone)]
struct Seg {
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    win: u16,
    urg: u16,
    opts: Vec<u8>,
    payload: Vec<u8>,
    /// The data offset in words, when not the one the options make.
    doff: Option<u8>,
    good_sum: bool,
    v6: bool,
    /// The client's side (A to B), else B to A.
    from_a: bool,
}

impl Seg {
    fn new(flags: u8) -> Seg {
        Seg {
            sport: 40_000,
            dport: 8000,
            seq: 1_000_000,
            ack: 7_000_000,
            flags,
            win: 502,
            urg: 0,
            opts: vec![],
            payload: vec![],
            doff: None,
            good_sum: true,
            v6: false,
            from_a: true,
        }
    }

    fn opts(mut self, o: &[u8]) -> Seg {
        self.opts = o.to_vec();
        while self.opts.len() % 4 != 0 {
            self.opts.push(0);
        }
        self
    }

    fn frame(&self) -> Vec<u8> {
        let (src4, dst4, src6, dst6) = if self.from_a {
            (A4, B4, A6, B6)
        } else {
            (B4, A4, B6, A6)
        };
        let doff = self.doff.unwrap_or((20 + self.opts.len() as u8) / 4);
        let mut t = Vec::new();
        t.extend_from_slice(&self.sport.to_be_bytes());
        t.extend_from_slice(&self.dport.to_be_bytes());
        t.extend_from_slice(&self.seq.to_be_bytes());
        t.extend_from_slice(&self.ack.to_be_bytes());
        t.push(doff << 4);
        t.push(self.flags);
        t.extend_from_slice(&self.win.to_be_bytes());
        t.extend_from_slice(&[0, 0]);
        t.extend_from_slice(&self.urg.to_be_bytes());
        t.extend_from_slice(&self.opts);
        t.extend_from_slice(&self.payload);
        let len = t.len();
        let pseudo: Vec<u8> = if self.v6 {
            [&src6[..], &dst6, &(len as u32).to_be_bytes(), &[0, 0, 0, 6]].concat()
        } else {
            [&src4[..], &dst4, &[0, 6], &(len as u16).to_be_bytes()].concat()
        };
        let mut c = sum(&[&pseudo, &t]);
        if !self.good_sum {
            c ^= 0x5a5a;
        }
        t[16..18].copy_from_slice(&c.to_be_bytes());
        let (ethertype, ip) = if self.v6 {
            let mut h = vec![0x60, 0, 0, 0];
            h.extend_from_slice(&(len as u16).to_be_bytes());
            h.extend_from_slice(&[6, 64]);
            h.extend_from_slice(&src6);
            h.extend_from_slice(&dst6);
            (0x86ddu16, h)
        } else {
            let mut h = vec![0x45, 0];
            h.extend_from_slice(&((20 + len) as u16).to_be_bytes());
            h.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, 6, 0, 0]);
            h.extend_from_slice(&src4);
            h.extend_from_slice(&dst4);
            let c = sum(&[&h]);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            (0x0800u16, h)
        };
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&t);
        f
    }
}

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
const URG: u8 = 0x20;

/// A conversation: handshake with the usual options, data both ways, SACK, FIN.
fn conversation(v6: bool, dport: u16, request: &[u8], response: &[u8]) -> Vec<Seg> {
    let c = |flags: u8, seq: u32, ack: u32| Seg {
        v6,
        dport,
        seq,
        ack,
        ..Seg::new(flags)
    };
    let s = |flags: u8, seq: u32, ack: u32| Seg {
        from_a: false,
        sport: dport,
        dport: 40_000,
        ..c(flags, seq, ack)
    };
    let syn_opts = [
        2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let ts = |v: u32, e: u32| {
        let mut o = vec![1, 1, 8, 10];
        o.extend_from_slice(&v.to_be_bytes());
        o.extend_from_slice(&e.to_be_bytes());
        o
    };
    let (cs, ss) = (1_000_000u32, 7_000_000u32);
    let rq = request.len() as u32;
    let mut sack = vec![1, 1, 5, 10];
    sack.extend_from_slice(&(cs + 1 + rq + 100).to_be_bytes());
    sack.extend_from_slice(&(cs + 1 + rq + 200).to_be_bytes());
    vec![
        c(SYN, cs, 0).opts(&syn_opts),
        s(SYN | ACK, ss, cs + 1).opts(&syn_opts),
        c(ACK, cs + 1, ss + 1).opts(&ts(2, 1)),
        Seg {
            payload: request.to_vec(),
            ..c(PSH | ACK, cs + 1, ss + 1).opts(&ts(3, 1))
        },
        s(ACK, ss + 1, cs + 1 + rq).opts(&ts(4, 3)),
        Seg {
            payload: response.to_vec(),
            ..s(PSH | ACK, ss + 1, cs + 1 + rq).opts(&ts(5, 3))
        },
        s(ACK, ss + 1, cs + 1 + rq).opts(&sack),
        c(FIN | ACK, cs + 1 + rq, ss + 1 + response.len() as u32),
        s(FIN | ACK, ss + 1 + response.len() as u32, cs + 2 + rq),
        c(ACK, cs + 2 + rq, ss + 2 + response.len() as u32),
    ]
}

/// One segment per option kind (and per bad form tcpdump reports).
fn option_segments() -> Vec<Seg> {
    let mut mptcp: Vec<Vec<u8>> = vec![
        vec![30, 12, 0x00, 0x81, 1, 2, 3, 4, 5, 6, 7, 8],
        vec![30, 4, 0x01, 0x00],
        vec![30, 12, 0x10, 0x01, 0, 0, 0, 9, 0, 0, 0, 10],
        vec![30, 8, 0x20, 0x01, 0, 0, 0, 5],
        vec![
            30, 20, 0x20, 0x0f, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 6,
        ],
        vec![30, 8, 0x30, 0x00, 198, 18, 0, 9],
        vec![30, 10, 0x30, 0x01, 198, 18, 0, 9, 0x1f, 0x90],
        vec![30, 5, 0x40, 1, 2],
        vec![30, 4, 0x50, 0x01],
        vec![30, 12, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 77],
        vec![30, 12, 0x70, 0, 1, 2, 3, 4, 5, 6, 7, 8],
        vec![30, 4, 0xf0, 0],
        vec![30, 2],
    ];
    let mut all: Vec<Vec<u8>> = vec![
        vec![2, 4, 5, 0xb4],
        vec![2, 5, 5, 0xb4, 0],
        vec![3, 3, 14],
        vec![4, 2],
        vec![5, 10, 0, 0, 0, 1, 0, 0, 0, 2],
        vec![5, 7, 0, 0, 0, 1, 0],
        vec![6, 6, 0, 0, 0, 9],
        vec![7, 6, 0, 0, 0, 9],
        vec![8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
        vec![11, 6, 0, 0, 0, 3],
        vec![12, 6, 0, 0, 0, 3],
        vec![13, 6, 0, 0, 0, 3],
        [vec![19, 18], (1..=16).collect()].concat(),
        vec![20, 4, 0xab, 7],
        vec![28, 4, 0x81, 0x2d],
        vec![28, 4, 0x00, 0x3c],
        vec![29, 8, 1, 2, 0xde, 0xad, 0xbe, 0xef],
        vec![29, 3, 1],
        vec![34, 2],
        vec![34, 10, 1, 2, 3, 4, 5, 6, 7, 8],
        vec![34, 5, 1, 2, 3],
        vec![254, 4, 0xf9, 0x89],
        vec![254, 8, 0xf9, 0x89, 1, 2, 3, 4],
        vec![254, 6, 0x12, 0x34, 1, 2],
        vec![254, 3, 0x12],
        vec![99, 5, 1, 2, 3],
        vec![99, 2],
        vec![2, 1],
        vec![2, 40, 0, 0],
        vec![1, 1, 0, 2, 4, 5, 0xb4],
    ];
    all.append(&mut mptcp);
    all.iter()
        .flat_map(|o| {
            [SYN, ACK, SYN | ACK].map(|flags| Seg {
                seq: 5,
                ack: 9,
                ..Seg::new(flags).opts(o)
            })
        })
        .collect()
}

/// Flags, urgent data, bad header lengths, RSTs with text, a bad checksum, IPv6.
fn flag_segments() -> Vec<Seg> {
    let mut v: Vec<Seg> = [0u8, FIN, SYN, RST, PSH, ACK, URG, 0x40, 0x80, 0xff, 0xc2]
        .iter()
        .map(|&f| Seg {
            urg: 17,
            ..Seg::new(f)
        })
        .collect();
    v.push(Seg {
        payload: b"x".repeat(5),
        urg: 3,
        ..Seg::new(URG | ACK | PSH)
    });
    v.push(Seg {
        doff: Some(4),
        ..Seg::new(ACK)
    });
    v.push(Seg {
        doff: Some(15),
        ..Seg::new(ACK)
    });
    v.push(Seg {
        payload: b"connection refused\r\n\x01\x7f\xe9".to_vec(),
        ..Seg::new(RST | ACK)
    });
    v.push(Seg {
        payload: b"a reset with a long explanation, longer than thirty".to_vec(),
        ..Seg::new(RST)
    });
    v.push(Seg {
        good_sum: false,
        payload: b"data".to_vec(),
        ..Seg::new(PSH | ACK)
    });
    v.push(Seg {
        v6: true,
        good_sum: false,
        ..Seg::new(SYN).opts(&[2, 4, 5, 0xa0, 4, 2])
    });
    v
}

/// The text protocols tcpdump names by port (requests, responses, binary data, cut lines).
fn text_segments() -> Vec<Seg> {
    let http_req = b"GET /index.html HTTP/1.1\r\nHost: b\r\nUser-Agent: t\r\n\r\n".to_vec();
    let http_resp = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec();
    let mut v = conversation(false, 80, &http_req, &http_resp);
    v.extend(conversation(
        true,
        8080,
        b"POST /x HTTP/1.0\r\n\r\n",
        b"\x00\x01binary",
    ));
    v.extend(conversation(
        false,
        22,
        b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n",
        b"SSH-2.0-x\n",
    ));
    v.extend(conversation(
        false,
        21,
        b"USER anonymous\r\n",
        b"220 (vsFTPd 3.0.3)\r\n",
    ));
    v.extend(conversation(
        false,
        25,
        b"EHLO a\r\n",
        b"250-b\r\n250 SMTPUTF8\r\n",
    ));
    v.extend(conversation(
        false,
        554,
        b"OPTIONS * RTSP/1.0\r\n",
        b"no line end",
    ));
    v.extend(conversation(
        false,
        80,
        b"not a request\r\n",
        b"HTTP/1.1 200\r\r",
    ));
    v
}

/// The frames (with their length on the wire) and a full segment (options and an HTTP
/// request) cut at every byte from its TCP header on, as a snapshot length cuts it.
pub(crate) fn frames() -> Vec<(Vec<u8>, u32)> {
    let mut segs = conversation(false, 8000, b"hello", b"world");
    segs.extend(conversation(true, 8000, b"hello6", b""));
    segs.extend(option_segments());
    segs.extend(flag_segments());
    segs.extend(text_segments());
    let mut frames: Vec<(Vec<u8>, u32)> = segs
        .iter()
        .map(|s| {
            let f = s.frame();
            let n = f.len() as u32;
            (f, n)
        })
        .collect();
    let full = Seg {
        dport: 80,
        payload: b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        ..Seg::new(PSH | ACK).opts(&[
            2, 4, 5, 0xb4, 1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 30, 4, 0x20, 0,
        ])
    }
    .frame();
    for cut in 34..full.len() {
        frames.push((full[..cut].to_vec(), full.len() as u32));
    }
    frames
}

#[test]
fn tcp_prints_as_tcpdump_prints_it_packet_for_packet() {
    zcrx_ring::require!(Need::Tool("tcpdump"), Need::Tool("unshare"));
    let path = common::tmp("tcp-lines.pcap");
    let frames = frames();
    let stamped = frames.iter().enumerate().map(|(i, (f, wire))| {
        let ts = Duration::new(1_700_000_000 + i as u64, 1000 * i as u32);
        (ts, &f[..], *wire)
    });
    common::write_pcap_cut(&path, stamped);
    let mut failures = Vec::new();
    for flags in [
        &["-n"][..],
        &["-n", "-v"],
        &["-n", "-vv"],
        &["-n", "-S"],
        &["-n", "-e"],
        &["-n", "-x"],
        &["-n", "-X"],
        &["-n", "-A"],
        &["-n", "-v", "-K"],
        &[],
        &["-e", "-v"],
    ] {
        let (t, z) = (
            common::numbered_packets("tcpdump", &path, flags),
            common::numbered_packets(ZCAP, &path, flags),
        );
        assert_eq!(t.len(), frames.len(), "{flags:?}: tcpdump's packets");
        assert_eq!(z.len(), t.len(), "{flags:?}: zcap's packets");
        let differ: Vec<_> = t.iter().zip(&z).filter(|(a, b)| a != b).collect();
        eprintln!(
            "{flags:?}: {} of {} packets identical",
            t.len() - differ.len(),
            t.len()
        );
        for (a, b) in differ.iter().take(3) {
            failures.push(format!("{flags:?}\ntcpdump: {a}\nzcap:    {b}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
