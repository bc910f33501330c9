//! Ctrl-C (SIGINT), SIGTERM and SIGHUP. While a command holds a netns lab or the receiving
//! CPU's isolation ([`Lab`]), the first signal stops it before its next trial: the trial (or
//! run) the signal fell in is dropped (a sniffer in the terminal's process group got the
//! Ctrl-C too), `capacity` and `saturation` write what they measured before it, and
//! everything the run set up is undone on the way out through the usual Drops — the lab's
//! namespaces, the receiving CPU's isolation ([`crate::lab::isolate`]), /dev/cpu_dma_latency.
//! A second signal stops at once: the isolation's record is undone, the run's child
//! processes (sniffers) are killed and its namespaces deleted. Either way rxbench then dies
//! of the signal, as a command without a lab does at the first, so that a shell loop around
//! it stops too.
//!
//! The signals are caught by signal-hook's handler, which only wakes a thread of rxbench's
//! own through a pipe: nothing else runs in a signal handler. No signal is blocked, so the
//! sniffers rxbench starts inherit no mask (a blocked SIGINT would be inherited across
//! `exec`, and rxbench stops them with SIGINT), and caught signals are default again in them.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use anyhow::{Context, Result};

use crate::sys;

/// The signal that asked the command to stop (0: none): the commands stop at their next
/// check.
static STOP: AtomicI32 = AtomicI32::new(0);

/// Labs and isolations alive ([`Lab::hold`]).
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
        let held = LABS.load(Ordering::SeqCst) > 0;
        if held
            && STOP
                .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            eprintln!(
                "\nrxbench: {}: stopping after the trial in progress (the lab and the CPUs are given back); again to stop at once",
                sys::signal_name(sig)
            );
            continue;
        }
        if held || STOP.load(Ordering::SeqCst) != 0 {
            eprintln!("rxbench: {}: stopping at once", sys::signal_name(sig));
            at_once(sig);
        }
        die(sig);
    }
}

/// What the Drops of a graceful stop would do, done from the signal thread: the isolation's
/// record undone (after a scan or restore in progress, and with no move after it), the
/// children killed, this process's lab namespaces deleted; then the process dies.
fn at_once(sig: libc::c_int) -> ! {
    let (_held_until_exit, undone) = crate::lab::isolate::undo_and_hold();
    if let Err(e) = undone {
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
    die(sig)
}

/// Dies of `sig` (its default action), as the process would have without this module.
pub fn die(sig: libc::c_int) -> ! {
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    std::process::exit(128 + sig)
}

/// `Err(Interrupted)` once a signal asked the command to stop: called before each trial
/// and after it (the trial a signal fell in is not kept).
pub fn check() -> Result<()> {
    if STOP.load(Ordering::SeqCst) != 0 {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// The signal that stopped the run, if one did.
pub fn stopped() -> Option<libc::c_int> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Held while a netns lab or the receiving CPU's isolation exists: a signal meanwhile
/// stops the command gracefully.
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
