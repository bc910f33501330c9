//! Faults: a panic in a consumer or a hook stops the run with an error that names it, never
//! a stuck ring.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use zcrx_flowcache::{FlowEnd, FlowTable};

use super::consumer::Hooks;
use super::error::PipelineError;

/// What the stage thread is running, so that a panic is blamed on the right party.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Stage,
    FlowEnd,
    Tick,
    Inline,
}

/// The message of a panic payload (`panic!` with a literal or a format string).
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not a string)".to_string()
    }
}

/// The fault state of one run.
pub(super) struct Faults {
    pub(super) phase: Cell<Phase>,
    /// Set by a consumer thread whose consumer panicked: the stage stops at the next block.
    pub(super) halt: AtomicBool,
}

impl Faults {
    pub(super) fn new() -> Self {
        Faults {
            phase: Cell::new(Phase::Stage),
            halt: AtomicBool::new(false),
        }
    }

    /// Runs the stage; a panic in it becomes the error of whoever was running. Unwinding
    /// drops the block being walked and its batches, so nothing stays held.
    pub(super) fn stage(
        &self,
        f: impl FnOnce() -> Result<(), PipelineError>,
    ) -> Result<(), PipelineError> {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
            let message = panic_message(&*p);
            Err(match self.phase.get() {
                Phase::FlowEnd => PipelineError::CallbackPanicked {
                    callback: "flow-end",
                    message,
                },
                Phase::Tick => PipelineError::CallbackPanicked {
                    callback: "tick",
                    message,
                },
                Phase::Inline => PipelineError::ConsumerPanicked {
                    consumer: 0,
                    message,
                },
                // A bug of ours: still an error with the message, never a stuck ring.
                Phase::Stage => PipelineError::CallbackPanicked {
                    callback: "stage",
                    message,
                },
            })
        })
    }

    pub(super) fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed)
    }
}

/// Runs consumer `i` (on its thread); a panic sets `halt`, which stops the stage, and
/// becomes the consumer's error.
pub(super) fn consumer<T>(
    halt: &AtomicBool,
    i: usize,
    f: impl FnOnce() -> T,
) -> Result<T, PipelineError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        // Relaxed: the stage only has to see it eventually (at a block boundary); the error
        // itself travels through the thread's join.
        halt.store(true, Ordering::Relaxed);
        PipelineError::ConsumerPanicked {
            consumer: i,
            message: panic_message(&*p),
        }
    })
}

/// The caller's hooks, called on the stage thread with the phase set around them.
pub(super) struct StageHooks<'a, 'h> {
    pub(super) hooks: &'a mut Hooks<'h>,
    pub(super) phase: &'a Cell<Phase>,
}

impl StageHooks<'_, '_> {
    pub(super) fn flow_end(&mut self, e: &FlowEnd) {
        self.phase.set(Phase::FlowEnd);
        (self.hooks.flow_end)(&e.record);
        (self.hooks.flow_ended)(e);
        self.phase.set(Phase::Stage);
    }
    pub(super) fn tick(&mut self, t: &FlowTable) {
        self.phase.set(Phase::Tick);
        (self.hooks.tick)(t);
        self.phase.set(Phase::Stage);
    }
}
