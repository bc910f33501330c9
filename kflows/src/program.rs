//! The flow-counting program, written with the crate's assembler ([`crate::bpf::Asm`]: named
//! registers, loads, stores and jumps to named labels resolved at the end).
//!
//! The program runs at tcx (ingress, egress) as a SCHED_CLS program, or at XDP as an XDP
//! program: the same code, generated for either context ([`Hook`]). Per packet it reads
//! Ethernet, the VLAN tag the kernel stripped into the skb (the outermost; tcx only) and up
//! to two tags left in the frame (three at XDP, where no tag was stripped), IPv4 (any header
//! length; a non-first fragment has no ports) or IPv6 and its extension headers (as many as
//! the flow cache walks; a non-first fragment has no ports), then the ports of TCP, UDP,
//! UDP-Lite, SCTP and DCCP or ICMP/ICMPv6's type and code (other protocols: ports 0). The
//! directional key and the packet's IP octets, TCP flags and time go into a per-CPU hash map
//! ([`KEY_SIZE`]-byte keys, [`VALUE_SIZE`]-byte values); a packet whose flow is not in a full
//! map counts as overflow; anything else counts as not a flow.
//! It always returns TCX_NEXT (XDP_PASS at XDP): every packet goes on.

use zcrx_flowcache::MAX_EXT_HEADERS;

use super::bpf::{Alu, Asm, Cond, Size, FP, R0, R1, R2, R3, R4, R5, R6, R7, R8, R9};
use super::hook::Hook;

/// Key bytes: source address (16; IPv4 in the first 4), destination (16), source and
/// destination port (network order; ICMP: type and code in the low bytes), protocol, flags
/// ([`F_IPV6`], [`F_LATER_FRAGMENT`], [`F_VLAN`]), VLAN id (host order).
pub(crate) const KEY_SIZE: usize = 40;
pub(crate) const K_SRC: i16 = 0;
pub(crate) const K_DST: i16 = 16;
pub(crate) const K_PORTS: i16 = 32;
pub(crate) const K_PROTO: i16 = 36;
pub(crate) const K_FLAGS: i16 = 37;
pub(crate) const K_VLAN: i16 = 38;
pub(crate) const F_IPV6: u8 = 1;
pub(crate) const F_LATER_FRAGMENT: u8 = 2;
pub(crate) const F_VLAN: u8 = 4;

/// Value: packets, IP octets, first and last `bpf_ktime_get_ns`, TCP flags (OR), all u64.
pub(crate) const VALUE_SIZE: usize = 40;
const V_PACKETS: i16 = 0;
const V_BYTES: i16 = 8;
const V_FIRST: i16 = 16;
const V_LAST: i16 = 24;
const V_FLAGS: i16 = 32;

/// Counter indexes in the per-CPU array.
pub(crate) const C_COUNTED: u32 = 0;
pub(crate) const C_NOT_A_FLOW: u32 = 1;
pub(crate) const C_OVERFLOW: u32 = 2;
pub(crate) const COUNTERS: u32 = 3;

/// `struct __sk_buff` fields.
const SKB_LEN: i16 = 0;
const SKB_VLAN_PRESENT: i16 = 20;
const SKB_VLAN_TCI: i16 = 24;
const SKB_DATA: i16 = 76;
const SKB_DATA_END: i16 = 80;
/// `struct xdp_md` fields.
const XDP_DATA: i16 = 0;
const XDP_DATA_END: i16 = 4;

