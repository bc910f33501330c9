//! Probes the compiler for the AVX-512 intrinsics (stable since Rust 1.89) and sets
//! `cfg(zcrx_avx512)` where it has them; older compilers (the crate's MSRV is 1.85) build
//! everything else, and the AVX-512 routines report themselves unsupported.

fn main() {
    let ac = autocfg::new();
    autocfg::emit_possibility("zcrx_avx512");
    if ac.probe_path("std::arch::x86_64::_mm512_maskz_loadu_epi8")
        && ac.probe_path("std::arch::x86_64::_mm512_stream_si512")
    {
        autocfg::emit("zcrx_avx512");
    }
    autocfg::rerun_path("build.rs");
}
