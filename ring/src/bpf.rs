//! Classic BPF programs as raw `sock_filter` instructions, and the snaplen cap.
//!
//! Compiling tcpdump expressions belongs to the sniffer (libpcap's compiler); this module
//! only builds and adjusts instruction arrays.

pub use libc::sock_filter as Insn;

/// Instruction classes and modes (linux/filter.h, linux/bpf_common.h).
pub mod op {
    #![allow(missing_docs)]
    pub const LD: u16 = 0x00;
    pub const LDX: u16 = 0x01;
    pub const ALU: u16 = 0x04;
    pub const JMP: u16 = 0x05;
    pub const RET: u16 = 0x06;
    pub const W: u16 = 0x00;
    pub const H: u16 = 0x08;
    pub const B: u16 = 0x10;
    pub const ABS: u16 = 0x20;
    pub const IND: u16 = 0x40;
    pub const MSH: u16 = 0xa0;
    pub const JA: u16 = 0x00;
    pub const JEQ: u16 = 0x10;
    pub const JGT: u16 = 0x20;
    pub const JGE: u16 = 0x30;
    pub const JSET: u16 = 0x40;
    pub const K: u16 = 0x00;
    pub const A: u16 = 0x10;
}

/// A non-jump instruction.
pub const fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A jump instruction.
pub const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
}

/// `if A == k` jump `jt` instructions ahead, else `jf` (`jeq #k, jt, jf`).
pub const fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
    jump(op::JMP | op::JEQ | op::K, k, jt, jf)
}

/// `if A > k` (unsigned) jump `jt` ahead, else `jf` (`jgt #k, jt, jf`).
pub const fn jgt(k: u32, jt: u8, jf: u8) -> Insn {
    jump(op::JMP | op::JGT | op::K, k, jt, jf)
}

/// `if A >= k` (unsigned) jump `jt` ahead, else `jf` (`jge #k, jt, jf`).
pub const fn jge(k: u32, jt: u8, jf: u8) -> Insn {
    jump(op::JMP | op::JGE | op::K, k, jt, jf)
}

/// `if A & k != 0` jump `jt` ahead, else `jf` (`jset #k, jt, jf`).
pub const fn jset(k: u32, jt: u8, jf: u8) -> Insn {
    jump(op::JMP | op::JSET | op::K, k, jt, jf)
}

/// Accept everything, keep `snaplen` bytes.
pub fn accept_all(snaplen: u32) -> Vec<Insn> {
    vec![stmt(op::RET | op::K, snaplen)]
}

/// Ethernet + IPv4 + UDP with destination port `port` (what `tcpdump -dd 'ip and udp dst
/// port N'` prints, minus the IPv6 branch); non-first fragments are rejected.
pub fn udp_dst_port(port: u16, snaplen: u32) -> Vec<Insn> {
    vec![
        stmt(op::LD | op::H | op::ABS, 12),             // 0: A = ethertype
        jump(op::JMP | op::JEQ | op::K, 0x0800, 0, 8),  // 1: IPv4?
        stmt(op::LD | op::B | op::ABS, 23),             // 2: A = IP protocol
        jump(op::JMP | op::JEQ | op::K, 17, 0, 6),      // 3: UDP?
        stmt(op::LD | op::H | op::ABS, 20),             // 4: A = flags + fragment offset
        jump(op::JMP | op::JSET | op::K, 0x1fff, 4, 0), // 5: later fragment -> drop
        stmt(op::LDX | op::B | op::MSH, 14),            // 6: X = IP header length
        stmt(op::LD | op::H | op::IND, 16),             // 7: A = UDP dst port
        jump(op::JMP | op::JEQ | op::K, u32::from(port), 0, 1), // 8
        stmt(op::RET | op::K, snaplen),                 // 9: accept
        stmt(op::RET | op::K, 0),                       // 10: drop
    ]
}

/// Ethernet + IPv4 + UDP with a destination port in `ports` (what `tcpdump -dd 'ip and udp
/// dst portrange LO-HI'` prints, minus the IPv6 branch); non-first fragments are rejected.
/// An empty range accepts nothing.
pub fn udp_dst_port_range(ports: std::ops::RangeInclusive<u16>, snaplen: u32) -> Vec<Insn> {
    let (lo, hi) = (u32::from(*ports.start()), u32::from(*ports.end()));
    vec![
        stmt(op::LD | op::H | op::ABS, 12),  // 0: A = ethertype
        jeq(0x0800, 0, 9),                   // 1: IPv4?
        stmt(op::LD | op::B | op::ABS, 23),  // 2: A = IP protocol
        jeq(17, 0, 7),                       // 3: UDP?
        stmt(op::LD | op::H | op::ABS, 20),  // 4: A = flags + fragment offset
        jset(0x1fff, 5, 0),                  // 5: later fragment -> drop
        stmt(op::LDX | op::B | op::MSH, 14), // 6: X = IP header length
        stmt(op::LD | op::H | op::IND, 16),  // 7: A = UDP dst port
        jge(lo, 0, 2),                       // 8: port >= lo?
        jgt(hi, 1, 0),                       // 9: port > hi -> drop
        stmt(op::RET | op::K, snaplen),      // 10: accept
        stmt(op::RET | op::K, 0),            // 11: drop
    ]
}