/// Helpers.
const HELPER_MAP_LOOKUP: i32 = 1;
const HELPER_MAP_UPDATE: i32 = 2;
const HELPER_KTIME_GET_NS: i32 = 5;
const HELPER_SKB_PULL_DATA: i32 = 39;
/// `bpf_xdp_get_buff_len(ctx)`: the length of every buffer of the frame (Linux 5.18+), as
/// `skb->len` counts it (`data_end - data` covers the first buffer alone).
const HELPER_XDP_GET_BUFF_LEN: i32 = 188;
/// The headers the parse reads at most lie in a frame's first bytes (Ethernet, two tags,
/// IPv4 with options, TCP's first 20): these must be in the skb's linear part.
const HEADERS: i32 = 128;
const BPF_NOEXIST: i32 = 1;
/// `TCX_NEXT`: the packet goes on to the next program and the stack.
const TCX_NEXT: i32 = -1;
/// `XDP_PASS`: the frame goes on to the stack.
const XDP_PASS: i32 = 2;

/// Stack: the key at fp-40, the value being built at fp-80, a counter index at fp-84, the
/// key's shard at fp-88.
const KEY: i16 = -40;
const VAL: i16 = -80;
const CKEY: i16 = -84;
const SKEY: i16 = -88;

/// The multiplier of the shard's hash: 2^64 over the golden ratio, odd (Fibonacci hashing:
/// keys a small step apart, such as one client's ports, land far apart in the product's top
/// bits). A 64-bit constant, loaded whole: an ALU immediate is 32 bits, sign-extended, and
/// the top bits of a product by it follow the key's high bits alone.
const SHARD_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// The key's shard, one of `1 << bits`, from the key on the stack: its five 8-byte words
/// folded by XOR, the halves folded, times [`SHARD_MUL`], the top `bits` bits (the tests'
/// `shard_of` computes the same). The same directional key always lands in the same shard.
fn shard(a: &mut Asm, bits: u32) {
    if bits == 0 {
        a.st(Size::W, FP, SKEY, 0);
        return;
    }
    a.ldx(Size::DW, R1, FP, KEY);
    for w in 1..(KEY_SIZE as i16 / 8) {
        a.ldx(Size::DW, R2, FP, KEY + 8 * w);
        a.alu(Alu::Xor, R1, R2);
    }
    a.mov(R2, R1);
    a.alu_imm(Alu::Rsh, R2, 32);
    a.alu(Alu::Xor, R1, R2);
    a.ld_imm64(R2, SHARD_MUL);
    a.alu(Alu::Mul, R1, R2);
    a.alu_imm(Alu::Rsh, R1, 64 - bits as i32);
    a.stx(Size::W, FP, SKEY, R1);
}

/// The shard, of `1 << bits`, that the program puts the directional key `raw` in: the tests'
/// copy of [`shard`] (user space remembers where it read each entry instead).
#[cfg(test)]
pub(crate) fn shard_of(raw: &[u8; KEY_SIZE], bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    let mut h = raw
        .chunks_exact(8)
        .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")))
        .fold(0, |h, w| h ^ w);
    h ^= h >> 32;
    (h.wrapping_mul(SHARD_MUL) >> (64 - bits)) as usize
}

/// `if r7 + n > data_end (r8) goto notflow`.
fn need(a: &mut Asm, n: i32) {
    a.mov(R1, R7);
    a.alu_imm(Alu::Add, R1, n);
    a.jmp(Cond::Gt, R1, R8, "notflow");
}

/// The key's flags byte |= `bit`.
fn set_flag(a: &mut Asm, bit: i32) {
    a.ldx(Size::B, R3, FP, KEY + K_FLAGS);
    a.alu_imm(Alu::Or, R3, bit);
    a.stx(Size::B, FP, KEY + K_FLAGS, R3);
}

/// Adds the packet (value at fp-80, time in r9) to the entry at r0; then `goto counted`.
fn add_to_entry(a: &mut Asm) {
    a.ldx(Size::DW, R1, R0, V_PACKETS);
    a.alu_imm(Alu::Add, R1, 1);
    a.stx(Size::DW, R0, V_PACKETS, R1);
    a.ldx(Size::DW, R1, R0, V_BYTES);
    a.ldx(Size::DW, R2, FP, VAL + V_BYTES);
    a.alu(Alu::Add, R1, R2);
    a.stx(Size::DW, R0, V_BYTES, R1);
    a.stx(Size::DW, R0, V_LAST, R9);
    a.ldx(Size::DW, R1, R0, V_FLAGS);
    a.ldx(Size::DW, R2, FP, VAL + V_FLAGS);
    a.alu(Alu::Or, R1, R2);
    a.stx(Size::DW, R0, V_FLAGS, R1);
    a.ja("counted");
}

