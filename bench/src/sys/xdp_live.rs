//! A generator in the kernel: an XDP program that returns `XDP_TX`, run by
//! `bpf(BPF_PROG_TEST_RUN)` with `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux 5.18+). One run takes
//! one frame as `data_in` and repeats it; with the context's `ingress_ifindex` naming the
//! sending veth, the kernel turns `XDP_TX` into a redirect out of that veth, so the frames
//! leave it as if a driver had bounced them and arrive at its peer (which needs GRO on, or an
//! XDP program of its own, for veth to accept XDP frames). No clang, no object file.
//!
//! A run has a costly set-up and tear-down (the kernel's page pool for it and an RCU grace
//! period), so one run lasts a whole trial and the program paces itself: its state
//! (an array map of one [`State`]) holds the next frame's due time and the interval, the
//! trial's end, the frames sent and the flow count. Each repetition reads the clock; a frame
//! not yet due, or past the end, is dropped at once (little of the generator's own CPU); a
//! due one gets the flow's ports (round robin over the flows: source port
//! `sport_base + k`, destination `dport_base + k`) and goes out. User space stops the run
//! after the end with a signal (the run checks for one between batches).
//!
//! With [`State::mix`] set, the program also chooses each frame's length: frame `n` (counted
//! from 1) takes entry 0, 1 or 2 of [`State::sizes`] as `n % 12` is below 7, below 11 or 11
//! (IMIX's 7:4:1, interleaved), trims or grows the frame to that length with
//! `bpf_xdp_adjust_tail` (from its current length, `bpf_xdp_get_buff_len`: the kernel keeps a
//! live frame's last length between repetitions) and writes the entry's IPv4 total length,
//! header checksum and UDP length (computed in user space from the template). The template
//! is the longest frame, so every length's bytes are the template's.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::errno::check;
use zcrx_kflows::bpf::{self, Alu, Asm, Cond, Size, FP, R0, R1, R2, R3, R6, R7, R8, R9};

/// `enum xdp_action`.
const XDP_DROP: i32 = 1;
const XDP_TX: i32 = 3;
/// Helpers: `bpf_map_lookup_elem`, `bpf_ktime_get_ns`, `bpf_xdp_adjust_tail`,
/// `bpf_xdp_get_buff_len` (Linux 5.18+, as live frames are).
const HELPER_MAP_LOOKUP: i32 = 1;
const HELPER_KTIME_GET_NS: i32 = 5;
const HELPER_XDP_ADJUST_TAIL: i32 = 65;
const HELPER_XDP_GET_BUFF_LEN: i32 = 188;
/// Repetitions per kernel batch (at most TEST_XDP_MAX_BATCH, 256, net/bpf/test_run.c).
const BATCH: u32 = 64;
/// A generator that fell behind (preempted) sends at most this much backlog at once.
const CATCH_UP_NS: i32 = 20_000;

/// The program's state, one array-map value (all fields u64, in this order).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// CLOCK_MONOTONIC ns at which the next frame is due.
    pub next_due_ns: u64,
    /// ns between frames (0: as fast as the kernel goes).
    pub interval_ns: u64,
    /// No frame leaves at or after this CLOCK_MONOTONIC ns.
    pub end_ns: u64,
    /// Frames sent so far.
    pub sent: u64,
    /// Flows to cycle through (at least 1).
    pub flows: u64,
    /// 0: every frame is the template; 1: each frame's length from [`State::sizes`], 7:4:1.
    pub mix: u64,
    /// The mix's three lengths (with `mix`).
    pub sizes: [MixSize; 3],
}

/// One length of the mix: the frame's length and its headers' length fields, as the
/// program writes them.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MixSize {
    /// The frame's length, bytes.
    pub len: u64,
    /// Three 16-bit fields in memory order, each as the program stores it (the low 16
    /// bits, then the next): IPv4 total length, IPv4 header checksum, UDP length, in
    /// network byte order.
    pub fields: u64,
}

impl State {
    /// The map value's size: twelve u64s.
    pub const SIZE: usize = 96;

