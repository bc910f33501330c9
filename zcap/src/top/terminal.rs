//! The terminal while the view runs, and its restoration however the view ends: `q`,
//! SIGINT/SIGTERM (they stop the capture; the view then returns), an error, or a panic
//! (a hook restores the terminal before the message is printed).
//!
//! [`Screen::prepare`] runs before the sandbox (it may open `/dev/tty`, and crossterm's
//! event reader makes a socket pair for SIGWINCH): raw mode, and standard error sent to a
//! pipe, so that nothing zcap says while the view is up (the "listening" line, a warning)
//! scribbles over it; what came is said again once the terminal is back.
//! [`Screen::enter`] then switches to the alternate screen.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use anyhow::{Context, Result};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, event, execute, terminal};
use ratatui::Terminal;

/// Whether the terminal is changed now (raw mode, maybe the alternate screen).
static CHANGED: AtomicBool = AtomicBool::new(false);
/// Standard error as it was, while it goes to the pipe.
static SAVED_STDERR: Mutex<Option<OwnedFd>> = Mutex::new(None);
static PANIC_HOOK: Once = Once::new();
/// What the view keeps of standard error to say again when it ends, bytes.
const MAX_SAID: usize = 1 << 20;

/// The terminal set up for the view; restored when dropped.
pub(crate) struct Screen {
    /// The capturing host's addresses (read before the sandbox: a netlink socket).
    pub(crate) locals: HashSet<IpAddr>,
    /// The reader of the processes that own local sockets (a live capture's).
    pub(crate) owners: Option<super::procs::Reader>,
    /// What zcap writes to standard error meanwhile.
    errors: Option<std::fs::File>,
    said: Vec<u8>,
}

impl Screen {
    /// Raw mode, standard error to a pipe, the key reader started; for a `live` capture,
    /// the host's addresses read and the socket owners' reader started. Standard output is
    /// a terminal (checked before).
    pub(crate) fn prepare(live: bool) -> Result<Screen> {
        PANIC_HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        terminal::enable_raw_mode().context("--top: the terminal's raw mode")?;
        CHANGED.store(true, Ordering::SeqCst);
        let mut screen = Screen {
            locals: if live {
                super::procs::local_addresses()
            } else {
                HashSet::new()
            },
            owners: if live {
                super::procs::Reader::start()
            } else {
                None
            },
            errors: None,
            said: Vec::new(),
        };
        // From here on, dropping `screen` restores the terminal.
        let (r, w) = nix::unistd::pipe().context("--top: a pipe for standard error")?;
        nix::fcntl::fcntl(
            &r,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .context("--top: the standard error pipe")?;
        // Room for what is said before the view drains it (a file is read first): a full
        // pipe would hold up the thread that writes. Best effort (the system's limit).
        let _ = nix::fcntl::fcntl(&w, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
        let saved = nix::unistd::dup(std::io::stderr()).context("--top: standard error")?;
        nix::unistd::dup2_stderr(&w).context("--top: standard error")?;
        *SAVED_STDERR.lock().unwrap_or_else(|p| p.into_inner()) = Some(saved);
        screen.errors = Some(std::fs::File::from(r));
        event::poll(Duration::ZERO).context("--top: reading keys from the terminal")?;
        Ok(screen)
    }

    /// The alternate screen, the cursor hidden: the terminal to draw on.
    pub(crate) fn enter(&mut self) -> Result<Terminal<CrosstermBackend<std::io::Stdout>>> {
        let mut out = std::io::stdout();
        execute!(out, terminal::EnterAlternateScreen, cursor::Hide)
            .context("--top: the alternate screen")?;
        Terminal::new(CrosstermBackend::new(out)).context("--top: the terminal")
    }

    /// The lines written to standard error since the last call (non-blocking).
    pub(crate) fn messages(&mut self) -> Vec<String> {
        let Some(f) = self.errors.as_mut() else {
            return Vec::new();
        };
        let mut buf = [0u8; 4096];
        let start = self.said.len();
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            self.said.extend_from_slice(&buf[..n]);
        }
        let new: Vec<String> = String::from_utf8_lossy(&self.said[start..])
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        // Bounded: what is said again at the end is the last MAX_SAID bytes.
        if self.said.len() > MAX_SAID {
            let cut = self.said.len() - MAX_SAID;
            self.said.drain(..cut);
        }
        new
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.messages();
        restore();
        // What zcap said meanwhile, now on the real standard error.
        let _ = std::io::stderr().write_all(&self.said);
    }
}

/// The terminal as it was: main screen, cursor shown, cooked mode, standard error back.
/// Does nothing the second time.
fn restore() {
    if !CHANGED.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout();
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
    if let Some(saved) = SAVED_STDERR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        let _ = nix::unistd::dup2_stderr(&saved);
    }
}
