//! What zcap asks of the system besides packets: privilege drop (`-Z`, capabilities), the
//! real-time scheduler (and the lowest priority for the threads that serve network
//! clients), local time for file names, and the interface list. The only module of zcap
//! with unsafe code (libc calls nix does not wrap: sched_setscheduler, setpriority,
//! localtime_r, strftime; `fork` for the privilege separation; and the
//! `pre_exec` that puts `-z` hooks back under the ordinary scheduler).

use anyhow::{anyhow, bail, Context, Result};

/// The user a capture started as root becomes without `-Z`, if the system has it (the
/// Debian package makes it).
pub(crate) const DEFAULT_USER: &str = "zcap";

/// `-Z` as given, or its absence: `-Z root` keeps root (said); without `-Z`, root becomes
/// [`DEFAULT_USER`] if there is one, and is said to stay root otherwise; any other user is
/// [`drop_privileges`]' to become.
pub(crate) fn become_user(user: Option<&str>) -> Result<()> {
    let root = nix::unistd::geteuid().is_root();
    match user {
        Some("root") if root => {
            eprintln!("zcap: -Z root: running as root, as asked");
            Ok(())
        }
        Some(user) => drop_privileges(user),
        None if !root => Ok(()),
        None => match nix::unistd::User::from_name(DEFAULT_USER) {
            Ok(Some(_)) => drop_privileges(DEFAULT_USER),
            _ => {
                eprintln!(
                    "zcap: running as root: there is no user {DEFAULT_USER} to drop to (the Debian package makes it; or adduser --system --group --no-create-home {DEFAULT_USER}); give -Z USER, or -Z root to keep root knowingly"
                );
                Ok(())
            }
        },
    }
}

/// `-Z USER`: this process becomes USER (its groups reduced to USER's group), and zcap
/// checks that root cannot be regained.
pub(crate) fn drop_privileges(user: &str) -> Result<()> {
    use nix::unistd::{setgroups, setresgid, setresuid, User};
    let u = User::from_name(user)
        .context("looking up the user")?
        .ok_or_else(|| anyhow!("-Z {user}: no such user"))?;
    // The bounding set goes while CAP_SETPCAP is still there (after setresuid it is not):
    // nothing USER runs may regain a capability through a file's.
    if caps::has_cap(None, caps::CapSet::Effective, caps::Capability::CAP_SETPCAP).unwrap_or(false)
    {
        caps::clear(None, caps::CapSet::Bounding)
            .context("clearing the capability bounding set")?;
    }
    setgroups(&[u.gid]).context("setgroups (needs root)")?;
    setresgid(u.gid, u.gid, u.gid).context("setresgid")?;
    setresuid(u.uid, u.uid, u.uid).context("setresuid")?;
    if nix::unistd::getuid() != u.uid
        || nix::unistd::geteuid() != u.uid
        || nix::unistd::setuid(nix::unistd::Uid::from_raw(0)).is_ok()
    {
        bail!("-Z {user}: privileges were not dropped");
    }
    eprintln!(
        "zcap: dropped privileges to {user} (uid {}, gid {})",
        u.uid, u.gid
    );
    Ok(())
}

/// fork(2): `Some(child)` in the parent, `None` in the child. Refused unless the process
/// has one thread (a child of a threaded process may find another thread's lock held
/// forever).
pub(crate) fn fork() -> Result<Option<nix::unistd::Pid>> {
    let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
    if threads != 1 {
        bail!("internal: forking a process of {threads} threads");
    }
    // SAFETY: the process has one thread (checked above), so no lock or allocator state
    // of another thread is copied half-held into the child.
    match unsafe { nix::unistd::fork() }.context("fork")? {
        nix::unistd::ForkResult::Parent { child } => Ok(Some(child)),
        nix::unistd::ForkResult::Child => Ok(None),
    }
}

/// Ends this process at once with `code`, running nothing of the parent's it inherited
/// (no exit handlers, no buffered output flushed twice): how a child made by [`fork`] for
/// a task ends.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes an integer and does not return; it touches no memory of ours.
    unsafe { libc::_exit(code) }
}

/// Ignores SIGINT, SIGTERM, SIGHUP and SIGUSR1 (a helper process that ends when its capture
/// closes its input, not when the capture is told to stop).
#[cfg(feature = "kafka")]
pub(crate) fn ignore_stop_signals() -> nix::Result<()> {
    use nix::sys::signal::{signal, SigHandler, Signal};
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGUSR1,
    ] {
        // SAFETY: SIG_IGN installs no handler: nothing runs in signal context.
        unsafe { signal(s, SigHandler::SigIgn) }?;
    }
    Ok(())
}

/// Takes ownership of `fds`, descriptors the kernel just installed in this process (an
/// SCM_RIGHTS message received).
pub(crate) fn owned_fds(fds: &[std::os::fd::RawFd]) -> Vec<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    fds.iter()
        // SAFETY: each descriptor was created by the recvmsg that returned it, is open,
        // and nothing else in the process owns it.
        .map(|&fd| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
        .collect()
}

