//! What zcap keeps once it is set up: no capability, and (unless `--no-sandbox`) a monitor
//! process that keeps the packet sockets ([`crate::privsep`]) and a worker, in a sandbox,
//! that runs the code that parses hostile bytes — its dissectors, the flow extraction, the
//! pcap/pcapng readers, the printer, the endpoints' request parsers.
//!
//! [`settle`] runs once, on the only thread of the process, after the rings are open, the
//! listeners bound, `-Z` done and the input and the IPFIX file opened, and before any other
//! thread starts (capabilities and Landlock domains belong to a thread and are inherited
//! only by the threads it starts later; the seccomp filter is synchronised over every
//! thread all the same). It refuses a `-w` directory that is `/` or a system directory,
//! splits the monitor off, starts the `-z` runner, and [`confine`]s the worker:
//!
//! 1. drops every capability: effective, permitted, inheritable and ambient, and the
//!    bounding set where zcap may (as root), so that no program zcap could be made to run
//!    regains one;
//! 2. sets no-new-privileges (nothing zcap starts gains a privilege through set-user-ID or
//!    file capabilities);
//! 3. enters a Landlock domain: the file system reduced to the `-w` directory (create,
//!    write, truncate, read, remove) and to reading the time-zone files (`-G` names), no
//!    TCP bind or connect (the monitor holds the endpoints' listeners and binds
//!    `--metrics`' port again if it was taken: `crate::listeners`), no signal or abstract
//!    socket beyond the domain;
//! 4. installs a seccomp filter allowing only the system calls a running capture makes
//!    ([`ALLOWED`]), several only with the arguments it uses ([`narrowed`]: `ioctl`'s
//!    requests, `sendto` without an address, `socket`'s families and types, never
//!    executable memory, `prctl`'s options, `setsockopt`'s levels, `tgkill` to itself): no
//!    `execve`, no process creation (only threads: `clone` with `CLONE_THREAD`; `clone3`,
//!    whose flags a filter cannot read, answers ENOSYS so that the C library falls back to
//!    `clone`), no `sendmsg`, no new packet, netlink or UDP socket, no `kill`, `ptrace`,
//!    `mount`, `bpf` or module loading. Any other call fails with EPERM (the capture
//!    reports it as an error and ends cleanly, its files flushed) rather than killing the
//!    process mid-write.
//!
//! With `--top` (only), the sandbox also lets zcap read `/proc` (the socket tables, and
//! the descriptor links of its own user's processes, should the view's reader of socket
//! owners — a process of its own started before the sandbox, see `top::procs` — not be
//! there) and move descriptors with `dup2`/`dup3` (the view's standard error goes back from
//! its pipe to the terminal when it ends).
//!
//! `-z` commands cannot run inside that filter (they are programs), so they are run by the
//! hook runner ([`crate::hooks`]), a process of its own started before [`confine`]; so is
//! `--kafka`'s relay ([`crate::kafka`]), the one process that talks to the brokers.
//!
//! Where the kernel lacks a mechanism (Landlock not built in or disabled, a Landlock ABI
//! without network rules), zcap says so on standard error and the capture goes on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::args::Config;
use crate::output::Destination;
use anyhow::{anyhow, bail, Context, Result};
use landlock::{
    Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};
use seccompiler::{SeccompAction, SeccompRule};

use crate::confine::{eq, filter, masked_eq, qword_eq, rule, LANDLOCK_ABI};
use zcrx_ring::PacketSocket;

/// What the running capture may still reach.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reach {
    /// Where `-w` files are created, rotated and compressed (its part before any
    /// strftime specifier).
    pub(crate) write_dir: Option<PathBuf>,
    /// `-w` naming a device or a pipe (`/dev/null`, a FIFO): that file alone, not its
    /// directory.
    pub(crate) write_file: Option<PathBuf>,
    /// `--top`: `/proc` readable, `dup2`/`dup3` allowed.
    pub(crate) top: bool,
    /// `--flows-in-kernel`: `bpf` allowed for the map reads alone ([`BPF_MAP_READS`]).
    pub(crate) bpf_maps: bool,
}

