//! The lab's plumbing: what sends the traffic (`generator`: the in-kernel xdp-live and the
//! socket generators; `handshakes`: short TLS conversations for the sniffers; `mixed`: TCP
//! with options, DNS and plain UDP for the printing sniffers), where it runs
//! and how it is kept apart (`cpulink`: how far apart two CPUs are; `isolate`: the receiving
//! CPU kept for the receivers), what stops it (`interrupt`), the sniffers' command lines
//! (`sniffers`) and the machine it ran on (`machine`).

pub mod broker;
pub mod cpulink;
pub mod generator;
pub mod handshakes;
pub mod interrupt;
pub mod isolate;
pub mod machine;
pub mod mixed;
pub mod sniffers;
