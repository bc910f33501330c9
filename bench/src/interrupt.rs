//! Ctrl-C (SIGINT), SIGTERM and SIGHUP. While a command holds a netns lab ([`Lab`]), the
//! first signal stops it at the end of the trial in progress: that trial is dropped (a
//! sniffer in the terminal's process group got the Ctrl-C too), what was measured before it
//! is reported, and everything the run set up is undone on the way out — the lab's
//! namespaces, the receiving CPU's isolation ([`crate::isolate`]), /dev/cpu_dma_latency. A
//! second signal stops at once: the isolation's record is undone, the run's child processes
//! (sniffers) are killed and its namespaces deleted, then rxbench exits. A command without a
//! lab exits at the first signal, as it would without this module.
//!
//! The signals are caught by signal-hook's handler, which only wakes a thread of rxbench's
//! own through a pipe: nothing else runs in a signal handler. No signal is blocked, so the
//! sniffers rxbench starts inherit no mask (a blocked SIGINT would be inherited across
//! `exec`, and rxbench stops them with SIGINT), and caught signals are default again in them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context, Result};

use crate::sys;

/// Set by the first signal while a lab exists: the commands stop at their next check.
static STOP: AtomicBool = AtomicBool::new(false);

/// Labs alive ([`Lab::hold`]).
static LABS: AtomicUsize = AtomicUsize::new(0);

/// The signal thread's name.
pub const THREAD: &str = "rxbench-signals";

/// The signals taken.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The error of a command stopped by a signal.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted: stopped before the next trial, the lab and the CPUs given back")
    }
}

impl std::error::Error for Interrupted {}

/// Catches the signals and starts the thread that takes them.
pub fn install() -> Result<()> {
    let signals = signal_hook::iterator::Signals::new(SIGNALS)
        .context("catching SIGINT, SIGTERM and SIGHUP")?;
    std::thread::Builder::new()
        .name(THREAD.into())
        .spawn(move || take(signals))
        .context("starting the signal thread")?;
    Ok(())
}

/// The signal thread's loop.
fn take(mut signals: signal_hook::iterator::Signals) {
    for sig in signals.forever() {
        if LABS.load(Ordering::SeqCst) > 0 && !STOP.swap(true, Ordering::SeqCst) {
            eprintln!(
                "\nrxbench: {}: stopping after the trial in progress (the lab and the CPUs are given back, what was measured is written); again to stop at once",
                sys::signal_name(sig)
            );
            continue;
        }
        if LABS.load(Ordering::SeqCst) > 0 {
            eprintln!("rxbench: {}: stopping at once", sys::signal_name(sig));
            at_once();
        }
        std::process::exit(128 + sig);
    }
}

/// What the Drops of a graceful stop would do, done from the signal thread: the isolation's
/// record undone, the children killed, this process's lab namespaces deleted.
fn at_once() {
    if let Err(e) = crate::isolate::undo_left_over() {
        eprintln!("rxbench: {e:#}");
    }
    sys::kill_children();
    let prefix = format!("zcrx{}x", std::process::id() % 1_000_000);
    if let Ok(list) = zcrx_ring::lab::ip(&["netns", "list"]) {
        for ns in list.lines().filter_map(|l| l.split_whitespace().next()) {
            if ns.starts_with(&prefix) {
                let _ = zcrx_ring::lab::ip(&["netns", "del", ns]);
            }
        }
    }
}

/// `Err(Interrupted)` once a signal asked the command to stop: called before each trial
/// and after it (the trial a signal fell in is not kept).
pub fn check() -> Result<()> {
    if STOP.load(Ordering::SeqCst) {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// Whether a signal stopped the run (an error meanwhile is the signal's doing: a sniffer
/// that got the terminal's Ctrl-C, say).
pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Held beside a netns lab: while one exists, a signal stops the command gracefully.
#[derive(Debug)]
pub struct Lab(());

impl Lab {
    /// Counts a lab as alive until the guard drops.
    pub fn hold() -> Lab {
        LABS.fetch_add(1, Ordering::SeqCst);
        Lab(())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        LABS.fetch_sub(1, Ordering::SeqCst);
    }
}