/// The program to attach: `program` (or accept-all) with every constant accept value capped
/// at `snaplen`. TPACKET_V3 has no snaplen of its own; the filter's return value is how many
/// bytes the kernel keeps. A `ret A` cannot be capped statically and is left as it is.
pub fn with_snaplen(program: Option<&[Insn]>, snaplen: u32) -> Vec<Insn> {
    match program {
        None => accept_all(snaplen),
        Some(p) => p
            .iter()
            .map(|&i| {
                if i.code == op::RET | op::K && i.k > snaplen {
                    stmt(i.code, snaplen)
                } else {
                    i
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn jump_opcodes_are_the_kernels() {
        // linux/bpf_common.h: BPF_JMP | BPF_Jxx | BPF_K.
        assert_eq!(jgt(1, 2, 3).code, 0x25);
        assert_eq!(jge(1, 2, 3).code, 0x35);
        assert_eq!(jset(1, 2, 3).code, 0x45);
        assert_eq!(jeq(1, 2, 3).code, 0x15);
        let j = jge(9000, 4, 5);
        assert_eq!((j.k, j.jt, j.jf), (9000, 4, 5));
    }

    /// The classic BPF machine for the instructions this module emits (linux/filter.h
    /// semantics: a jump skips `jt`/`jf` instructions, a load past the frame rejects it).
    fn run(p: &[Insn], frame: &[u8]) -> u32 {
        let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
        let half = |at: usize| {
            frame
                .get(at..at + 2)
                .map(|b| u32::from(u16::from_be_bytes([b[0], b[1]])))
        };
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                c if c == op::LD | op::H | op::ABS => match half(i.k as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                c if c == op::LD | op::B | op::ABS => match frame.get(i.k as usize) {
                    Some(&v) => a = u32::from(v),
                    None => return 0,
                },
                c if c == op::LD | op::H | op::IND => match half((x + i.k) as usize) {
                    Some(v) => a = v,
                    None => return 0,
                },
                c if c == op::LDX | op::B | op::MSH => match frame.get(i.k as usize) {
                    Some(&v) => x = 4 * u32::from(v & 0x0f),
                    None => return 0,
                },
                c if c == op::RET | op::K => return i.k,
                c if c & 0x07 == op::JMP => {
                    let taken = match c & 0xf0 {
                        op::JEQ => a == i.k,
                        op::JGT => a > i.k,
                        op::JGE => a >= i.k,
                        op::JSET => a & i.k != 0,
                        other => panic!("jump {other:#x} not modelled"),
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                other => panic!("opcode {other:#x} not modelled"),
            }
            assert!(pc < p.len(), "ran off the end of the program");
        }
    }

    /// Ethernet + IPv4 (20-byte header) + UDP to `dport`; `ethertype`, `proto` and the
    /// fragment field as given.
    fn frame(ethertype: u16, proto: u8, frag: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8 + 4];
        f[12..14].copy_from_slice(&ethertype.to_be_bytes());
        f[14] = 0x45;
        f[14 + 6..14 + 8].copy_from_slice(&frag.to_be_bytes());
        f[14 + 9] = proto;
        f[14 + 20 + 2..14 + 20 + 4].copy_from_slice(&dport.to_be_bytes());
        f
    }

    #[test]
    fn port_programs_keep_what_they_say_and_drop_the_rest() {
        let range = udp_dst_port_range(9000..=9009, 96);
        let one = udp_dst_port(9001, 96);
        for port in [0, 8999, 9000, 9001, 9005, 9009, 9010, 65535] {
            let in_range = (9000..=9009).contains(&port);
            assert_eq!(
                run(&range, &frame(0x0800, 17, 0, port)) != 0,
                in_range,
                "{port}"
            );
            assert_eq!(
                run(&one, &frame(0x0800, 17, 0, port)) != 0,
                port == 9001,
                "{port}"
            );
        }
        assert_eq!(run(&range, &frame(0x0800, 17, 0, 9003)), 96);
        // Not IPv4, not UDP, a later fragment: dropped whatever the bytes where the port
        // would be (an ethertype, a protocol or a fragment field equal to the port too).
        for p in [&range, &one] {
            assert_eq!(run(p, &frame(0x86dd, 17, 0, 9001)), 0);
            assert_eq!(run(p, &frame(9001, 17, 0, 9001)), 0);
            assert_eq!(run(p, &frame(0x0800, 6, 0, 9001)), 0);
            assert_eq!(run(p, &frame(0x0800, 17, 9001 & 0x1fff, 9001)), 0);
            // A first fragment (MF set, offset 0) is kept.
            assert_ne!(run(p, &frame(0x0800, 17, 0x2000, 9001)), 0);
        }
        // An empty range keeps nothing.
        #[allow(clippy::reversed_empty_ranges)]
        let empty = udp_dst_port_range(9001..=9000, 96);
        assert_eq!(run(&empty, &frame(0x0800, 17, 0, 9000)), 0);
        assert_eq!(run(&empty, &frame(0x0800, 17, 0, 9001)), 0);
    }

    #[test]
    fn snaplen_caps_accepts_only() {
        let p = with_snaplen(Some(&udp_dst_port(9001, 262_144)), 96);
        assert_eq!(p[9].k, 96);
        assert_eq!(p[10].k, 0);
        assert_eq!(p[8].k, 9001);
        assert_eq!(with_snaplen(None, 1500)[0].k, 1500);
    }
}
