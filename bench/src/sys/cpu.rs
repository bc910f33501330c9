//! Where and how threads run: per-thread CPU time, affinity (own, other tasks', the last CPU),
//! SCHED_FIFO, timer slack.

use std::io;
use std::mem::size_of;
use std::mem::zeroed;

use super::errno::check;

/// CPU time of the calling thread: (user ns, system ns).
pub fn thread_cpu() -> (u64, u64) {
    // SAFETY: all-zero is a valid rusage; getrusage fills it.
    let mut ru: libc::rusage = unsafe { zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// The calling thread's timer slack (how late the kernel may wake a sleep), ns.
pub fn timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and no pointers.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Pins the calling thread (and the threads it starts from now on) to `cpu`; returns the
/// CPUs it was allowed before, for [`set_affinity`] to restore.
pub fn pin_to_cpu(cpu: usize) -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut old: libc::cpu_set_t = unsafe { zeroed() };
    // SAFETY: pid 0 is the calling thread; `old` is a cpu_set_t of the size passed.
    check(unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut old) })?;
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    if cpu >= 8 * size_of::<libc::cpu_set_t>() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `cpu` is within the set's bits (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set_affinity(&set)?;
    Ok(old)
}

/// The calling thread's CPU set.
pub fn set_affinity(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: pid 0 is the calling thread; `set` is a cpu_set_t of the size passed.
    check(unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) })?;
    Ok(())
}

/// Pins task `pid` (a thread of any process, a kernel thread such as a NAPI poller) to `cpu`.
pub fn pin_task(pid: u32, cpu: usize) -> io::Result<()> {
    set_task_affinity(pid, &[cpu])
}

/// The CPUs task `tid` (a thread of any process, or a kernel thread) may run on.
pub fn task_affinity(tid: u32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    // SAFETY: `set` is a cpu_set_t of the size passed; the kernel checks the tid.
    check(unsafe {
        libc::sched_getaffinity(tid as libc::pid_t, size_of::<libc::cpu_set_t>(), &mut set)
    })?;
    Ok((0..8 * size_of::<libc::cpu_set_t>())
        // SAFETY: `cpu` is within the set's bits (the range above).
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Lets task `tid` run on `cpus` only (none of them beyond the kernel's CPU set).
pub fn set_task_affinity(tid: u32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    for &cpu in cpus {
        if cpu >= 8 * size_of::<libc::cpu_set_t>() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        // SAFETY: `cpu` is within the set's bits (checked above).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a cpu_set_t of the size passed; the kernel checks the tid.
    check(unsafe {
        libc::sched_setaffinity(tid as libc::pid_t, size_of::<libc::cpu_set_t>(), &set)
    })?;
    Ok(())
}

/// Runs task `pid` under SCHED_FIFO at `priority` (1-99).
pub fn set_fifo(pid: u32, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param for the call; the kernel checks the pid.
    check(unsafe { libc::sched_setscheduler(pid as libc::pid_t, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// `f` run on the last CPU (when the affinity can be set; else where it is), the old
/// affinity restored after it.
pub fn on_last_cpu<T>(f: impl FnOnce() -> T) -> io::Result<T> {
    let pinned = pin_to_cpu(last_cpu()).ok();
    let out = f();
    if let Some(old) = pinned {
        set_affinity(&old)?;
    }
    Ok(out)
}

/// The last CPU: where the receivers run, apart from the generator on CPU 0.
pub fn last_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
}
