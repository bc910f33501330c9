//! `-z` commands, run by a process of their own: the hook runner.
//!
//! Once set up, the capturing process may not start programs: its seccomp filter has no
//! `execve` and no process creation, so that a parser bug cannot run one. So before it is
//! confined ([`crate::sandbox::confine`]), zcap starts itself again as the hook runner
//! (`/proc/self/exe --hook-runner CMD DIR`, with none of zcap's descriptors but its standard
//! error, its capabilities dropped at once, under the ordinary scheduler). The capture sends
//! it the name of each file it closes on a pipe (NUL-terminated); the runner runs `CMD FILE`
//! for each, at most [`MAX_HOOKS`] at once (the next waits for the oldest), says on standard
//! error how each one that failed ended, and answers a byte per started command (`S`) and
//! per finished or unstartable one (`0` success, `1` failure) for the `zcap_hooks_run` and
//! `zcap_hooks_failed` counters. When the pipe closes (the capture's end), it waits for
//! every command and exits.
//!
//! A command's standard input is `/dev/null` and its standard output the runner's standard
//! error: it can neither read the names meant for the runner (as `ssh` without `-n` would)
//! nor write into its answers.
//!
//! The runner is not sandboxed: the commands are the operator's, run with the user zcap
//! runs as (after `-Z`), and may need what the capture must not have (other programs,
//! other directories, the network). It takes from the capture only file names, and runs
//! the command on a name only if it lies in the `-w` directory and climbs out of it by no
//! `..`: a compromised capture can make it run the operator's command on another of its
//! own files, nothing else.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::metrics;

/// `-z` commands that may run at once: the next waits for the oldest to end.
pub(crate) const MAX_HOOKS: usize = 16;

/// The hidden first argument that makes zcap the hook runner.
pub(crate) const RUNNER_FLAG: &str = "--hook-runner";

/// The capture's side of the runner.
struct Runner {
    process: Child,
    names: Option<ChildStdin>,
    results: ChildStdout,
    cmd: String,
}

/// The process' runner, once started (one capture per process).
static RUNNER: Mutex<Option<Runner>> = Mutex::new(None);

/// Starts the runner for `-z CMD` on files under `dir`. Called once, before the sandbox.
pub(crate) fn start(cmd: &str, dir: &Path) -> Result<()> {
    let mut command = Command::new("/proc/self/exe");
    command
        .arg(RUNNER_FLAG)
        .arg(cmd)
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    crate::system::ordinary_scheduler_in_child(&mut command);
    let mut process = command
        .spawn()
        .context("-z: starting the hook runner (zcap itself, from /proc/self/exe)")?;
    let names = process.stdin.take();
    let results = process.stdout.take().expect("piped");
    nix::fcntl::fcntl(
        &results,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .context("-z: the hook runner's pipe")?;
    *lock() = Some(Runner {
        process,
        names,
        results,
        cmd: cmd.to_string(),
    });
    Ok(())
}

fn lock() -> std::sync::MutexGuard<'static, Option<Runner>> {
    RUNNER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `-z` on `file`, just closed (through the runner).
pub(crate) fn run(file: &str) {
    let mut guard = lock();
    let Some(r) = guard.as_mut() else {
        eprintln!("zcap: -z: no hook runner for {file}");
        metrics::add(&metrics::EVENTS.hooks_failed, 1);
        return;
    };
    let mut message = file.as_bytes().to_vec();
    message.push(0);
    let sent = r.names.as_mut().map(|n| n.write_all(&message));
    match sent {
        Some(Ok(())) => {}
        Some(Err(e)) => {
            eprintln!("zcap: -z {} {file}: the hook runner is gone: {e}", r.cmd);
            metrics::add(&metrics::EVENTS.hooks_failed, 1);
        }
        None => {}
    }
    r.count_results();
}

/// Counts the commands that ended since the last look (non-blocking).
pub(crate) fn poll() {
    if let Some(r) = lock().as_mut() {
        r.count_results();
    }
}

/// The capture's end: the runner's input closed, its answers counted until it exits (it
/// waits for every command first).
pub(crate) fn finish() {
    let Some(mut r) = lock().take() else {
        return;
    };
    r.names = None;
    let _ = nix::fcntl::fcntl(
        &r.results,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
    );
    let mut rest = Vec::new();
    let _ = r.results.read_to_end(&mut rest);
    count(&rest);
    match r.process.wait() {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("zcap: -z: the hook runner ended: {s}"),
        Err(e) => eprintln!("zcap: -z: waiting for the hook runner: {e}"),
    }
}

impl Runner {
    fn count_results(&mut self) {
        let mut buf = [0u8; 256];
        loop {
            match self.results.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => count(&buf[..n]),
            }
        }
    }
}

fn count(answers: &[u8]) {
    let of = |answer: u8| answers.iter().filter(|b| **b == answer).count() as u64;
    metrics::add(&metrics::EVENTS.hooks_run, of(b'S'));
    metrics::add(&metrics::EVENTS.hooks_failed, of(b'1'));
}