    /// The fields in map order (the program reads them at these offsets).
    fn words(self) -> [u64; 12] {
        let [a, b, c] = self.sizes;
        [
            self.next_due_ns,
            self.interval_ns,
            self.end_ns,
            self.sent,
            self.flows,
            self.mix,
            a.len,
            a.fields,
            b.len,
            b.fields,
            c.len,
            c.fields,
        ]
    }

    /// The map value.
    pub fn to_ne_bytes(self) -> [u8; State::SIZE] {
        let mut out = [0u8; State::SIZE];
        for (chunk, w) in out.chunks_exact_mut(8).zip(self.words()) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        out
    }

    /// The state a map value holds.
    pub fn from_ne_bytes(b: &[u8; State::SIZE]) -> State {
        let mut w = [0u64; 12];
        for (v, chunk) in w.iter_mut().zip(b.chunks_exact(8)) {
            *v = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
        }
        let size = |i: usize| MixSize {
            len: w[i],
            fields: w[i + 1],
        };
        State {
            next_due_ns: w[0],
            interval_ns: w[1],
            end_ns: w[2],
            sent: w[3],
            flows: w[4],
            mix: w[5],
            sizes: [size(6), size(8), size(10)],
        }
    }
}

impl MixSize {
    /// `len` bytes of `template` (Ethernet, IPv4 without options, UDP): its length fields
    /// and the header checksum for that length.
    pub fn of(template: &[u8], len: usize) -> MixSize {
        let mut ip = [0u8; 20];
        ip.copy_from_slice(&template[14..34]);
        let ip_len = (len - 14) as u16;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[10..12].copy_from_slice(&[0, 0]);
        let csum = zcrx_ring::frames::ipv4_checksum(&ip);
        let stored = |v: u16| u64::from(u16::from_ne_bytes(v.to_be_bytes()));
        MixSize {
            len: len as u64,
            fields: stored(ip_len) | stored(csum) << 16 | stored(ip_len - 20) << 32,
        }
    }
}

/// Byte offsets in a lab frame (Ethernet, IPv4 without options, UDP).
const IP_LEN_AT: i16 = 16;
const IP_CSUM_AT: i16 = 24;
const SPORT_AT: i16 = 34;
const DPORT_AT: i16 = 36;
const UDP_LEN_AT: i16 = 38;
/// Offsets in [`State`].
const MIX_AT: i16 = 40;
const SIZES_AT: i32 = 48;

/// The program for the state map `map`; `sport_base`/`dport_base` are flow 0's ports.
/// Registers: r6 the context, r7 the frame, r8 the state, r9 the clock (then the mix's
/// entry).
fn program(map: RawFd, sport_base: u16, dport_base: u16) -> Vec<u64> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    frame_or_drop(&mut a, DPORT_AT + 2);
    // The state: array entry 0.
    a.st(Size::W, FP, -4, 0);
    a.ld_map(R1, map);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, -4);
    a.call(HELPER_MAP_LOOKUP);
    a.jmp_imm(Cond::Eq, R0, 0, "drop");
    a.mov(R8, R0);
    pace(&mut a);
    flow_ports(&mut a, sport_base, dport_base);
    mix_length(&mut a);
    a.label("tx");
    a.movi(R0, XDP_TX);
    a.exit();
    a.label("drop");
    a.movi(R0, XDP_DROP);
    a.exit();
    a.finish().expect("every label placed")
}

/// r7 = the frame; to the drop unless its first `need` bytes are there.
fn frame_or_drop(a: &mut Asm, need: i16) {
    a.ldx(Size::W, R7, R6, 0); // ctx->data
    a.ldx(Size::W, R2, R6, 4); // ctx->data_end
    a.mov(R3, R7);
    a.alu_imm(Alu::Add, R3, i32::from(need));
    a.jmp(Cond::Gt, R3, R2, "drop");
}

