//! A run on a thread of its own: [`Pipeline::spawn`] and the [`RunHandle`] it returns.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::fault::panic_message;
use super::{Consumer, Hooks, Pipeline, PipelineConfig, PipelineError, Run, StopToken};
use crate::source::BlockSource;

impl<S: BlockSource + Send + 'static> Pipeline<'static, S> {
    /// Starts a run on a thread of its own over a shared `source`, and returns its handle:
    /// stop it ([`RunHandle::stop`], or its [`StopToken`]), then [`join`](RunHandle::join) it
    /// for what [`Pipeline::run`] would have returned.
    ///
    /// `make_consumer` and `make_hooks` are called on the new thread (so the hooks need not
    /// be `Send`; pass `Hooks::new` for none). The flow table is built there too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zcrx_capture::{Delivered, Hooks, Pipeline, PipelineConfig};
    /// use zcrx_capture::ring::{Frame, SyntheticRing};
    /// let ring = SyntheticRing::builder().build(vec![Frame::new(vec![0u8; 60]); 100])?;
    /// let handle = Pipeline::spawn(
    ///     Arc::new(ring),
    ///     PipelineConfig::default(),
    ///     |_| |_: &Delivered<'_>| {},
    ///     Hooks::new,
    /// )?;
    /// let run = handle.join()?; // a synthetic ring ends by itself; a live one needs `stop()`
    /// assert_eq!(run.stats.packets, 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spawn<C, M, H>(
        source: Arc<S>,
        config: PipelineConfig,
        make_consumer: M,
        make_hooks: H,
    ) -> Result<RunHandle<C::Output>, PipelineError>
    where
        C: Consumer,
        C::Output: Send + 'static,
        M: FnMut(usize) -> C + Send + 'static,
        H: FnOnce() -> Hooks<'static> + Send + 'static,
    {
        let stop = StopToken::new();
        let token = stop.clone();
        let thread = std::thread::Builder::new()
            .name("zcrx-pipeline".into())
            .spawn(move || {
                let pipeline = Pipeline::new(&*source, config).with_stop(token);
                pipeline.run(make_consumer, make_hooks())
            })
            .map_err(PipelineError::Spawn)?;
        Ok(RunHandle { thread, stop })
    }
}

/// A run on its own thread ([`Pipeline::spawn`]): stop it, then join it for its result.
/// Dropping the handle detaches the run, which goes on until its input ends, its limits
/// are reached or its stop token is stopped.
#[derive(Debug)]
#[must_use = "a spawned run goes on until it is stopped; join it for its result"]
pub struct RunHandle<O> {
    thread: JoinHandle<Result<Run<O>, PipelineError>>,
    stop: StopToken,
}

impl<O> RunHandle<O> {
    /// The token that stops this run (to hand to a signal handler or another thread).
    pub fn stop_token(&self) -> StopToken {
        self.stop.clone()
    }

    /// Asks the run to stop: the blocks already filled are still delivered (see
    /// [`Pipeline`]); [`join`](RunHandle::join) waits for that.
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