impl Reach {
    /// The directory a `-w` name's files go to: the name's directory, up to the first
    /// component that `-G`'s strftime may change (a `%`), or the working directory.
    pub(crate) fn for_template(template: &str) -> PathBuf {
        let mut dir = PathBuf::new();
        let parent = Path::new(template).parent().unwrap_or(Path::new(""));
        for part in parent.components() {
            if part.as_os_str().to_string_lossy().contains('%') {
                break;
            }
            dir.push(part);
        }
        if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        }
    }
}

/// Ends the set-up of a capture (the caller's only thread): splits off the monitor that
/// keeps `sockets` ([`crate::privsep`], unless `--no-sandbox`), starts `-z`'s hook runner,
/// drops the capabilities, enters the sandbox unless `--no-sandbox`, and tries
/// `--sandbox-probe`'s file. Returns, in the worker, what replaces each of `sockets`.
pub(crate) fn settle(
    config: &Config,
    sockets: &[PacketSocket<'_>],
) -> Result<Vec<crate::privsep::Held>> {
    let special = |path: &str| {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path)
            .is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_fifo())
    };
    let (write_dir, write_file) = match &config.sink.to {
        Destination::File(path) if special(path) => (None, Some(PathBuf::from(path))),
        Destination::File(path) if config.capture.sandbox => {
            (Some(writable(&Reach::for_template(path))?), None)
        }
        Destination::File(path) => (Some(Reach::for_template(path)), None),
        _ => (None, None),
    };
    let auth = config.metrics.as_ref().and_then(|m| m.web.auth.as_ref());
    let held = match config.capture.sandbox {
        true => crate::privsep::split(sockets, auth)?,
        false => Vec::new(),
    };
    // The Kafka relay: a process of its own, started before the sandbox forbids one.
    if let Some(k) = config.export.as_ref().and_then(|e| e.kafka.as_ref()) {
        let file = matches!(config.source, crate::args::Source::File(_));
        crate::kafka::start(k, file)?;
    }
    // The runner compares the names the capture gives (as `-w` wrote them) with the
    // directory as `-w` wrote it.
    if let (Some(cmd), Destination::File(path)) = (&config.sink.rotation.post, &config.sink.to) {
        if write_dir.is_some() {
            crate::hooks::start(cmd, &Reach::for_template(path))?;
        }
    }
    let reach = Reach {
        write_dir,
        write_file,
        top: config.top.is_some(),
        bpf_maps: config.flows.in_kernel,
    };
    confine(&reach, config.capture.sandbox)?;
    probe(config.capture.sandbox_probe.as_deref());
    if config.capture.sandbox_attacks {
        crate::attacks::run();
    }
    Ok(held)
}

/// Directories the sandbox never opens to writing, with everything beneath them: the
/// system's programs, libraries, configuration, kernel interfaces and scheduled jobs.
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sbin",
    "/sys",
    "/usr",
    "/var/spool",
];

/// Directories the sandbox never opens to writing themselves (a directory of its own
/// beneath them is fine): the root, and the roots of variable data and homes.
const SYSTEM_DIRS: &[&str] = &[
    "/", "/home", "/opt", "/root", "/run", "/srv", "/var", "/var/lib",
];

/// `dir`, the `-w` directory the sandbox lets zcap write in, made absolute with its links
/// resolved (what Landlock will open); refused if it is `/` or a system directory.
fn writable(dir: &Path) -> Result<PathBuf> {
    let real = std::fs::canonicalize(dir)
        .map_err(|e| anyhow!("-w: cannot create files in {}: {e}", dir.display()))?;
    let system = SYSTEM_DIRS.iter().any(|d| real == Path::new(d))
        || SYSTEM_TREES.iter().any(|d| real.starts_with(d));
    if system {
        bail!(
            "-w: the files would go in {} (from {}), a system directory the sandbox will not open to writing; name a directory of their own (or --no-sandbox)",
            real.display(),
            dir.display()
        );
    }
    Ok(real)
}