/// The pace: to the drop after the end or before the next frame is due; else the next due
/// time moves one interval on (to now, when more than the catch-up behind) and r1 is the
/// frames sent before this one, r2 the count of flows.
fn pace(a: &mut Asm) {
    a.call(HELPER_KTIME_GET_NS);
    a.mov(R9, R0);
    a.ldx(Size::DW, R1, R8, 16); // end
    a.jmp(Cond::Ge, R9, R1, "drop");
    a.ldx(Size::DW, R1, R8, 0); // next_due
    a.jmp(Cond::Lt, R9, R1, "drop");
    a.ldx(Size::DW, R2, R8, 8); // interval
    a.alu(Alu::Add, R1, R2);
    a.mov(R3, R1);
    a.alu_imm(Alu::Add, R3, CATCH_UP_NS);
    a.jmp(Cond::Ge, R3, R9, "caught_up");
    a.mov(R1, R9); // fell behind: due now
    a.label("caught_up");
    a.stx(Size::DW, R8, 0, R1);
    a.ldx(Size::DW, R1, R8, 24); // sent
    a.mov(R2, R1);
    a.alu_imm(Alu::Add, R2, 1);
    a.stx(Size::DW, R8, 24, R2);
    a.ldx(Size::DW, R2, R8, 32); // flows
    a.jmp_imm(Cond::Eq, R2, 0, "drop");
}

/// The frame's ports: flow `sent % flows` counted up from the bases.
fn flow_ports(a: &mut Asm, sport_base: u16, dport_base: u16) {
    a.alu(Alu::Mod, R1, R2);
    a.mov(R2, R1);
    a.alu_imm(Alu::Add, R2, i32::from(sport_base));
    a.be16(R2);
    a.stx(Size::H, R7, SPORT_AT, R2);
    a.alu_imm(Alu::Add, R1, i32::from(dport_base));
    a.be16(R1);
    a.stx(Size::H, R7, DPORT_AT, R1);
}

/// With the mix, the frame's length: entry 0, 1 or 2 of the sizes for frame `n % 12` (7:4:1),
/// the tail adjusted to it and its length fields written (see the module).
fn mix_length(a: &mut Asm) {
    a.ldx(Size::DW, R1, R8, MIX_AT);
    a.jmp_imm(Cond::Eq, R1, 0, "tx");
    a.ldx(Size::DW, R1, R8, 24); // sent: this frame's n
    a.movi(R2, 12);
    a.alu(Alu::Mod, R1, R2);
    a.movi(R3, 0);
    a.jmp_imm(Cond::Lt, R1, 7, "entry");
    a.movi(R3, 16);
    a.jmp_imm(Cond::Lt, R1, 11, "entry");
    a.movi(R3, 32);
    a.label("entry");
    a.mov(R9, R8);
    a.alu_imm(Alu::Add, R9, SIZES_AT);
    a.alu(Alu::Add, R9, R3);
    a.mov(R1, R6);
    a.call(HELPER_XDP_GET_BUFF_LEN);
    a.ldx(Size::DW, R2, R9, 0); // entry.len
    a.alu(Alu::Sub, R2, R0); // the change
    a.mov(R1, R6);
    a.call(HELPER_XDP_ADJUST_TAIL);
    a.jmp_imm(Cond::Ne, R0, 0, "drop");
    frame_or_drop(a, UDP_LEN_AT + 2);
    a.ldx(Size::DW, R1, R9, 8); // entry.fields
    a.stx(Size::H, R7, IP_LEN_AT, R1);
    a.alu_imm(Alu::Rsh, R1, 16);
    a.stx(Size::H, R7, IP_CSUM_AT, R1);
    a.alu_imm(Alu::Rsh, R1, 16);
    a.stx(Size::H, R7, UDP_LEN_AT, R1);
}

/// `struct xdp_md`, the context a test run starts from.
#[repr(C)]
#[derive(Default)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

impl XdpMd {
    /// The context as the kernel reads it.
    fn to_ne_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        let fields = [
            self.data,
            self.data_end,
            self.data_meta,
            self.ingress_ifindex,
            self.rx_queue_index,
            self.egress_ifindex,
        ];
        for (chunk, v) in b.chunks_exact_mut(4).zip(fields) {
            chunk.copy_from_slice(&v.to_ne_bytes());
        }
        b
    }
}

