//! The building blocks of zcap's seccomp filters and Landlock rulesets, and the sandboxes
//! of its two small processes: the monitor that keeps the packet sockets
//! ([`crate::privsep`]) and `--top`'s reader of socket owners (`top::procs`). The worker's
//! own sandbox, the large one, is `crate::sandbox`'s.

use std::collections::BTreeMap;

use anyhow::{anyhow, Context, Result};
use landlock::{Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, ABI};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The newest Landlock ABI zcap's rules are written for; an older kernel enforces what it
/// knows (best effort), which [`landlock()`] reports.
pub(crate) const LANDLOCK_ABI: ABI = ABI::V6;

/// The calls of the monitor ([`crate::privsep`]): its two sockets' messages, the packet
/// sockets' statistics, the connections it accepts for the worker, its signals (read from
/// a signalfd, passed on to the worker alone), waiting for the worker, standard error, memory, and randomness for the signatures it
/// makes for the worker (bcrypt and signing are otherwise computation alone).
pub(crate) const MONITOR_ALLOWED: &[(&str, i64)] = &[
    ("read", libc::SYS_read),
    ("write", libc::SYS_write),
    ("close", libc::SYS_close),
    // F_GETFD alone: the standard library's check, in debug builds, that a descriptor it
    // closes is open.
    ("fcntl", libc::SYS_fcntl),
    ("recvfrom", libc::SYS_recvfrom),
    ("sendto", libc::SYS_sendto),
    // Answers that carry a descriptor, on its channel alone; connections accepted on the
    // listeners alone.
    ("sendmsg", libc::SYS_sendmsg),
    ("accept4", libc::SYS_accept4),
    ("getsockopt", libc::SYS_getsockopt),
    ("ppoll", libc::SYS_ppoll),
    ("wait4", libc::SYS_wait4),
    ("kill", libc::SYS_kill),
    ("rt_sigprocmask", libc::SYS_rt_sigprocmask),
    ("rt_sigreturn", libc::SYS_rt_sigreturn),
    ("sigaltstack", libc::SYS_sigaltstack),
    ("brk", libc::SYS_brk),
    ("mmap", libc::SYS_mmap),
    ("munmap", libc::SYS_munmap),
    ("mremap", libc::SYS_mremap),
    ("madvise", libc::SYS_madvise),
    ("futex", libc::SYS_futex),
    ("clock_gettime", libc::SYS_clock_gettime),
    ("restart_syscall", libc::SYS_restart_syscall),
    // Signing for the worker: the salts and nonces of RSA-PSS and ECDSA.
    ("getrandom", libc::SYS_getrandom),
    ("exit", libc::SYS_exit),
    ("exit_group", libc::SYS_exit_group),
];

/// The calls the monitor adds when it may have to bind `--metrics`' port after the split
/// (it was taken at start): a TCP listener made and bound, non-blocking, and the epoll
/// instance that watches it for the worker.
pub(crate) const MONITOR_REBIND: &[(&str, i64)] = &[
    ("socket", libc::SYS_socket),
    ("setsockopt", libc::SYS_setsockopt),
    ("bind", libc::SYS_bind),
    ("listen", libc::SYS_listen),
    ("getsockname", libc::SYS_getsockname),
    ("ioctl", libc::SYS_ioctl),
    ("epoll_create1", libc::SYS_epoll_create1),
    ("epoll_ctl", libc::SYS_epoll_ctl),
];

/// What the monitor's filter is narrowed to.
pub(crate) struct MonitorReach<'a> {
    /// The worker's process ID: the one process it signals.
    pub(crate) worker: i32,
    /// Its end of the channel: the one socket it sends descriptors on.
    pub(crate) channel: i32,
    /// The listeners it accepts on.
    pub(crate) listeners: &'a [i32],
    /// `--metrics`' port, where the monitor may have to bind it later.
    pub(crate) rebind: Option<u16>,
}