/// Files every capture may read once confined: the time zone, for `-G`'s local-time file
/// names (the C library reads it on first use).
const READ_ONLY: &[&str] = &["/etc/localtime", "/usr/share/zoneinfo"];

/// Drops the capabilities and, with `sandbox`, enters the sandbox (module docs). Returns an
/// error only where zcap asked for something the system refused; a kernel without a
/// mechanism is said on standard error.
pub(crate) fn confine(reach: &Reach, sandbox: bool) -> Result<()> {
    let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
    if threads != 1 {
        // A thread started before would keep its capabilities and escape Landlock.
        bail!("internal: confining a process of {threads} threads");
    }
    crate::system::drop_capabilities()?;
    if !sandbox {
        return Ok(());
    }
    nix::sys::prctl::set_no_new_privs().context("prctl(PR_SET_NO_NEW_PRIVS)")?;
    landlock(reach)?;
    seccomp(reach)?;
    Ok(())
}

fn landlock(reach: &Reach) -> Result<()> {
    let all = AccessFs::from_all(LANDLOCK_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.handle_access(AccessNet::from_all(LANDLOCK_ABI)))
        .and_then(|r| r.scope(Scope::from_all(LANDLOCK_ABI)))
        .and_then(|r| r.create())
        .context("Landlock: a ruleset")?;
    if let Some(dir) = &reach.write_dir {
        // A directory that does not exist is said as creating the file would say it.
        let fd = PathFd::new(dir).map_err(|_| {
            let e = std::fs::metadata(dir)
                .err()
                .unwrap_or_else(|| std::io::Error::other("not a directory"));
            anyhow!("-w: cannot create files in {}: {e}", dir.display())
        })?;
        // Everything but executing and device nodes, sockets and links: what writing,
        // rotating (-W truncates) and reading back its own files takes.
        let access = all
            & !(AccessFs::Execute
                | AccessFs::MakeChar
                | AccessFs::MakeBlock
                | AccessFs::MakeSock
                | AccessFs::MakeFifo
                | AccessFs::MakeSym
                | AccessFs::Refer
                | AccessFs::IoctlDev);
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .context("Landlock: the -w directory")?;
    }
    if let Some(file) = &reach.write_file {
        let fd = PathFd::new(file).map_err(|e| anyhow!("-w {}: {e}", file.display()))?;
        let access = AccessFs::from_file(LANDLOCK_ABI) & !(AccessFs::Execute | AccessFs::IoctlDev);
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .context("Landlock: the -w file")?;
    }
    let top: &[&str] = if reach.top { &["/proc"] } else { &[] };
    for path in READ_ONLY
        .iter()
        .chain(top)
        .map(Path::new)
        .filter(|p| p.exists())
    {
        // A file takes only the rights of files (a directory's would make the rule partial).
        let read = match path.is_dir() {
            true => AccessFs::from_read(LANDLOCK_ABI),
            false => AccessFs::from_read(LANDLOCK_ABI) & AccessFs::from_file(LANDLOCK_ABI),
        };
        if let Ok(fd) = PathFd::new(path) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, read))
                .with_context(|| format!("Landlock: {}", path.display()))?;
        }
    }
    let status = ruleset.restrict_self().context("Landlock: entering")?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => {}
        RulesetStatus::PartiallyEnforced => eprintln!(
            "zcap: sandbox: this kernel's Landlock enforces part of zcap's rules (an ABI older than {LANDLOCK_ABI:?}); capturing with what it enforces"
        ),
        RulesetStatus::NotEnforced => eprintln!(
            "zcap: sandbox: this kernel has no Landlock (not built in or not enabled at boot): the file system stays open to zcap; capturing with seccomp only"
        ),
    }
    Ok(())
}