fn refused(what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("xdp-live: {what}: {e}"))
}

/// The loaded generator: its state map and its program; both go when dropped.
pub struct XdpGenerator {
    prog: OwnedFd,
    map: OwnedFd,
}

impl XdpGenerator {
    /// Creates the state map and loads the program for flows whose ports count up from
    /// `sport_base`/`dport_base`. Needs CAP_BPF (or root); the error says what the kernel
    /// refused, with the verifier's log for a refused program.
    pub fn load(sport_base: u16, dport_base: u16) -> io::Result<XdpGenerator> {
        let map = bpf::create_map(bpf::BPF_MAP_TYPE_ARRAY, 4, State::SIZE as u32, 1)
            .map_err(|e| refused("creating the state map (needs CAP_BPF or root)", e))?;
        let insns = program(map.as_raw_fd(), sport_base, dport_base);
        let kind = bpf::ProgKind {
            prog_type: bpf::BPF_PROG_TYPE_XDP,
            expected_attach_type: 0,
            prog_flags: 0,
        };
        let prog = bpf::load(kind, &insns, "zcrx_xdp_gen").map_err(|(e, log)| {
            refused(&format!("loading the XDP program (verifier: {log:?})"), e)
        })?;
        Ok(XdpGenerator { prog, map })
    }

    /// The program's state.
    pub fn state(&self) -> io::Result<State> {
        let mut value = [0u8; State::SIZE];
        bpf::lookup(&self.map, &0u32.to_ne_bytes(), &mut value)
            .map_err(|e| refused("reading the state map", e))?;
        Ok(State::from_ne_bytes(&value))
    }

    /// Sets the program's state.
    pub fn set_state(&self, state: &State) -> io::Result<()> {
        bpf::update(&self.map, &0u32.to_ne_bytes(), &state.to_ne_bytes())
            .map_err(|e| refused("writing the state map", e))
    }

    /// Runs the program over `frame` up to `repeat` times out of interface `ifindex` (in the
    /// calling thread's network namespace), [`BATCH`] repetitions per kernel batch. A signal
    /// ends the run early: that is `Ok(false)`; `Ok(true)` is every repetition done.
    pub fn run(&self, ifindex: u32, frame: &[u8], repeat: u32) -> io::Result<bool> {
        let ctx = XdpMd {
            data_end: frame.len() as u32,
            ingress_ifindex: ifindex,
            ..XdpMd::default()
        };
        let ctx = ctx.to_ne_bytes();
        let run = bpf::XdpTestRun {
            data: frame,
            ctx: &ctx,
            repeat,
            flags: bpf::BPF_F_TEST_XDP_LIVE_FRAMES,
            batch_size: BATCH,
        };
        match bpf::test_run_xdp(&self.prog, &run) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(false),
            Err(e) => Err(refused(
                "BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES (Linux 5.18+)",
                e,
            )),
        }
    }
}

/// CLOCK_MONOTONIC in ns, the clock `bpf_ktime_get_ns` reads.
pub use zcrx_kflows::bpf::monotonic_ns;

extern "C" fn on_wake(_: libc::c_int) {}

/// Installs a handler for SIGUSR1 that does nothing and does not restart system calls, so
/// that the signal ends a running `BPF_PROG_TEST_RUN` with EINTR (see [`interrupt`]).
pub fn install_wake_signal() -> io::Result<()> {
    // SAFETY: a zeroed sigaction is valid; the handler is an extern "C" fn that does nothing
    // (async-signal-safe), installed for SIGUSR1 only, without SA_RESTART.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_wake as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        check(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()))?;
    }
    Ok(())
}

/// The calling thread's id, for [`interrupt`].
pub fn this_thread() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Sends SIGUSR1 to thread `tid` of this process (after [`install_wake_signal`]): ends its
/// running test run. By thread id, through tgkill, so a thread that has already gone is an
/// error (ESRCH), not a dangling handle; the caller signals only while the thread lives (see
/// `generator::XdpLive::offer`), so a recycled id is not met either.
pub fn interrupt(tid: libc::pid_t) -> io::Result<()> {
    // SAFETY: tgkill takes plain integers; the signal's handler does nothing.
    let r = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGUSR1) };
    check(r as libc::c_int).map(drop)
}