/// `counters[index] += 1` (this CPU's), then return `verdict` (the hook's "go on").
fn bump_and_pass(a: &mut Asm, counters: i32, index: u32, name: &str, verdict: i32) {
    a.label(name);
    a.st(Size::W, FP, CKEY, index as i32);
    a.ld_map(R1, counters);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, i32::from(CKEY));
    a.call(HELPER_MAP_LOOKUP);
    let out = format!("{name}_out");
    a.jmp_imm(Cond::Eq, R0, 0, &out);
    a.ldx(Size::DW, R1, R0, 0);
    a.alu_imm(Alu::Add, R1, 1);
    a.stx(Size::DW, R0, 0, R1);
    a.label(&out);
    a.movi(R0, verdict);
    a.exit();
}

/// IPv6's extension headers, from r5 (the fixed header's next header) at r7, unrolled
/// as many times as the flow cache walks them ([`MAX_EXT_HEADERS`]; more is not a flow, as
/// there; the verifier takes no loop it cannot bound): hop-by-hop,
/// routing, destination options, mobility, HIP and shim6 ((length + 1) x 8 bytes), AH
/// ((length + 2) x 4) and fragment (8; a non-first fragment ends the walk: its protocol is
/// the fragment header's next header, without ports). Each header must lie in the frame.
/// ESP, no next header or an upper layer end the walk; the protocol goes into the key, then
/// the transport's parse (`l4`) with r7 at its header.
fn extension_headers(a: &mut Asm) {
    for i in 0..MAX_EXT_HEADERS {
        let (units8, ah, frag, later, advance) = (
            format!("ext{i}_units8"),
            format!("ext{i}_ah"),
            format!("ext{i}_frag"),
            format!("ext{i}_later"),
            format!("ext{i}_advance"),
        );
        for ext in [0, 43, 60, 135, 139, 140] {
            a.jmp_imm(Cond::Eq, R5, ext, &units8);
        }
        a.jmp_imm(Cond::Eq, R5, 44, &frag);
        a.jmp_imm(Cond::Eq, R5, 51, &ah);
        a.ja("v6upper");
        a.label(&units8);
        need(a, 8);
        a.ldx(Size::B, R3, R7, 1);
        a.alu_imm(Alu::Add, R3, 1);
        a.alu_imm(Alu::Lsh, R3, 3);
        a.ja(&advance);
        a.label(&ah);
        need(a, 8);
        a.ldx(Size::B, R3, R7, 1);
        a.alu_imm(Alu::Add, R3, 2);
        a.alu_imm(Alu::Lsh, R3, 2);
        a.ja(&advance);
        a.label(&frag);
        need(a, 8);
        a.ldx(Size::H, R3, R7, 2);
        a.be16(R3);
        a.alu_imm(Alu::And, R3, 0xfff8);
        a.jmp_imm(Cond::Ne, R3, 0, &later);
        a.movi(R3, 8);
        a.ja(&advance);
        // A later fragment: no transport header here.
        a.label(&later);
        a.ldx(Size::B, R5, R7, 0);
        a.stx(Size::B, FP, KEY + K_PROTO, R5);
        set_flag(a, i32::from(F_LATER_FRAGMENT));
        a.ja("account");
        a.label(&advance);
        a.ldx(Size::B, R5, R7, 0);
        a.alu(Alu::Add, R7, R3);
        need(a, 0);
    }
    // Still an extension header after as many as the flow cache walks: not a flow.
    for ext in [0, 43, 44, 51, 60, 135, 139, 140] {
        a.jmp_imm(Cond::Eq, R5, ext, "notflow");
    }
    a.label("v6upper");
    a.stx(Size::B, FP, KEY + K_PROTO, R5);
}