/// The system calls a running capture makes, each as (name, number): the ring (poll,
/// getsockopt for its statistics), files (-w rotation, compression, hooks' names to the
/// runner), the endpoints' connections (received from the monitor, read and written with
/// timeouts: no accept, bind or listen), threads (compression, the endpoints, scoped
/// pipeline threads), memory, time and signals. `clone` is allowed only with CLONE_THREAD,
/// `socket` only for the C library's interface naming (an AF_UNIX datagram socket: no
/// packet, netlink, UDP or TCP socket), and `clone3` answers ENOSYS. [`ALLOWED_X86_64`] adds the older calls that only
/// x86-64 has.
pub(crate) const ALLOWED: &[(&str, i64)] = &[
    // Reading and writing descriptors.
    ("read", libc::SYS_read),
    ("write", libc::SYS_write),
    ("readv", libc::SYS_readv),
    ("writev", libc::SYS_writev),
    ("pread64", libc::SYS_pread64),
    ("pwrite64", libc::SYS_pwrite64),
    ("lseek", libc::SYS_lseek),
    ("close", libc::SYS_close),
    ("fcntl", libc::SYS_fcntl),
    ("ioctl", libc::SYS_ioctl),
    ("dup", libc::SYS_dup),
    ("fsync", libc::SYS_fsync),
    ("fdatasync", libc::SYS_fdatasync),
    ("ftruncate", libc::SYS_ftruncate),
    // Files (Landlock decides where).
    ("openat", libc::SYS_openat),
    ("newfstatat", libc::SYS_newfstatat),
    ("fstat", libc::SYS_fstat),
    ("statx", libc::SYS_statx),
    ("unlinkat", libc::SYS_unlinkat),
    ("renameat2", libc::SYS_renameat2),
    ("getdents64", libc::SYS_getdents64),
    ("readlinkat", libc::SYS_readlinkat),
    ("faccessat", libc::SYS_faccessat),
    ("faccessat2", libc::SYS_faccessat2),
    ("pipe2", libc::SYS_pipe2),
    // Waiting.
    ("ppoll", libc::SYS_ppoll),
    ("pselect6", libc::SYS_pselect6),
    ("epoll_create1", libc::SYS_epoll_create1),
    ("epoll_ctl", libc::SYS_epoll_ctl),
    ("epoll_pwait", libc::SYS_epoll_pwait),
    ("nanosleep", libc::SYS_nanosleep),
    ("clock_nanosleep", libc::SYS_clock_nanosleep),
    ("futex", libc::SYS_futex),
    ("sched_yield", libc::SYS_sched_yield),
    // Sockets that already exist, and the endpoints' clients.
    ("getsockname", libc::SYS_getsockname),
    ("getpeername", libc::SYS_getpeername),
    ("getsockopt", libc::SYS_getsockopt),
    ("setsockopt", libc::SYS_setsockopt),
    ("recvfrom", libc::SYS_recvfrom),
    ("recvmsg", libc::SYS_recvmsg),
    ("recvmmsg", libc::SYS_recvmmsg),
    ("sendto", libc::SYS_sendto),
    ("shutdown", libc::SYS_shutdown),
    ("socket", libc::SYS_socket),
    // Memory.
    ("brk", libc::SYS_brk),
    ("mmap", libc::SYS_mmap),
    ("munmap", libc::SYS_munmap),
    ("mremap", libc::SYS_mremap),
    ("mprotect", libc::SYS_mprotect),
    ("madvise", libc::SYS_madvise),
    // Threads and the process.
    ("clone", libc::SYS_clone),
    ("clone3", libc::SYS_clone3),
    ("set_robust_list", libc::SYS_set_robust_list),
    ("rseq", libc::SYS_rseq),
    ("prctl", libc::SYS_prctl),
    ("sched_getaffinity", libc::SYS_sched_getaffinity),
    ("sched_setaffinity", libc::SYS_sched_setaffinity),
    ("sched_getparam", libc::SYS_sched_getparam),
    ("sched_getscheduler", libc::SYS_sched_getscheduler),
    // The endpoints' connection threads lower themselves (SCHED_OTHER, nice 19).
    ("sched_setscheduler", libc::SYS_sched_setscheduler),
    ("setpriority", libc::SYS_setpriority),
    ("getpid", libc::SYS_getpid),
    ("gettid", libc::SYS_gettid),
    ("getuid", libc::SYS_getuid),
    ("geteuid", libc::SYS_geteuid),
    ("getgid", libc::SYS_getgid),
    ("getegid", libc::SYS_getegid),
    ("tgkill", libc::SYS_tgkill),
    ("exit", libc::SYS_exit),
    ("exit_group", libc::SYS_exit_group),
    ("wait4", libc::SYS_wait4),
    ("getrandom", libc::SYS_getrandom),
    ("getrusage", libc::SYS_getrusage),
    ("sysinfo", libc::SYS_sysinfo),
    ("uname", libc::SYS_uname),
    ("prlimit64", libc::SYS_prlimit64),
    ("sigaltstack", libc::SYS_sigaltstack),
    ("rt_sigaction", libc::SYS_rt_sigaction),
    ("rt_sigprocmask", libc::SYS_rt_sigprocmask),
    ("rt_sigreturn", libc::SYS_rt_sigreturn),
    // Time.
    ("clock_gettime", libc::SYS_clock_gettime),
    ("clock_getres", libc::SYS_clock_getres),
    ("gettimeofday", libc::SYS_gettimeofday),
    ("restart_syscall", libc::SYS_restart_syscall),
];

