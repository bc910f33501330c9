//! The receiving CPU kept for the receivers during the capacity searches: every other task
//! allowed to run elsewhere is moved off it for the searches and given its CPU set back
//! afterwards, and the unbound workqueues' CPU mask (`/sys/devices/virtual/workqueue/cpumask`:
//! their kernel threads refuse to be moved one by one) leaves it out for as long. That is
//! what tuned's cpu-partitioning profile or `tuna --isolate` do for tasks; interrupts stay
//! where they are.
//!
//! Why: where the kernel does not preempt a task inside a system call (the `none`
//! preemption model, which many distribution and virtual-machine kernels run), a wake-up
//! of the receiving veth's NAPI thread waits until whatever task holds the CPU leaves the
//! kernel, real-time priority or not. A task that spends a millisecond in one call (a
//! machine's management agent, a shell's fork) then stalls the receive path long enough for
//! the veth's 256-frame queue to overflow at rates far below what the receivers sustain,
//! and a zero-loss search reads that task's schedule instead of the receiver. Tasks pinned
//! to the receiving CPU alone (its per-CPU kernel threads, the NAPI thread, the receivers)
//! stay.
//!
//! A run that is killed cannot give the CPU back itself: the moves are written to
//! [`RECORD`] as they are made, and the next isolation (the next capacity run) undoes what
//! a record left before it moves anything.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use anyhow::{Context, Result};

use crate::sys::{set_task_affinity, task_affinity};

/// Where the moves of the isolation in force are written: each line a task, the CPUs it
/// had and the CPUs it was given (comma-separated), and a line `workqueues HAD GIVEN` for the
/// unbound workqueues' mask (as the kernel prints it). Removed once they are given back.
pub const RECORD: &str = "/run/rxbench-isolated-tasks";

/// The CPUs unbound workqueues may run on (a hex mask, 32-bit words separated by commas).
const WORKQUEUE_MASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// Held while tasks are moved or given back, and by [`undo_and_hold`] until the process
/// exits: a signal's undoing never interleaves with a scan or a restore.
static MOVING: Mutex<()> = Mutex::new(());