/// Confines the monitor ([`crate::privsep`]) once it closed all but its descriptors: no
/// capability, not dumpable (a process of its user can neither trace it nor read its
/// memory), no new privileges, a Landlock domain with no file and no port (but `rebind`'s,
/// to bind; signals are not scoped: it passes them on to the worker), and
/// [`MONITOR_ALLOWED`] (with [`MONITOR_REBIND`] where it may bind) with `kill` only to the
/// worker (and SIGSTOP to itself, for Ctrl-Z), `sendmsg` only on its channel and `accept4`
/// only on its listeners. Unlike the worker's, this filter applies whatever `--no-sandbox`
/// says: the monitor exists only with the sandbox.
pub(crate) fn confine_monitor(reach: &MonitorReach<'_>) -> Result<()> {
    crate::system::drop_capabilities()?;
    nix::sys::prctl::set_dumpable(false).context("prctl(PR_SET_DUMPABLE)")?;
    nix::sys::prctl::set_no_new_privs().context("prctl(PR_SET_NO_NEW_PRIVS)")?;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(LANDLOCK_ABI))
        .and_then(|r| r.handle_access(AccessNet::from_all(LANDLOCK_ABI)))
        .and_then(|r| r.scope(Scope::AbstractUnixSocket))
        .and_then(|r| r.create())
        .context("Landlock: the monitor")?;
    if let Some(port) = reach.rebind.filter(|p| *p != 0) {
        ruleset = ruleset
            .add_rule(landlock::NetPort::new(port, AccessNet::BindTcp))
            .context("Landlock: the monitor's metrics port")?;
    }
    // The worker's domain says what this kernel enforces.
    let _ = ruleset.restrict_self().context("Landlock: the monitor")?;
    #[cfg(target_arch = "x86_64")]
    let poll: &[(&str, i64)] = &[("poll", libc::SYS_poll)];
    #[cfg(not(target_arch = "x86_64"))]
    let poll: &[(&str, i64)] = &[];
    let rebind: &[(&str, i64)] = if reach.rebind.is_some() {
        MONITOR_REBIND
    } else {
        &[]
    };
    // No listener: no accept4 at all (an empty narrowing would allow it as it is).
    let accepts = !reach.listeners.is_empty() || reach.rebind.is_some();
    let calls: Vec<_> = MONITOR_ALLOWED
        .iter()
        .chain(poll)
        .chain(rebind)
        .filter(|(name, _)| accepts || *name != "accept4")
        .copied()
        .collect();
    allow_only(&calls, "the monitor", |name| monitor_narrowed(name, reach))
}

/// The narrowing of each of the monitor's calls that takes one (none: as it is).
fn monitor_narrowed(name: &str, reach: &MonitorReach<'_>) -> Result<Vec<SeccompRule>> {
    let on = |fds: &[i32]| {
        fds.iter()
            .map(|fd| rule(vec![eq(0, *fd as u64)?]))
            .collect::<Result<Vec<_>>>()
    };
    Ok(match name {
        // The worker, with any signal; itself, to stop (Ctrl-Z).
        "kill" => vec![
            rule(vec![eq(0, reach.worker as u64)?])?,
            rule(vec![
                eq(0, u64::from(std::process::id()))?,
                eq(1, libc::SIGSTOP as u64)?,
            ])?,
        ],
        "fcntl" => vec![rule(vec![eq(1, libc::F_GETFD as u64)?])?],
        "sendto" => vec![rule(vec![qword_eq(4, 0)?])?],
        "sendmsg" => on(&[reach.channel])?,
        // A listener bound later has a descriptor not known yet.
        "accept4" if reach.rebind.is_none() => on(reach.listeners)?,
        "mmap" => vec![rule(vec![masked_eq(2, libc::PROT_EXEC as u64, 0)?])?],
        "socket" => [libc::AF_INET, libc::AF_INET6]
            .into_iter()
            .map(|family| {
                rule(vec![
                    eq(0, family as u64)?,
                    masked_eq(1, 0xf, libc::SOCK_STREAM as u64)?,
                ])
            })
            .collect::<Result<_>>()?,
        "setsockopt" => vec![rule(vec![eq(1, libc::SOL_SOCKET as u64)?])?],
        // FIONBIO alone (the request as the kernel reads it, 32 bits).
        "ioctl" => vec![rule(vec![eq(1, 0x5421)?])?],
        _ => vec![],
    })
}

