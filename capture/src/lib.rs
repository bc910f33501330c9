//! zcrx-capture: the pipeline and the copy routines.
//!
//! - [`Pipeline`]: a softirq-like stage reads only each packet's headers, tracks its flow
//!   (zcrx-flowcache) and steers it to the consumer thread that owns the flow; consumers get
//!   a reference into the ring ([`Delivery::ZeroCopy`]) or a copy ([`Delivery::Copy`]).
//!   Its settings are a [`PipelineConfig`] from [`PipelineConfig::builder`], checked when
//!   built ([`ConfigError`]); it runs on the calling thread ([`Pipeline::run`]) or on its own
//!   ([`Pipeline::spawn`], a [`RunHandle`]), until its input ends, a packet count, a
//!   duration ([`PipelineConfigBuilder::run_for`]) or a [`StopToken`].
//! - [`copy`]: copy routines (libc, `rep movsb`, AVX2, AVX-512, non-temporal, auto).
//! - [`BlockSource`]: live ([`ring::RxRing`]), synthetic ([`ring::SyntheticRing`]) and file
//!   ([`pcapfile::FileRing`]) rings through the same code.
//! - `filter` (feature `bpf-compile`, needs libpcap): tcpdump expressions compiled to BPF.
//!
//! Features: `bpf-compile` (libpcap filter compiler), `test-support` (benchmark scaffolding:
//! the memcmp variants; not part of the API). Without them the library needs no C library.
//! The `zcap` sniffer is a crate of its own (`zcap/`) over this one; flows counted in the
//! kernel are zcrx-kflows'.
//!
//! A delivered packet cannot leave its handler call, so it can never outlive its lease:
//!
//! ```compile_fail,E0521
//! use zcrx_capture::{Pipeline, PipelineConfig};
//! use zcrx_capture::ring::{Frame, SyntheticRing};
//! let ring = SyntheticRing::builder().build(vec![Frame::new(vec![0u8; 60])]).unwrap();
//! let kept = std::sync::Mutex::new(Vec::<&[u8]>::new());
//! Pipeline::new(&ring, PipelineConfig::default())
//!     .run(|_| |d: &zcrx_capture::Delivered<'_>| kept.lock().unwrap().push(d.data()), zcrx_capture::Hooks::new())
//!     .unwrap();
//! ```
// docs.rs (`--cfg docsrs`, nightly): mark what a feature gates.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

// The crate README's code is compiled as a doctest, so what it shows keeps working.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

// Unsafe code is denied in every module (the workspace's lints) but the copy routines
// (`copy::arch::x86_64`, and the benchmarks' `copy::memcmp`) and filter's one libpcap call
// (`filter::sys`), which allow it where they are declared.
pub mod copy;
#[cfg(feature = "bpf-compile")]
pub mod filter;
pub mod pcapfile;
mod pipeline;
mod source;

pub use pipeline::{
    ConfigError, Consumer, ConsumerStats, Consumers, Delivered, Delivery, FlowTag, Hooks, Pipeline,
    PipelineConfig, PipelineConfigBuilder, PipelineError, PipelineStats, Run, RunHandle, Setting,
    Steering, StopToken, MAX_CONSUMERS,
};

pub use source::BlockSource;
/// The flow cache this crate steers with: its types appear in this crate's API
/// ([`Steering::Flows`] takes a [`flowcache::FlowTableConfig`], the hooks see
/// [`flowcache::FlowRecord`]s), so an embedder needs no second dependency to name them.
pub use zcrx_flowcache as flowcache;
/// The ring this crate reads: its types appear in this crate's API ([`BlockSource`] is
/// implemented for [`ring::RxRing`] and [`ring::SyntheticRing`]; [`Delivered::meta`] is a
/// [`ring::PacketMeta`]).
pub use zcrx_ring as ring;