/// Makes descriptor `target` name what `with` names (dup2): whatever `target` named is
/// closed, atomically, and its owner now holds the new one.
pub(crate) fn replace_fd(
    with: std::os::fd::BorrowedFd<'_>,
    target: std::os::fd::BorrowedFd<'_>,
) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: both descriptors are open (borrowed); dup2 leaves `target` open, naming
    // `with`'s file, so its owner's later close is still of a descriptor it owns.
    if unsafe { libc::dup2(with.as_raw_fd(), target.as_raw_fd()) } < 0 {
        return Err(std::io::Error::last_os_error()).context("dup2");
    }
    Ok(())
}

/// Clears every capability set of this thread (the only one): the ambient set, the bounding
/// set (where CAP_SETPCAP allows: as root), then the inheritable, permitted and effective
/// sets. `/proc/PID/status` shows CapEff, CapPrm, CapInh and CapAmb 0 after.
pub(crate) fn drop_capabilities() -> Result<()> {
    use caps::CapSet;
    caps::clear(None, CapSet::Ambient).context("clearing the ambient capabilities")?;
    if caps::has_cap(None, CapSet::Effective, caps::Capability::CAP_SETPCAP).unwrap_or(false) {
        caps::clear(None, CapSet::Bounding).context("clearing the capability bounding set")?;
    }
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::clear(None, set).with_context(|| format!("clearing the {set:?} capabilities"))?;
    }
    Ok(())
}

/// `--rt-priority`: this thread, and every thread it starts from now on, under SCHED_FIFO
/// at `prio`.
pub(crate) fn realtime(prio: i32) -> Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        let e = std::io::Error::last_os_error();
        bail!("--rt-priority {prio}: sched_setscheduler(SCHED_FIFO): {e} (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= {prio})");
    }
    Ok(())
}

/// Makes `command`'s process run under the ordinary scheduler (SCHED_OTHER), whatever the
/// policy of the thread that starts it: a `-z` hook must not inherit `--rt-priority`.
pub(crate) fn ordinary_scheduler_in_child(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: it makes one system call (sched_setscheduler) on
    // a stack value and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            let param = libc::sched_param { sched_priority: 0 };
            if libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Puts the calling thread under the ordinary scheduler (SCHED_OTHER, whatever
/// `--rt-priority` gave the threads) at the lowest priority (nice 19): a thread that serves
/// a network client (a TLS handshake, a bcrypt) then runs only on CPU time the capture
/// leaves. Best effort: a thread that stays where it was still serves.
pub(crate) fn background_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for the call.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
    // SAFETY: on Linux a nice value belongs to a thread, and who = 0 names the calling one;
    // the call takes no pointer.
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
}

/// `-D`: the interfaces, numbered as tcpdump numbers them, with their state.
pub(crate) fn list_interfaces() -> Result<()> {
    let mut ifs: Vec<(u32, String, u32)> = Vec::new();
    for e in std::fs::read_dir("/sys/class/net").context("reading /sys/class/net")? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let read = |f: &str| {
            std::fs::read_to_string(format!("/sys/class/net/{name}/{f}")).unwrap_or_default()
        };
        let index = read("ifindex").trim().parse().unwrap_or(0);
        let flags =
            u32::from_str_radix(read("flags").trim().trim_start_matches("0x"), 16).unwrap_or(0);
        ifs.push((index, name, flags));
    }
    ifs.sort();
    for (i, (_, name, flags)) in ifs.iter().enumerate() {
        let mut f = Vec::new();
        if flags & 0x1 != 0 {
            f.push("Up");
        }
        if flags & 0x40 != 0 {
            f.push("Running");
        }
        if flags & 0x8 != 0 {
            f.push("Loopback");
        }
        println!("{}.{name} [{}]", i + 1, f.join(", "));
    }
    Ok(())
}

/// `strftime(template)` of `unix_seconds` in local time, as tcpdump names `-G` files (the C
/// library's own conversion, so every specifier means what it means to tcpdump).
pub(crate) fn strftime_local(template: &str, unix_seconds: i64) -> Result<String> {
    let c = std::ffi::CString::new(template).map_err(|_| anyhow!("-w: a NUL in the file name"))?;
    let t: libc::time_t = unix_seconds;
    // SAFETY: all-zero is a valid `tm`; localtime_r fills it from `t` (both live across the
    // call).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to `t` and `tm`.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        bail!("localtime_r failed for {unix_seconds}");
    }
    let mut buf = vec![0u8; 4096];
    // SAFETY: `buf` has `buf.len()` writable bytes; `c` is NUL-terminated; strftime writes at
    // most that many bytes, including the NUL, and returns the length without it.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), c.as_ptr(), &tm) };
    if n == 0 && !template.is_empty() {
        bail!("-w {template}: the file name does not fit in 4096 bytes after strftime");
    }
    buf.truncate(n);
    String::from_utf8(buf).map_err(|_| anyhow!("-w {template}: strftime gave no UTF-8"))
}