/// `r3 = the frame's length - r9` (the bytes from the network header on), for an IP header
/// that declares no length. tcx: `skb->len` (from the MAC header: tcx pushes it back before
/// the program). XDP: [`HELPER_XDP_GET_BUFF_LEN`], a call that clobbers r0-r5 (r6-r9 and
/// the packet pointers in them stay: the helper does not change the packet).
fn frame_len_after_l2(a: &mut Asm, hook: Hook) {
    match hook {
        Hook::Tcx => a.ldx(Size::W, R3, R6, SKB_LEN),
        Hook::Xdp => {
            a.mov(R1, R6);
            a.call(HELPER_XDP_GET_BUFF_LEN);
            a.mov(R3, R0);
        }
    }
    a.alu(Alu::Sub, R3, R9);
}

/// `r4 = IPv4's header length` (bytes) from the header at r7.
fn ipv4_header_len(a: &mut Asm) {
    a.ldx(Size::B, R4, R7, 0);
    a.alu_imm(Alu::And, R4, 0x0f);
    a.alu_imm(Alu::Lsh, R4, 2);
}

/// The hook's context read into r7 (the frame's start) and r8 (its end), the tcx skb's
/// headers pulled into its linear part and its stripped VLAN tag into the key; the tags the
/// parse then reads in the frame, (index, the network header's offset behind it).
fn context(a: &mut Asm, hook: Hook) -> &'static [(i32, i16)] {
    // Tags the frame may carry: at XDP the outermost is still in it (none was stripped), so
    // one more than at tcx, for a frame to count the same at either hook.
    match hook {
        Hook::Tcx => {
            a.ldx(Size::W, R7, R6, SKB_DATA);
            a.ldx(Size::W, R8, R6, SKB_DATA_END);
            // Direct access reads the linear part only; a packet built from page fragments
            // (an AF_PACKET send, some drivers) may hold little there: pull the headers in
            // first.
            a.ldx(Size::W, R2, R6, SKB_LEN);
            a.jmp_imm(Cond::Le, R2, HEADERS, "headers_len");
            a.movi(R2, HEADERS);
            a.label("headers_len");
            a.mov(R1, R7);
            a.alu(Alu::Add, R1, R2);
            a.jmp(Cond::Le, R1, R8, "linear");
            a.mov(R1, R6);
            a.call(HELPER_SKB_PULL_DATA);
            a.ldx(Size::W, R7, R6, SKB_DATA);
            a.ldx(Size::W, R8, R6, SKB_DATA_END);
            a.label("linear");
            // The tag the kernel took out of the frame (the outermost) is the key's VLAN.
            a.ldx(Size::W, R1, R6, SKB_VLAN_PRESENT);
            a.jmp_imm(Cond::Eq, R1, 0, "ether");
            a.ldx(Size::W, R1, R6, SKB_VLAN_TCI);
            a.alu_imm(Alu::And, R1, 0x0fff);
            a.stx(Size::H, FP, KEY + K_VLAN, R1);
            a.st(Size::B, FP, KEY + K_FLAGS, i32::from(F_VLAN));
            &[(0, 14), (1, 18)]
        }
        Hook::Xdp => {
            // The first buffer of the frame: XDP's data is linear, there is nothing to pull
            // (a multi-buffer frame's later buffers are not read).
            a.ldx(Size::W, R7, R6, XDP_DATA);
            a.ldx(Size::W, R8, R6, XDP_DATA_END);
            &[(0, 14), (1, 18), (2, 22)]
        }
    }
}