/// A `-z` command running on a closed file.
struct Hook {
    child: Child,
    file: String,
}

/// The runner's life (`zcap --hook-runner CMD DIR`): returns its exit code.
pub(crate) fn runner_main(args: &[String]) -> i32 {
    let [cmd, dir] = args else {
        eprintln!("zcap {RUNNER_FLAG}: CMD DIR expected");
        return 2;
    };
    if let Err(e) = crate::system::drop_capabilities() {
        eprintln!("zcap: -z: the hook runner: {e:#}");
        return 1;
    }
    let dir = PathBuf::from(dir);
    let mut input = std::io::stdin().lock();
    let mut answers = std::io::stdout().lock();
    let mut running: VecDeque<Hook> = VecDeque::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let ready = wait_readable(&input, Duration::from_millis(200));
        reap(&mut running, cmd, &mut answers, false);
        if !ready {
            continue;
        }
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|b| *b == 0) {
            let name: Vec<u8> = pending.drain(..=end).take(end).collect();
            let file = String::from_utf8_lossy(&name).into_owned();
            while running.len() >= MAX_HOOKS {
                let oldest = running.pop_front().expect("not empty");
                finished(oldest, cmd, &mut answers);
            }
            if let Some(h) = spawn(cmd, &file, &dir, &mut answers) {
                running.push_back(h);
            }
        }
        if pending.len() > 1 << 16 {
            eprintln!("zcap: -z: the hook runner got a name longer than 64 KiB; ignored");
            pending.clear();
        }
    }
    reap(&mut running, cmd, &mut answers, true);
    0
}

/// Whether `input` has bytes (or its end) within `timeout`.
fn wait_readable(input: &impl AsFd, timeout: Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
    let t = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    matches!(poll(&mut fds, t), Ok(n) if n > 0)
}

/// The commands that ended (all of them, waiting, with `all`), answered.
fn reap(running: &mut VecDeque<Hook>, cmd: &str, answers: &mut impl Write, all: bool) {
    if all {
        while let Some(h) = running.pop_front() {
            finished(h, cmd, answers);
        }
        return;
    }
    let mut i = 0;
    while i < running.len() {
        match running[i].child.try_wait() {
            Ok(None) => i += 1,
            _ => {
                let h = running.remove(i).expect("in range");
                finished(h, cmd, answers);
            }
        }
    }
}

/// Waits for `h` (ended already, or the oldest of too many), says how it ended if not well,
/// and answers.
fn finished(mut h: Hook, cmd: &str, answers: &mut impl Write) {
    let ok = match h.child.wait() {
        Ok(s) if s.success() => true,
        Ok(s) => {
            eprintln!("zcap: -z {cmd} {}: {s}", h.file);
            false
        }
        Err(e) => {
            eprintln!("zcap: -z {cmd} {}: waiting for it: {e}", h.file);
            false
        }
    };
    let _ = answers.write_all(if ok { b"0" } else { b"1" });
    let _ = answers.flush();
}

/// Starts `cmd file` if `file` lies in `dir`; otherwise (or if it cannot start) says so and
/// answers a failure.
fn spawn(cmd: &str, file: &str, dir: &Path, answers: &mut impl Write) -> Option<Hook> {
    let started = if within(Path::new(file), dir) {
        std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|err| {
                Command::new(cmd)
                    .arg(file)
                    .stdin(Stdio::null())
                    .stdout(err)
                    .spawn()
            })
            .map_err(|e| e.to_string())
    } else {
        Err(format!("not under {}: not run", dir.display()))
    };
    match started {
        Ok(child) => {
            let _ = answers.write_all(b"S");
            let _ = answers.flush();
            Some(Hook {
                child,
                file: file.to_string(),
            })
        }
        Err(e) => {
            eprintln!("zcap: -z {cmd} {file}: {e}");
            let _ = answers.write_all(b"1");
            let _ = answers.flush();
            None
        }
    }
}

/// Whether `file` names something under `dir` (both as given, `.` for the working
/// directory) without a `..`.
fn within(file: &Path, dir: &Path) -> bool {
    if file.components().any(|c| c == Component::ParentDir) {
        return false;
    }
    let dir = dir.strip_prefix(".").unwrap_or(dir);
    let file = file.strip_prefix(".").unwrap_or(file);
    match dir.as_os_str().is_empty() {
        true => !file.is_absolute(),
        false => file.starts_with(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::within;
    use std::path::Path;

    #[test]
    fn names_outside_the_directory_are_not_run() {
        let w = |f: &str, d: &str| within(Path::new(f), Path::new(d));
        assert!(w("cap.pcap1", "."));
        assert!(w("./cap.pcap1", "."));
        assert!(w("/data/cap/x.pcap", "/data/cap"));
        assert!(w("/data/cap/2026/x.pcap", "/data/cap"));
        assert!(!w("/data/other/x.pcap", "/data/cap"));
        assert!(!w("/data/cap/../../etc/passwd", "/data/cap"));
        assert!(!w("/etc/passwd", "."));
        assert!(!w("../x", "."));
    }
}
