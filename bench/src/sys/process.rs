//! Processes rxbench starts and watches: waiting with their resource usage, signals, their
//! /proc/PID/stat fields, the open-file limit.

use std::io;
use std::mem::zeroed;

use super::errno::check;

/// Waits for child `pid` and returns (exit code or -signal, user ns, system ns) from wait4.
pub fn wait_rusage(pid: u32) -> io::Result<(i32, u64, u64)> {
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage; wait4 fills it.
    let mut ru: libc::rusage = unsafe { zeroed() };
    loop {
        // SAFETY: valid pointers; `pid` is our child, reaped exactly once here.
        let r = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut ru) };
        if r == pid as i32 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Ok((code, ns(ru.ru_utime), ns(ru.ru_stime)))
}

/// Sends SIGINT to `pid`.
pub fn interrupt(pid: u32) -> io::Result<()> {
    // SAFETY: plain syscall.
    check(unsafe { libc::kill(pid as i32, libc::SIGINT) })?;
    Ok(())
}

/// The name of a signal rxbench takes.
pub fn signal_name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Field `n` of a `/proc/PID/stat` line, numbered as proc(5) numbers them (3 and up): the
/// fields are counted after the command name's last ')', since the name (field 2) may hold
/// spaces and parentheses.
pub fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(n.checked_sub(3)?)
}

/// The command name (field 2) of a `/proc/PID/stat` line, without its parentheses.
pub fn stat_comm(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// Kills (SIGKILL) every child process of this one (read from /proc: field 4 of each
/// process's stat is its parent).
pub fn kill_children() {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat_field(&stat, 4).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) {
            // SAFETY: plain syscall on a pid read just now.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Raises the soft open-file limit to the hard limit (the sweep opens thousands of sockets).
pub fn raise_nofile() -> io::Result<u64> {
    // SAFETY: all-zero is a valid rlimit; getrlimit fills it.
    let mut r: libc::rlimit = unsafe { zeroed() };
    // SAFETY: valid pointer.
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) })?;
    r.rlim_cur = r.rlim_max;
    // SAFETY: valid pointer.
    check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) })?;
    Ok(r.rlim_cur)
}