fn moving() -> MutexGuard<'static, ()> {
    MOVING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Tasks moved off one CPU; dropping it gives each its CPU set back (those still alive and
/// still on the set they were given), and gives the CPU back to the tasks started meanwhile
/// with a set it made.
#[derive(Debug)]
pub struct Isolated {
    cpu: usize,
    /// Each task moved, with the CPUs it had and the CPUs it was given.
    moved: Vec<Moved>,
    /// Every task the scans saw, moved or not.
    seen: HashSet<u32>,
    /// Tasks allowed elsewhere that the kernel refused to move (a kernel thread that may not
    /// be moved, a cpuset that forbids the set).
    refused: usize,
    /// Where the moves are written ([`RECORD`]; `None` in the unit tests).
    record: Option<&'static Path>,
    /// The unbound workqueues' mask before and during the isolation, if it was changed.
    workqueues: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Moved {
    tid: u32,
    had: Vec<usize>,
    given: Vec<usize>,
}

impl Isolated {
    /// Moves every task of the machine that may run on another CPU off `cpu`, once what an
    /// earlier run's [`RECORD`] left is undone. User tasks started later inherit their
    /// parent's CPU set, so they stay off it too unless they pin themselves (the receivers
    /// do); kernel threads started later may run on it. A scan repeats until it moves nothing
    /// new (a task started during one is seen by the next), three times at most.
    pub fn cpu(cpu: usize) -> Result<Isolated> {
        let record = Path::new(RECORD);
        {
            let _moving = moving();
            undo_record(record)?;
        }
        let mut isolated = Isolated::new(cpu, Some(record));
        // The lock is released before a failed scan's `isolated` drops (its Drop takes it
        // to give the moves back).
        let scanned = {
            let _moving = moving();
            isolated.scan()
        };
        scanned?;
        Ok(isolated)
    }

    /// The workqueues' mask and every task allowed elsewhere moved off the CPU, each change
    /// recorded before it is made: a kill between the two leaves a record of a change not
    /// made, which undoing passes over.
    fn scan(&mut self) -> Result<()> {
        self.workqueues = workqueues_without(self.cpu);
        self.write_record()?;
        if let Some((_, given)) = &self.workqueues {
            if std::fs::write(WORKQUEUE_MASK, given).is_err() {
                self.workqueues = None;
                self.write_record()?;
            }
        }
        for _ in 0..3 {
            let before = self.moved.len();
            self.move_off(all_tasks()?)?;
            if self.moved.len() == before {
                break;
            }
        }
        Ok(())
    }

    fn new(cpu: usize, record: Option<&'static Path>) -> Isolated {
        Isolated {
            cpu,
            moved: Vec::new(),
            seen: HashSet::new(),
            refused: 0,
            record,
            workqueues: None,
        }
    }

    /// Moves each of `tids` off the CPU where it may run elsewhere, each move written to the
    /// record before it is made (a run killed at any point leaves every move it made
    /// listed). A task that has gone is passed over; one that the kernel does not let move
    /// is counted in `refused`.
    fn move_off(&mut self, tids: impl IntoIterator<Item = u32>) -> Result<()> {
        for tid in tids {
            if !self.seen.insert(tid) {
                continue;
            }
            let Ok(had) = task_affinity(tid) else {
                continue;
            };
            let given: Vec<usize> = had.iter().copied().filter(|&c| c != self.cpu).collect();
            if given.len() == had.len() || given.is_empty() {
                continue;
            }
            self.moved.push(Moved {
                tid,
                had,
                given: given.clone(),
            });
            self.write_record()?;
            if let Err(e) = set_task_affinity(tid, &given) {
                self.moved.pop();
                self.write_record()?;
                if e.raw_os_error() != Some(libc::ESRCH) {
                    self.refused += 1;
                }
            }
        }
        Ok(())
    }

    /// Writes the moves to the record, so that a run killed before [`Drop`] is undone by
    /// the next one.
    fn write_record(&self) -> Result<()> {
        let Some(path) = self.record else {
            return Ok(());
        };
        let list = |cpus: &[usize]| {
            cpus.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut text = String::new();
        for m in &self.moved {
            let _ = writeln!(text, "{} {} {}", m.tid, list(&m.had), list(&m.given));
        }
        if let Some((had, given)) = &self.workqueues {
            let _ = writeln!(text, "workqueues {had} {given}");
        }
        // Written beside it and renamed over it: a run killed mid-write leaves the last
        // whole record.
        let new = path.with_extension("new");
        std::fs::write(&new, text).with_context(|| format!("writing {}", new.display()))?;
        std::fs::rename(&new, path).with_context(|| format!("writing {}", path.display()))
    }

    /// Gives each moved task its CPU set back, unless it has changed its set meanwhile (or
    /// its id now names another task with another set); then each task of `born` that the
    /// scans did not see (tasks started since) whose set is one this isolation gave gets the
    /// CPU back: it inherited that set from a moved parent (a shell started during the
    /// searches, a process the machine's agent spawned) and would otherwise keep it for
    /// good. A task that chose exactly such a set for itself meanwhile gets the CPU too: the
    /// price of not tracking each task's history.
    fn restore(&self, born: impl IntoIterator<Item = u32>) {
        for m in &self.moved {
            give_back(m);
        }
        if let Some((had, given)) = &self.workqueues {
            widen_workqueues(had, given);
        }
        for tid in born.into_iter().filter(|t| !self.seen.contains(t)) {
            let Ok(cpus) = task_affinity(tid) else {
                continue;
            };
            if self.moved.iter().any(|m| m.given == cpus) {
                let mut back = cpus;
                back.push(self.cpu);
                back.sort_unstable();
                let _ = set_task_affinity(tid, &back);
            }
        }
    }

    /// Tasks moved off the CPU.
    pub fn moved(&self) -> usize {
        self.moved.len()
    }

    /// Tasks allowed elsewhere that the kernel would not move.
    pub fn refused(&self) -> usize {
        self.refused
    }

    /// Whether the unbound workqueues were kept off the CPU too.
    pub fn workqueues(&self) -> bool {
        self.workqueues.is_some()
    }
}

/// An isolation without a record (a record's undoing, the unit tests) restores only when
/// asked ([`Isolated::restore`]); one made by [`Isolated::cpu`] restores as it goes.
impl Drop for Isolated {
    fn drop(&mut self) {
        let Some(path) = self.record else { return };
        let _moving = moving();
        // Without the listing, the moved tasks at least get their sets back.
        self.restore(all_tasks().unwrap_or_default());
        let _ = std::fs::remove_file(path);
    }
}

/// Gives a moved task its set back if it still has the set it was given. A task that has
/// ended has nothing to restore.
fn give_back(m: &Moved) {
    if task_affinity(m.tid).is_ok_and(|now| now == m.given) {
        let _ = set_task_affinity(m.tid, &m.had);
    }
}

/// Undoes what [`RECORD`] holds, if anything: a run killed while it isolated a CPU left it.
/// rxbench calls this first thing (as root), before it counts the CPUs it may use: a shell
/// started during that run, and so rxbench started from it, would otherwise see one CPU
/// fewer.
pub fn undo_left_over() -> Result<()> {
    let _moving = moving();
    undo_record(Path::new(RECORD))
}

/// Undoes the record of the isolation in force (a signal's immediate stop) and holds the
/// isolation's lock until the process exits: a scan or a restore in progress finishes
/// first, and no task is moved after.
pub fn undo_and_hold() -> (MutexGuard<'static, ()>, Result<()>) {
    let guard = moving();
    let undone = undo_record(Path::new(RECORD));
    (guard, undone)
}

/// Undoes what a record left (a run killed while it isolated a CPU), then removes it: the
/// tasks it moved get their sets back, and every other task with a set it gave (started
/// during that run, this process included) gets the CPU back.
fn undo_record(path: &Path) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut undone = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let ["workqueues", had, given] = fields.as_slice() {
            widen_workqueues(had, given);
        } else if let Some(m) = parse_line(line) {
            give_back(&m);
            undone.push(m);
        }
    }
    let cpu = undone
        .first()
        .and_then(|m| m.had.iter().copied().find(|c| !m.given.contains(c)));
    if let Some(cpu) = cpu {
        let mut left = Isolated::new(cpu, None);
        left.seen = undone.iter().map(|m| m.tid).collect();
        left.moved = undone.clone();
        left.restore(all_tasks()?);
    }
    let undone = undone.len();
    eprintln!(
        "rxbench: {} (an isolation its run did not end): {undone} tasks given their CPU sets back",
        path.display()
    );
    std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))
}