/// The calls of [`ALLOWED`] that x86-64 has beside their newer forms.
#[cfg(target_arch = "x86_64")]
pub(crate) const ALLOWED_X86_64: &[(&str, i64)] = &[
    ("renameat", libc::SYS_renameat),
    ("access", libc::SYS_access),
    ("poll", libc::SYS_poll),
    ("select", libc::SYS_select),
    ("epoll_wait", libc::SYS_epoll_wait),
    ("time", libc::SYS_time),
];

#[cfg(not(target_arch = "x86_64"))]
pub(crate) const ALLOWED_X86_64: &[(&str, i64)] = &[];

/// What `--top` adds: standard error moved back from the view's pipe.
#[cfg(target_arch = "x86_64")]
pub(crate) const ALLOWED_TOP: &[(&str, i64)] =
    &[("dup2", libc::SYS_dup2), ("dup3", libc::SYS_dup3)];
#[cfg(not(target_arch = "x86_64"))]
pub(crate) const ALLOWED_TOP: &[(&str, i64)] = &[("dup3", libc::SYS_dup3)];

/// The `bpf(2)` commands `--flows-in-kernel` makes once confined, on the fds it holds:
/// BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_MAP_LOOKUP_AND_DELETE_ELEM and
/// BPF_MAP_LOOKUP_BATCH. No map is created, no program loaded or attached.
pub(crate) const BPF_MAP_READS: [u64; 4] = [1, 4, 21, 24];

/// The `ioctl` requests a confined capture makes: the terminal's modes and size (`--top`,
/// and the C library's "is it a terminal"), non-blocking and close-on-exec flags, bytes
/// waiting, and an interface's name or index (`-i any`'s records name their interface).
/// Never TIOCSTI, TIOCLINUX or a request on a packet socket (the unit tests check the
/// first two are not listed). The kernel reads the request
/// as 32 bits, and so does the filter.
pub(crate) const IOCTLS: &[(&str, u64)] = &[
    ("TCGETS", 0x5401),
    ("TCSETS", 0x5402),
    ("TCSETSW", 0x5403),
    ("TCSETSF", 0x5404),
    // The same through termios2 (rustix, under crossterm, uses these).
    ("TCGETS2", 0x802c_542a),
    ("TCSETS2", 0x402c_542b),
    ("TCSETSW2", 0x402c_542c),
    ("TCSETSF2", 0x402c_542d),
    ("TIOCGWINSZ", 0x5413),
    ("FIONREAD", 0x541B),
    ("FIONBIO", 0x5421),
    ("FIONCLEX", 0x5450),
    ("FIOCLEX", 0x5451),
    ("SIOCGIFNAME", 0x8910),
    ("SIOCGIFINDEX", 0x8933),
];

