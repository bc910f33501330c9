//! zcrx-capture: the stage, consumers, delivery and copy routines, and the `zcap` sniffer.
//!
//! Not implemented yet: this crate is tracked by issues 4 and 5. It exists now only so the
//! workspace layout of `DESIGN.md` is complete.