/// The unbound workqueues' mask now and without `cpu`, or `None` where the file is missing
/// or the CPU is not in it.
fn workqueues_without(cpu: usize) -> Option<(String, String)> {
    let had = std::fs::read_to_string(WORKQUEUE_MASK)
        .ok()?
        .trim()
        .to_string();
    let given = mask_without(&had, cpu)?;
    Some((had, given))
}

/// Puts the unbound workqueues' mask back to `had` if it is still `given`.
fn widen_workqueues(had: &str, given: &str) {
    let now = std::fs::read_to_string(WORKQUEUE_MASK).unwrap_or_default();
    if now.trim() == given {
        let _ = std::fs::write(WORKQUEUE_MASK, had);
    }
}

/// A kernel CPU mask (hex, 32-bit words separated by commas, as sysfs prints it) without
/// `cpu`, in the same form; `None` if it is malformed, lacks `cpu` or would be left empty.
fn mask_without(mask: &str, cpu: usize) -> Option<String> {
    let mut words: Vec<u32> = mask
        .split(',')
        .map(|w| u32::from_str_radix(w, 16).ok())
        .collect::<Option<_>>()?;
    // The last word holds CPUs 0-31.
    let index = words.len().checked_sub(1 + cpu / 32)?;
    let bit = 1u32 << (cpu % 32);
    if words[index] & bit == 0 {
        return None;
    }
    words[index] &= !bit;
    if words.iter().all(|&w| w == 0) {
        return None;
    }
    let width = mask.split(',').next().map_or(8, str::len);
    let mut out: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
    // The first word as wide as it was printed.
    out[0] = format!("{:0width$x}", words[0]);
    Some(out.join(","))
}

/// One line of the record: `TID HAD GIVEN`, the sets comma-separated; `None` if malformed.
fn parse_line(line: &str) -> Option<Moved> {
    let mut fields = line.split_whitespace();
    let cpus = |f: &str| -> Option<Vec<usize>> { f.split(',').map(|c| c.parse().ok()).collect() };
    let m = Moved {
        tid: fields.next()?.parse().ok()?,
        had: cpus(fields.next()?)?,
        given: cpus(fields.next()?)?,
    };
    fields.next().is_none().then_some(m)
}

/// Every task (thread) of the machine: /proc/PID/task/TID.
fn all_tasks() -> Result<Vec<u32>> {
    let numeric = |e: std::fs::DirEntry| e.file_name().to_str()?.parse::<u32>().ok();
    let mut tids = Vec::new();
    for pid in std::fs::read_dir("/proc")
        .context("/proc")?
        .filter_map(|e| e.ok().and_then(numeric))
    {
        // A process that ended since the listing has no tasks left.
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        tids.extend(tasks.filter_map(|e| e.ok().and_then(numeric)));
    }
    Ok(tids)
}