/// The `prctl` options a confined capture uses: a thread's name (the standard library's
/// threads), a mapping's name (the C library's thread stacks).
const PRCTLS: [u64; 3] = [
    libc::PR_SET_NAME as u64,
    libc::PR_GET_NAME as u64,
    0x5356_4d41, // PR_SET_VMA
];

/// The socket option levels a confined capture sets (the endpoints' connections: time-outs
/// and TCP_NODELAY): never SOL_PACKET.
const SOCKOPT_LEVELS: [u64; 2] = [libc::SOL_SOCKET as u64, libc::IPPROTO_TCP as u64];

/// The narrowing of each call of [`ALLOWED`] that takes one: `None` for a call allowed as
/// it is, `Some(rules)` for a call allowed only when one of `rules` holds (an empty list:
/// never).
fn narrowed(name: &str, pid: u64) -> Result<Option<Vec<SeccompRule>>> {
    let no_exec = || rule(vec![masked_eq(2, libc::PROT_EXEC as u64, 0)?]);
    let any_of = |arg: u8, values: &[u64]| {
        values
            .iter()
            .map(|v| rule(vec![eq(arg, *v)?]))
            .collect::<Result<Vec<_>>>()
    };
    Ok(Some(match name {
        "clone" => {
            let thread = libc::CLONE_THREAD as u64;
            vec![rule(vec![masked_eq(0, thread, thread)?])?]
        }
        // An unbound local datagram socket (the C library's interface naming). No packet,
        // netlink, UDP or TCP socket.
        "socket" => vec![rule(vec![
            eq(0, libc::AF_UNIX as u64)?,
            masked_eq(1, 0xf, libc::SOCK_DGRAM as u64)?,
        ])?],
        // Only on connected sockets: no datagram to an address of the worker's choosing.
        "sendto" => vec![rule(vec![qword_eq(4, 0)?])?],
        "ioctl" => any_of(1, &IOCTLS.iter().map(|(_, r)| *r).collect::<Vec<_>>())?,
        "mmap" | "mprotect" => vec![no_exec()?],
        "prctl" => any_of(0, &PRCTLS)?,
        "setsockopt" => any_of(1, &SOCKOPT_LEVELS)?,
        // Signals to its own threads only.
        "tgkill" => vec![rule(vec![eq(0, pid)?])?],
        _ => return Ok(None),
    }))
}

/// The filter: [`ALLOWED`] narrowed by [`narrowed`] (with `bpf_maps`, `bpf` for
/// [`BPF_MAP_READS`]), anything else EPERM; and a second one answering `clone3` with ENOSYS.
fn seccomp(reach: &Reach) -> Result<()> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let top: &[(&str, i64)] = if reach.top { ALLOWED_TOP } else { &[] };
    let pid = u64::from(std::process::id());
    for &(name, nr) in ALLOWED.iter().chain(ALLOWED_X86_64).chain(top) {
        match narrowed(name, pid)? {
            None => {
                rules.insert(nr, vec![]);
            }
            Some(r) if r.is_empty() => {}
            Some(r) => {
                rules.insert(nr, r);
            }
        }
    }
    if reach.bpf_maps {
        let reads = BPF_MAP_READS
            .into_iter()
            .map(|cmd| rule(vec![eq(0, cmd)?]))
            .collect::<Result<_>>()?;
        rules.insert(libc::SYS_bpf, reads);
    }
    let no_clone3 = filter(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
    )?;
    // Every filter sees every call and the kernel takes the most restrictive answer: clone3
    // gets ENOSYS although the allow-list allows it. The allow-list goes last: it forbids
    // seccomp(2) itself.
    seccompiler::apply_filter_all_threads(&no_clone3).map_err(|e| anyhow!("seccomp: {e}"))?;
    let allow = filter(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
    )?;
    seccompiler::apply_filter_all_threads(&allow).map_err(|e| anyhow!("seccomp: {e}"))?;
    Ok(())
}

