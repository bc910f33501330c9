//! What the running kernel lets this process do with BPF, asked by trying it once.

use std::io;

use super::asm::{Asm, R0};
use super::sys::{
    load, test_run_xdp, ProgKind, XdpTestRun, BPF_F_TEST_XDP_LIVE_FRAMES, BPF_PROG_TYPE_XDP,
};

/// `XDP_DROP`: the frame goes nowhere.
const XDP_DROP: i32 = 1;

/// Whether the kernel runs XDP programs on live frames (`BPF_F_TEST_XDP_LIVE_FRAMES`, Linux
/// 5.18+) for this process: one run of a program that drops its frame, on `lo` (ifindex 1,
/// in every network namespace). Needs CAP_BPF and CAP_NET_ADMIN (or root); a sandboxed
/// kernel may refuse it even to root (EPERM). The error is the kernel's.
pub fn live_frames_allowed() -> io::Result<()> {
    let mut a = Asm::default();
    a.movi(R0, XDP_DROP);
    a.exit();
    let insns = a.finish().map_err(io::Error::other)?;
    let kind = ProgKind {
        prog_type: BPF_PROG_TYPE_XDP,
        expected_attach_type: 0,
        prog_flags: 0,
    };
    let prog = load(kind, &insns, "zcrx_probe").map_err(|(e, _log)| e)?;
    // `struct xdp_md`: data, data_end, data_meta, ingress_ifindex (lo), rx queue, egress.
    let frame = [0u8; 64];
    let mut ctx = [0u8; 24];
    ctx[4..8].copy_from_slice(&(frame.len() as u32).to_ne_bytes());
    ctx[12..16].copy_from_slice(&1u32.to_ne_bytes());
    test_run_xdp(
        &prog,
        &XdpTestRun {
            data: &frame,
            ctx: &ctx,
            repeat: 1,
            flags: BPF_F_TEST_XDP_LIVE_FRAMES,
            batch_size: 0,
        },
    )
    .map(drop)
}

/// The kernel's refusal of live frames to this process, if [`live_frames_allowed`] met one
/// (EPERM): without CAP_BPF and CAP_NET_ADMIN, or under a sandboxed kernel's policy even with
/// them. A probe that fails otherwise is no refusal (`None`): the run that needs live frames
/// fails then, with the kernel's own error.
pub fn live_frames_refused() -> Option<io::Error> {
    live_frames_allowed()
        .err()
        .filter(|e| e.raw_os_error() == Some(libc::EPERM))
}
