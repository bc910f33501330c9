//! zcrx's one `bpf(2)` layer and BPF assembler, shared by the in-kernel flow counter and by
//! rxbench's XDP programs (the AF_XDP redirect and the in-kernel generator): maps created,
//! read and written, programs loaded (the verifier's log kept for a refusal), attached at
//! tcx or XDP, and run by `BPF_PROG_TEST_RUN`; programs written with [`Asm`], whose jumps go
//! to named labels. No BTF and no object file: every program is assembled here.

mod asm;
mod probe;
#[allow(unsafe_code)]
mod sys;

pub use asm::{insn, Alu, Asm, Cond, Reg, Size, FP, R0, R1, R2, R3, R4, R5, R6, R7, R8, R9};
pub use probe::{live_frames_allowed, live_frames_refused};
pub use sys::*;