/// `--sandbox-probe FILE`: tries to create FILE and says on standard error what happened
/// (the tests' proof that a write outside the `-w` directory fails).
pub(crate) fn probe(path: Option<&Path>) {
    if let Some(path) = path {
        match std::fs::File::create(path) {
            Ok(_) => eprintln!("zcap: sandbox probe: created {}", path.display()),
            Err(e) => eprintln!("zcap: sandbox probe: {}: {e}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Reach;
    use std::path::PathBuf;

    #[test]
    fn the_write_directory_stops_where_strftime_may_change_it() {
        let dir = |t: &str| Reach::for_template(t);
        assert_eq!(dir("cap.pcap"), PathBuf::from("."));
        assert_eq!(dir("/srv/pcap/cap.pcap"), PathBuf::from("/srv/pcap"));
        assert_eq!(dir("out/cap-%H.pcap"), PathBuf::from("out"));
        assert_eq!(dir("/srv/pcap/%Y/%m/cap.pcap"), PathBuf::from("/srv/pcap"));
        assert_eq!(dir("%Y/cap.pcap"), PathBuf::from("."));
    }

    #[test]
    fn the_write_directory_is_never_the_root_or_a_system_directory() {
        for refused in [
            "/",
            "/etc",
            "/etc/cron.d",
            "/usr/lib",
            "/var",
            "/root",
            "/proc/self",
        ] {
            let e = super::writable(std::path::Path::new(refused)).unwrap_err();
            assert!(e.to_string().contains("system directory"), "{refused}: {e}");
        }
        let tmp = std::env::temp_dir();
        assert_eq!(super::writable(&tmp).unwrap(), tmp.canonicalize().unwrap());
        assert!(super::writable(std::path::Path::new("/nonexistent-zcap-dir")).is_err());
    }

    #[test]
    fn every_allowed_call_is_named_once() {
        let mut names: Vec<&str> = super::ALLOWED
            .iter()
            .chain(super::ALLOWED_X86_64)
            .chain(super::ALLOWED_TOP)
            .map(|(n, _)| *n)
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
        for forbidden in [
            "execve", "execveat", "fork", "vfork", "ptrace", "bpf", "mount",
        ] {
            assert!(!names.contains(&forbidden), "{forbidden}");
        }
    }

    /// Asserts that the allow-list `calls` names none of `forbidden`.
    fn lacks(calls: &[(&str, i64)], forbidden: &[&str]) {
        for f in forbidden {
            assert!(!calls.iter().any(|(n, _)| n == f), "{f}");
        }
    }

    #[test]
    fn the_filters_keep_the_terminal_and_the_monitor_narrow() {
        let ioctls: Vec<u64> = super::IOCTLS.iter().map(|(_, r)| *r).collect();
        for (name, request) in [
            ("TIOCSTI", libc::TIOCSTI),
            ("TIOCLINUX", libc::TIOCLINUX),
            ("TIOCSCTTY", libc::TIOCSCTTY),
            ("TIOCSETD", libc::TIOCSETD),
        ] {
            assert!(!ioctls.contains(&request), "{name}");
        }
        lacks(
            crate::confine::MONITOR_ALLOWED,
            &[
                "openat",
                "socket",
                "connect",
                "bind",
                "accept",
                "execve",
                "clone",
                "ioctl",
                "setsockopt",
                "ptrace",
                "mprotect",
                "prctl",
            ],
        );
        lacks(
            crate::confine::READER_ALLOWED,
            &[
                "socket",
                "connect",
                "sendto",
                "execve",
                "clone",
                "ptrace",
                "ioctl",
                "mprotect",
                "kill",
                "unlinkat",
                "renameat2",
            ],
        );
        lacks(
            super::ALLOWED,
            &[
                "sendmsg",
                "sendmmsg",
                "connect",
                "kill",
                "pidfd_getfd",
                "accept",
                "accept4",
                "bind",
                "listen",
            ],
        );
        // The monitor binds only where a listener must be bound again, and then no more.
        lacks(
            crate::confine::MONITOR_REBIND,
            &["connect", "sendto", "execve", "openat", "kill"],
        );
    }
}
