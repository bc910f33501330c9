//! zcrx-bench: the `rxbench` receive benchmark.
//!
//! Not implemented yet: this crate is tracked by issue 6. It exists now only so the
//! workspace layout of `DESIGN.md` is complete.
