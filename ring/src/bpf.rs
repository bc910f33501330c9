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
    pub const JEQ: u16 = 0x10;
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

/// Accept everything, keep `snaplen` bytes.
pub fn accept_all(snaplen: u32) -> Vec<Insn> {
    vec![stmt(op::RET | op::K, snaplen)]
}

/// Ethernet + IPv4 + UDP with destination port `port` (what `tcpdump -dd 'ip and udp dst
/// port N'` prints, minus the IPv6 branch); non-first fragments are rejected.
pub fn udp_dst_port(port: u16, snaplen: u32) -> Vec<Insn> {
    vec![
        stmt(op::LD | op::H | op::ABS, 12),             // 0: A = ethertype
        jump(op::JMP | op::JEQ | op::K, 0x0800, 0, 6),  // 1: IPv4?
        stmt(op::LD | op::B | op::ABS, 23),             // 2: A = IP protocol
        jump(op::JMP | op::JEQ | op::K, 17, 0, 4),      // 3: UDP?
        stmt(op::LD | op::H | op::ABS, 20),             // 4: A = flags + fragment offset
        jump(op::JMP | op::JSET | op::K, 0x1fff, 2, 0), // 5: later fragment -> drop
        stmt(op::LDX | op::B | op::MSH, 14),            // 6: X = IP header length
        stmt(op::LD | op::H | op::IND, 16),             // 7: A = UDP dst port
        jump(op::JMP | op::JEQ | op::K, u32::from(port), 0, 1), // 8
        stmt(op::RET | op::K, snaplen),                 // 9: accept
        stmt(op::RET | op::K, 0),                       // 10: drop
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
    fn snaplen_caps_accepts_only() {
        let p = with_snaplen(Some(&udp_dst_port(9001, 262_144)), 96);
        assert_eq!(p[9].k, 96);
        assert_eq!(p[10].k, 0);
        assert_eq!(p[8].k, 9001);
        assert_eq!(with_snaplen(None, 1500)[0].k, 1500);
    }
}