/// `--cpu-dma-latency`: [`zcrx_ring::hold_cpu_dma_latency`], with the option in its errors.
pub fn hold_cpu_dma_latency(us: u32) -> anyhow::Result<std::fs::File> {
    zcrx_ring::hold_cpu_dma_latency(us).map_err(|e| {
        anyhow::anyhow!(
            "--cpu-dma-latency {us} (capacity's and saturation's default is 0; `off` holds \
                 nothing): /dev/cpu_dma_latency: {e}"
        )
    })
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_cpu_leaves_a_kernel_mask_in_the_form_the_kernel_printed() {
        assert_eq!(mask_without("3", 1).as_deref(), Some("1"));
        assert_eq!(mask_without("f", 0).as_deref(), Some("e"));
        assert_eq!(
            mask_without("ff,ffffffff", 33).as_deref(),
            Some("fd,ffffffff")
        );
        assert_eq!(mask_without("1,00000003", 1).as_deref(), Some("1,00000001"));
        // Not in the mask, the last CPU in it, or not a mask.
        for (mask, cpu) in [("1", 1), ("2", 1), ("1", 0), ("3", 40), ("xyz", 0), ("", 0)] {
            assert_eq!(mask_without(mask, cpu), None, "{mask:?} without {cpu}");
        }
    }

    #[test]
    fn a_record_line_is_read_back_and_a_malformed_one_is_not() {
        assert_eq!(
            parse_line("81 0,1 0"),
            Some(Moved {
                tid: 81,
                had: vec![0, 1],
                given: vec![0]
            })
        );
        for bad in [
            "",
            "81",
            "81 0,1",
            "81 0,1 0 7",
            "x 0 0",
            "81 0,y 0",
            "81 0,,1 0",
        ] {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
    }

    /// A thread allowed on every CPU is moved off the isolated one and given its set back
    /// afterwards; a thread pinned to that CPU alone stays; a task that has gone is passed
    /// over; a thread started meanwhile with the set the isolation gave gets the CPU back,
    /// and a moved thread that chose another set meanwhile keeps it. Only the test's own
    /// threads are touched: the machine's other tasks are neither moved nor restored.
    #[test]
    fn a_task_leaves_the_cpu_for_the_isolation_and_comes_back_after() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cpus < 2 {
            // One CPU: nowhere to move to (CI's machines have two).
            assert!(
                std::env::var("CI").is_err(),
                "CI runs with two CPUs or more"
            );
            return;
        }
        let last = cpus - 1;
        let every: Vec<usize> = (0..cpus).collect();
        // The threads live until the checks are done.
        let done = std::sync::Arc::new(std::sync::Barrier::new(6));
        let (to_main, tids) = std::sync::mpsc::channel();
        let spawn = |pin: Option<usize>| {
            let (to_main, done, every) = (to_main.clone(), done.clone(), every.clone());
            std::thread::spawn(move || {
                let tid = crate::sys::xdp_live::this_thread() as u32;
                match pin {
                    Some(cpu) => crate::sys::pin_task(tid, cpu).expect("pinning"),
                    None => set_task_affinity(tid, &every).expect("every CPU"),
                }
                to_main.send(tid).expect("the test waits");
                done.wait();
            })
        };
        let mut threads = Vec::new();
        let mut tid = |pin| {
            threads.push(spawn(pin));
            tids.recv().unwrap()
        };
        let (free, pinned, changes) = (tid(None), tid(Some(last)), tid(None));
        let mut isolated = Isolated::new(last, None);
        // u32::MAX is no task: passed over.
        isolated
            .move_off([free, pinned, changes, u32::MAX])
            .unwrap();
        assert_eq!((isolated.moved(), isolated.refused()), (2, 0));
        let given = task_affinity(free).unwrap();
        assert!(!given.contains(&last) && !given.is_empty(), "{given:?}");
        assert_eq!(task_affinity(pinned).unwrap(), vec![last]);
        set_task_affinity(changes, &[last]).unwrap();
        // Started during the isolation: one with the set it gave (as a moved parent's child
        // inherits it), one pinned to the isolated CPU.
        let (born, born_pinned) = (tid(None), tid(Some(last)));
        set_task_affinity(born, &given).unwrap();
        isolated.restore([free, pinned, changes, born, born_pinned]);
        assert_eq!(task_affinity(free).unwrap(), every);
        assert_eq!(task_affinity(pinned).unwrap(), vec![last]);
        assert_eq!(task_affinity(changes).unwrap(), vec![last]);
        assert_eq!(task_affinity(born).unwrap(), every);
        assert_eq!(task_affinity(born_pinned).unwrap(), vec![last]);
        // Restored above, for the test's threads only: without a record, the drop leaves the
        // machine's other tasks alone.
        drop(isolated);
        done.wait();
        for t in threads {
            t.join().unwrap();
        }
    }
}
