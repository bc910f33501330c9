//! zcrx-flowcache: header-only 5-tuple extraction and a bounded flow table.
//!
//! Not implemented yet: this crate is tracked by issue 3. It exists now only so the
//! workspace layout of `DESIGN.md` is complete.
#![forbid(unsafe_code)]
