//! Signals: SIGINT and SIGTERM stop the capture cleanly; SIGUSR1 prints the counts so far
//! on standard error, the capture going on (as tcpdump does).
//!
//! SIGUSR1 is caught from before zcap says it is listening (its default action would
//! end the process) to the end of the capture. A thread of the capture's scope waits for it
//! and prints what the capture published: the packets captured (published after every ring
//! block, so the count is exact once a block is done), and what `counts` adds.

use std::thread::Scope;

use anyhow::{Context, Result};
use signal_hook::iterator::{Handle, Signals};
use zcrx_capture::StopToken;

/// A stop token that SIGINT and SIGTERM set from now on: the capture ends as at the end of
/// its input (the output flushed, the flows exported, the counts printed).
pub(crate) fn stop_on_signals() -> Result<StopToken> {
    let stop = StopToken::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.flag()).context("installing signal handlers")?;
    }
    Ok(stop)
}

/// SIGUSR1 caught (from now on) and not yet answered: [`Usr1::answer`] starts the thread
/// that answers it.
pub(crate) struct Usr1(Signals);

impl Usr1 {
    /// Catches SIGUSR1 from now on (the signals that come before [`Usr1::answer`] wait for it).
    pub(crate) fn catch() -> Result<Usr1> {
        Signals::new([signal_hook::consts::SIGUSR1])
            .map(Usr1)
            .context("installing the SIGUSR1 handler")
    }

    /// Until the returned [`Answering`] is dropped, each SIGUSR1 prints `counts()` (lines,
    /// each ending in a newline) to standard error in one write.
    pub(crate) fn answer<'s, 'e: 's>(
        self,
        s: &'s Scope<'s, 'e>,
        counts: impl Fn() -> String + Send + 's,
    ) -> Answering {
        let mut signals = self.0;
        let handle = signals.handle();
        s.spawn(move || {
            for _ in signals.forever() {
                eprint!("{}", counts());
            }
        });
        Answering(handle)
    }
}

/// tcpdump's three counts, a line each: what SIGUSR1 prints and what the closing counts
/// start with.
pub(crate) fn tcpdump_counts(captured: u64, received: u64, dropped: u64) -> String {
    format!(
        "{captured} packets captured\n{received} packets received by filter\n{dropped} packets dropped by kernel\n"
    )
}

/// Answers SIGUSR1 while it lives; dropped, the answering thread ends (SIGUSR1 stays caught,
/// and ignored, until zcap exits).
pub(crate) struct Answering(Handle);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.close();
    }
}