/// The program for `hook` over the flow map's shards (`shards`, a map of `1 << shard_bits`
/// maps) and the counter array `counters` (map fds). Both hooks run the same parse and
/// accounting; they differ in the context (`struct __sk_buff` or `struct xdp_md`), in what
/// only an skb has (the stripped VLAN tag, a non-linear part to pull), in the frame's length
/// and in the verdict.
///
/// Registers while parsing: r6 the context, r7 the header being read (a packet pointer), r8
/// the frame's end, r9 the network header's offset in the frame; then r9 the time and r7
/// the key's shard of the flow map (a map).
///
/// One function past a screen: the program is one run of instructions whose jumps name
/// labels anywhere in it, with the register plan above throughout; the steps that stand
/// alone (the context, the frame's length, IPv4's header length, the extension headers, the
/// entry's update, the counters) are functions of their own.
pub(crate) fn program(
    shards: i32,
    shard_bits: u32,
    counters: i32,
    hook: Hook,
) -> Result<Vec<u64>, String> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    for i in 0..5 {
        a.st(Size::DW, FP, KEY + 8 * i, 0);
        a.st(Size::DW, FP, VAL + 8 * i, 0);
    }
    let tags = context(&mut a, hook);
    a.label("ether");
    need(&mut a, 14);
    a.ldx(Size::H, R2, R7, 12);
    a.be16(R2);
    a.movi(R9, 14);
    // Tags in the frame (802.1Q, 802.1ad, the old 0x9100): r2 the EtherType.
    for &(i, l3) in tags {
        let (tag, done) = (format!("tag{i}"), format!("tagged{i}"));
        for tpid in [0x8100, 0x88a8, 0x9100] {
            a.jmp_imm(Cond::Eq, R2, tpid, &tag);
        }
        a.ja("l3");
        a.label(&tag);
        need(&mut a, i32::from(l3) + 4);
        a.ldx(Size::B, R3, FP, KEY + K_FLAGS);
        a.jmp_imm(Cond::Set, R3, i32::from(F_VLAN), &done);
        a.ldx(Size::H, R1, R7, l3);
        a.be16(R1);
        a.alu_imm(Alu::And, R1, 0x0fff);
        a.stx(Size::H, FP, KEY + K_VLAN, R1);
        set_flag(&mut a, i32::from(F_VLAN));
        a.label(&done);
        a.ldx(Size::H, R2, R7, l3 + 2);
        a.be16(R2);
        a.movi(R9, i32::from(l3) + 4);
    }
    // One tag more: not a flow.
    for tpid in [0x8100, 0x88a8, 0x9100] {
        a.jmp_imm(Cond::Eq, R2, tpid, "notflow");
    }
    a.label("l3");
    a.alu(Alu::Add, R7, R9);
    a.jmp_imm(Cond::Eq, R2, 0x0800, "ipv4");
    a.jmp_imm(Cond::Eq, R2, 0x86dd, "ipv6");
    a.ja("notflow");

    // IPv4: version 4, IHL >= 5, a total length >= the header's (0: a GSO send, the frame's).
    a.label("ipv4");
    need(&mut a, 20);
    a.ldx(Size::B, R3, R7, 0);
    a.alu_imm(Alu::And, R3, 0xf0);
    a.jmp_imm(Cond::Ne, R3, 0x40, "notflow");
    ipv4_header_len(&mut a);
    a.jmp_imm(Cond::Lt, R4, 20, "notflow");
    a.ldx(Size::H, R3, R7, 2);
    a.be16(R3);
    a.jmp_imm(Cond::Ne, R3, 0, "v4declared");
    frame_len_after_l2(&mut a, hook);
    if hook == Hook::Xdp {
        // The helper call took r4.
        ipv4_header_len(&mut a);
    }
    a.ja("v4len");
    a.label("v4declared");
    a.jmp(Cond::Lt, R3, R4, "notflow");
    a.label("v4len");
    a.stx(Size::DW, FP, VAL + V_BYTES, R3);
    a.ldx(Size::W, R3, R7, 12);
    a.stx(Size::W, FP, KEY + K_SRC, R3);
    a.ldx(Size::W, R3, R7, 16);
    a.stx(Size::W, FP, KEY + K_DST, R3);
    a.ldx(Size::B, R5, R7, 9);
    a.stx(Size::B, FP, KEY + K_PROTO, R5);
    a.ldx(Size::H, R3, R7, 6);
    a.be16(R3);
    a.alu_imm(Alu::And, R3, 0x1fff);
    a.jmp_imm(Cond::Eq, R3, 0, "v4first");
    set_flag(&mut a, i32::from(F_LATER_FRAGMENT));
    a.ja("account");
    a.label("v4first");
    a.alu(Alu::Add, R7, R4);
    a.ja("l4");

    // IPv6, then its extension headers.
    a.label("ipv6");
    need(&mut a, 40);
    a.ldx(Size::B, R3, R7, 0);
    a.alu_imm(Alu::Rsh, R3, 4);
    a.jmp_imm(Cond::Ne, R3, 6, "notflow");
    a.ldx(Size::H, R3, R7, 4);
    a.be16(R3);
    a.jmp_imm(Cond::Ne, R3, 0, "v6declared");
    frame_len_after_l2(&mut a, hook);
    a.ja("v6len");
    a.label("v6declared");
    a.alu_imm(Alu::Add, R3, 40);
    a.label("v6len");
    a.stx(Size::DW, FP, VAL + V_BYTES, R3);
    a.ldx(Size::B, R5, R7, 6);
    for i in 0..8 {
        a.ldx(Size::W, R3, R7, 8 + 4 * i);
        a.stx(Size::W, FP, KEY + K_SRC + 4 * i, R3);
    }
    set_flag(&mut a, i32::from(F_IPV6));
    a.alu_imm(Alu::Add, R7, 40);
    extension_headers(&mut a);

    // Transport: r5 the protocol, r7 its header.
    a.label("l4");
    a.jmp_imm(Cond::Eq, R5, 6, "tcp");
    a.jmp_imm(Cond::Eq, R5, 17, "udp");
    a.jmp_imm(Cond::Eq, R5, 136, "udp");
    a.jmp_imm(Cond::Eq, R5, 132, "sctp");
    a.jmp_imm(Cond::Eq, R5, 33, "sctp");
    a.jmp_imm(Cond::Eq, R5, 1, "icmp");
    a.jmp_imm(Cond::Eq, R5, 58, "icmp");
    a.ja("account");
    a.label("tcp");
    need(&mut a, 20);
    a.ldx(Size::B, R3, R7, 12);
    a.alu_imm(Alu::Rsh, R3, 4);
    a.jmp_imm(Cond::Lt, R3, 5, "notflow");
    a.ldx(Size::B, R3, R7, 13);
    a.stx(Size::DW, FP, VAL + V_FLAGS, R3);
    a.ja("ports");
    a.label("udp");
    need(&mut a, 8);
    a.ja("ports");
    a.label("sctp");
    need(&mut a, 12);
    a.label("ports");
    a.ldx(Size::W, R3, R7, 0);
    a.stx(Size::W, FP, KEY + K_PORTS, R3);
    a.ja("account");
    a.label("icmp");
    need(&mut a, 8);
    a.ldx(Size::B, R3, R7, 0);
    a.stx(Size::B, FP, KEY + K_PORTS + 1, R3);
    a.ldx(Size::B, R3, R7, 1);
    a.stx(Size::B, FP, KEY + K_PORTS + 3, R3);

    // The flow's entry: add to it, or create it (another CPU may create it first: then add).
    // Its map is the key's shard (r7; the parse is done with it).
    a.label("account");
    a.call(HELPER_KTIME_GET_NS);
    a.mov(R9, R0);
    shard(&mut a, shard_bits);
    a.ld_map(R1, shards);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, i32::from(SKEY));
    a.call(HELPER_MAP_LOOKUP);
    // Every slot holds a shard from attach on: never taken.
    a.jmp_imm(Cond::Eq, R0, 0, "overflow");
    a.mov(R7, R0);
    for attempt in ["first", "again"] {
        a.mov(R1, R7);
        a.mov(R2, FP);
        a.alu_imm(Alu::Add, R2, i32::from(KEY));
        a.call(HELPER_MAP_LOOKUP);
        let missing = format!("missing_{attempt}");
        a.jmp_imm(Cond::Eq, R0, 0, &missing);
        add_to_entry(&mut a);
        a.label(&missing);
        if attempt == "first" {
            a.st(Size::DW, FP, VAL + V_PACKETS, 1);
            a.stx(Size::DW, FP, VAL + V_FIRST, R9);
            a.stx(Size::DW, FP, VAL + V_LAST, R9);
            a.mov(R1, R7);
            a.mov(R2, FP);
            a.alu_imm(Alu::Add, R2, i32::from(KEY));
            a.mov(R3, FP);
            a.alu_imm(Alu::Add, R3, i32::from(VAL));
            a.movi(R4, BPF_NOEXIST);
            a.call(HELPER_MAP_UPDATE);
            a.jmp_imm(Cond::Eq, R0, 0, "counted");
            // -EEXIST: created meanwhile on another CPU; else the map is full.
            a.jmp_imm(Cond::Ne, R0, -libc::EEXIST, "overflow");
            a.st(Size::DW, FP, VAL + V_PACKETS, 0);
        } else {
            a.ja("overflow");
        }
    }
    let verdict = match hook {
        Hook::Tcx => TCX_NEXT,
        Hook::Xdp => XDP_PASS,
    };
    bump_and_pass(&mut a, counters, C_COUNTED, "counted", verdict);
    bump_and_pass(&mut a, counters, C_NOT_A_FLOW, "notflow", verdict);
    bump_and_pass(&mut a, counters, C_OVERFLOW, "overflow", verdict);
    a.finish()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn assembles_with_every_label_resolved() {
        for hook in [Hook::Tcx, Hook::Xdp] {
            let p = program(3, 4, 4, hook).unwrap();
            assert!(p.len() > 100 && p.len() < 4096);
            // The last instruction is an exit.
            assert_eq!(p.last().unwrap() & 0xff, 0x95);
        }
    }

    /// Each hook's program reads its own context and returns its own "go on": XDP reads no
    /// skb field and calls neither `bpf_skb_pull_data` nor anything tcx lacks.
    #[test]
    fn each_hook_gets_its_context_and_verdict() {
        let calls = |p: &[u64]| -> Vec<i32> {
            p.iter()
                .filter(|&&i| i & 0xff == 0x85)
                .map(|&i| (i >> 32) as i32)
                .collect()
        };
        let ret = |p: &[u64]| -> Vec<i32> {
            // `r0 = imm` right before each exit.
            p.windows(2)
                .filter(|w| w[1] & 0xff == 0x95 && w[0] & 0xfff == 0x0b7)
                .map(|w| (w[0] >> 32) as i32)
                .collect()
        };
        let (tcx, xdp) = (
            program(3, 0, 4, Hook::Tcx).unwrap(),
            program(3, 0, 4, Hook::Xdp).unwrap(),
        );
        assert!(calls(&tcx).contains(&HELPER_SKB_PULL_DATA));
        assert!(!calls(&xdp).contains(&HELPER_SKB_PULL_DATA));
        assert!(calls(&xdp).contains(&HELPER_XDP_GET_BUFF_LEN));
        assert!(!calls(&tcx).contains(&HELPER_XDP_GET_BUFF_LEN));
        assert_eq!(ret(&tcx), [TCX_NEXT; 3]);
        assert_eq!(ret(&xdp), [XDP_PASS; 3]);
    }
}
