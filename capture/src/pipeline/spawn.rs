//! A run on a thread of its own: the [`RunHandle`] that
//! [`Pipeline::spawn`](crate::Pipeline::spawn) returns.

use std::thread::JoinHandle;

use super::consumer::StopToken;
use super::error::PipelineError;
use super::fault::panic_message;
use super::stats::Run;

/// A run on its own thread ([`Pipeline::spawn`](crate::Pipeline::spawn)): stop it, then
/// join it for its result.
/// Dropping the handle detaches the run, which goes on until its input ends, its limits
/// are reached or its stop token is stopped.
#[derive(Debug)]
#[must_use = "a spawned run goes on until it is stopped; join it for its result"]
pub struct RunHandle<O> {
    thread: JoinHandle<Result<Run<O>, PipelineError>>,
    stop: StopToken,
}

impl<O> RunHandle<O> {
    pub(super) fn new(thread: JoinHandle<Result<Run<O>, PipelineError>>, stop: StopToken) -> Self {
        RunHandle { thread, stop }
    }

    /// The token that stops this run (to hand to a signal handler or another thread).
    pub fn stop_token(&self) -> StopToken {
        self.stop.clone()
    }

    /// Asks the run to stop: the blocks already filled are still delivered (see
    /// [`Pipeline`](crate::Pipeline)); [`join`](RunHandle::join) waits for that.
    pub fn stop(&self) {
        self.stop.stop();
    }

    /// The run has ended (its result waits for [`join`](RunHandle::join)).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the run to end and returns its result. A panic of the spawned run's
    /// `make_consumer` or `make_hooks` is an error too (`CallbackPanicked` of `setup`), as
    /// the handlers' panics are.
    pub fn join(self) -> Result<Run<O>, PipelineError> {
        self.thread.join().unwrap_or_else(|p| {
            Err(PipelineError::CallbackPanicked {
                callback: "setup",
                message: panic_message(&*p),
            })
        })
    }

    /// Stops the run and waits for it: [`stop`](RunHandle::stop), then
    /// [`join`](RunHandle::join).
    pub fn stop_and_join(self) -> Result<Run<O>, PipelineError> {
        self.stop();
        self.join()
    }
}