/// Installs on this thread a filter allowing `calls` alone, each only when one of the rules
/// `narrow` gives it holds (none: as it is); anything else fails with EPERM. `who` names
/// the process in errors.
fn allow_only(
    calls: &[(&str, i64)],
    who: &str,
    narrow: impl Fn(&str) -> Result<Vec<SeccompRule>>,
) -> Result<()> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &(name, nr) in calls {
        rules.insert(nr, narrow(name)?);
    }
    let allow = filter(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
    )?;
    seccompiler::apply_filter(&allow).map_err(|e| anyhow!("seccomp: {who}: {e}"))
}

pub(crate) fn filter(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    mismatch: SeccompAction,
    matched: SeccompAction,
) -> Result<BpfProgram> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| anyhow!("seccomp: {}: {e}", std::env::consts::ARCH))?;
    SeccompFilter::new(rules, mismatch, matched, arch)
        .and_then(TryInto::try_into)
        .map_err(|e| anyhow!("seccomp: a filter: {e}"))
}

pub(crate) fn qword_eq(arg: u8, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::Eq, value)
        .map_err(|e| anyhow!("seccomp: a condition: {e}"))
}

pub(crate) fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule> {
    SeccompRule::new(conditions).map_err(|e| anyhow!("seccomp: a rule: {e}"))
}

pub(crate) fn eq(arg: u8, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
        .map_err(|e| anyhow!("seccomp: a condition: {e}"))
}

pub(crate) fn masked_eq(arg: u8, mask: u64, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )
    .map_err(|e| anyhow!("seccomp: a condition: {e}"))
}

/// The calls of `--top`'s reader of socket owners: reading `/proc` (its socket tables and
/// descriptor links), answering on its standard output, memory and its end.
pub(crate) const READER_ALLOWED: &[(&str, i64)] = &[
    ("read", libc::SYS_read),
    ("write", libc::SYS_write),
    ("openat", libc::SYS_openat),
    ("close", libc::SYS_close),
    ("getdents64", libc::SYS_getdents64),
    ("readlinkat", libc::SYS_readlinkat),
    ("newfstatat", libc::SYS_newfstatat),
    ("fstat", libc::SYS_fstat),
    ("statx", libc::SYS_statx),
    ("lseek", libc::SYS_lseek),
    ("fcntl", libc::SYS_fcntl),
    ("brk", libc::SYS_brk),
    ("mmap", libc::SYS_mmap),
    ("munmap", libc::SYS_munmap),
    ("mremap", libc::SYS_mremap),
    ("madvise", libc::SYS_madvise),
    ("futex", libc::SYS_futex),
    ("sigaltstack", libc::SYS_sigaltstack),
    ("rt_sigaction", libc::SYS_rt_sigaction),
    ("rt_sigprocmask", libc::SYS_rt_sigprocmask),
    ("rt_sigreturn", libc::SYS_rt_sigreturn),
    ("clock_gettime", libc::SYS_clock_gettime),
    ("restart_syscall", libc::SYS_restart_syscall),
    ("exit", libc::SYS_exit),
    ("exit_group", libc::SYS_exit_group),
];

/// Confines `--top`'s reader once it kept only the capabilities reading other users'
/// descriptor links takes (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, as root; none as the
/// capture's user): no new privileges and [`READER_ALLOWED`] (memory never executable: no
/// socket, no write but to its standard output, no process). No Landlock domain: a process
/// in one may not read the descriptor links of a process outside it (Landlock counts that
/// as tracing), which is all the reader is for.
pub(crate) fn confine_reader() -> Result<()> {
    nix::sys::prctl::set_no_new_privs().context("prctl(PR_SET_NO_NEW_PRIVS)")?;
    // The standard library reads links with x86-64's older calls.
    #[cfg(target_arch = "x86_64")]
    let older: &[(&str, i64)] = &[
        ("readlink", libc::SYS_readlink),
        ("open", libc::SYS_open),
        ("stat", libc::SYS_stat),
        ("lstat", libc::SYS_lstat),
    ];
    #[cfg(not(target_arch = "x86_64"))]
    let older: &[(&str, i64)] = &[];
    let calls: Vec<_> = READER_ALLOWED.iter().chain(older).copied().collect();
    allow_only(&calls, "the --top reader", |name| {
        Ok(match name {
            "mmap" => vec![rule(vec![masked_eq(2, libc::PROT_EXEC as u64, 0)?])?],
            _ => vec![],
        })
    })
}