#[cfg(test)]
mod test {
    use super::*;
    use std::mem::size_of;

    use zcrx_kflows::bpf::insn;

    #[test]
    fn the_program_ends_in_its_two_verdicts_and_names_its_map() {
        let p = program(3, 1000, 2000);
        let n = p.len();
        let (mov_r0, exit) = (|v| insn(0xb7, 0, 0, 0, v), insn(0x95, 0, 0, 0, 0));
        assert_eq!(p[n - 4..], [mov_r0(XDP_TX), exit, mov_r0(XDP_DROP), exit]);
        // The map's fd sits in the ld_imm64 with src = BPF_PSEUDO_MAP_FD.
        assert_eq!(p[7], insn(0x18, 1, 1, 0, 3));
        // Every jump (class BPF_JMP, not a call or exit) lands inside the program.
        for (at, i) in p.iter().enumerate() {
            let code = (i & 0xff) as u8;
            if code & 0x07 == 0x05 && !matches!(code, 0x85 | 0x95) {
                let off = ((i >> 16) & 0xffff) as u16 as i16;
                let to = at as i64 + 1 + i64::from(off);
                assert!((0..n as i64).contains(&to), "jump at {at} to {to}");
            }
        }
    }

    /// The fields the program stores for a length are the bytes a frame of that length
    /// carries (its IPv4 and UDP lengths, a header checksum that verifies).
    #[test]
    fn a_mix_size_carries_the_headers_of_its_length() {
        use zcrx_ring::frames::{ipv4_checksum, UdpFlow};
        let flow = UdpFlow::synthetic(3);
        let template = flow.frame(7, 1500);
        for len in [64usize, 576, 1500] {
            let m = MixSize::of(&template, len);
            assert_eq!(m.len, len as u64);
            let mut f = template[..len].to_vec();
            let stored = m.fields.to_ne_bytes();
            f[16..18].copy_from_slice(&stored[0..2]);
            f[24..26].copy_from_slice(&stored[2..4]);
            f[38..40].copy_from_slice(&stored[4..6]);
            // The headers (and the payload's magic and sequence number) of a frame made
            // at that length.
            assert_eq!(f[..54], flow.frame(7, len)[..54], "at {len}");
            assert_eq!(
                ipv4_checksum(&f[14..34]),
                0,
                "the checksum verifies at {len}"
            );
        }
    }

    #[test]
    fn the_map_value_and_context_have_the_programs_layout() {
        assert_eq!(size_of::<XdpMd>(), 24);
        assert_eq!(size_of::<State>(), State::SIZE);
        assert_eq!(std::mem::offset_of!(State, sent), 24);
        assert_eq!(std::mem::offset_of!(State, flows), 32);
        assert_eq!(std::mem::offset_of!(State, mix), MIX_AT as usize);
        assert_eq!(std::mem::offset_of!(State, sizes), SIZES_AT as usize);
        assert_eq!(size_of::<State>(), 96);
    }

    #[test]
    fn the_map_value_round_trips_in_the_programs_order() {
        let size = |len, fields| MixSize { len, fields };
        let s = State {
            next_due_ns: 1,
            interval_ns: 2,
            end_ns: 3,
            sent: 4,
            flows: 5,
            mix: 6,
            sizes: [size(7, 8), size(9, 10), size(11, 12)],
        };
        let b = s.to_ne_bytes();
        let at = |off: usize| u64::from_ne_bytes(b[off..off + 8].try_into().unwrap());
        assert_eq!(at(std::mem::offset_of!(State, sent)), 4);
        assert_eq!(at(MIX_AT as usize), 6);
        assert_eq!(at(SIZES_AT as usize), 7);
        assert_eq!(at(SIZES_AT as usize + 40), 12);
        assert_eq!(State::from_ne_bytes(&b), s);
    }
}
