//! The receiving CPU kept for the receivers during the capacity searches: every other task
//! allowed to run elsewhere is moved off it for the searches and given its CPU set back
//! afterwards, as tuned's cpu-partitioning profile or `tuna --isolate` would.
//!
//! Why: where the kernel does not preempt a task inside a system call (the `none`
//! preemption model, which many distribution and virtual-machine kernels run), a wake-up
//! of the receiving veth's NAPI thread waits until whatever task holds the CPU leaves the
//! kernel, real-time priority or not. A task that spends a millisecond in one call (a
//! machine's management agent, a shell's fork) then stalls the receive path long enough for
//! the veth's 256-frame queue to overflow at rates every receiver keeps up with, and a
//! zero-loss search reads that task's schedule instead of the receiver. Tasks pinned to
//! the receiving CPU alone (its per-CPU kernel threads, the NAPI thread, the receivers)
//! stay.

use std::collections::HashSet;

use anyhow::{Context, Result};

use crate::sys::{set_task_cpus, task_cpus};

/// Tasks moved off one CPU; dropping it gives each its CPU set back (those still alive),
/// and gives the CPU back to the tasks started meanwhile with a set it made.
#[derive(Debug)]
pub struct Isolated {
    cpu: usize,
    /// Each task moved, with the CPUs it had.
    moved: Vec<(u32, Vec<usize>)>,
    /// Every task the scans saw, moved or not.
    seen: HashSet<u32>,
    /// The CPU sets the moved tasks were given.
    given: Vec<Vec<usize>>,
}

impl Isolated {
    /// Moves every task of the machine that may run on another CPU off `cpu`. New tasks
    /// inherit their parent's CPU set, so the tasks that start later stay off it too, unless
    /// they pin themselves (the receivers do). A scan repeats until it moves nothing new (a
    /// task started during one is seen by the next), three times at most.
    pub fn cpu(cpu: usize) -> Result<Isolated> {
        let mut isolated = Isolated::new(cpu);
        for _ in 0..3 {
            let before = isolated.moved.len();
            isolated.move_off(all_tasks()?);
            if isolated.moved.len() == before {
                break;
            }
        }
        Ok(isolated)
    }

    fn new(cpu: usize) -> Isolated {
        Isolated {
            cpu,
            moved: Vec::new(),
            seen: HashSet::new(),
            given: Vec::new(),
        }
    }

    /// Moves each of `tids` off the CPU where it may run elsewhere. A task that has gone,
    /// or that the kernel does not let move (a kernel thread bound to its CPU), is left.
    fn move_off(&mut self, tids: impl IntoIterator<Item = u32>) {
        for tid in tids {
            if !self.seen.insert(tid) {
                continue;
            }
            let Ok(cpus) = task_cpus(tid) else { continue };
            let others: Vec<usize> = cpus.iter().copied().filter(|&c| c != self.cpu).collect();
            if others.len() == cpus.len() || others.is_empty() {
                continue;
            }
            if set_task_cpus(tid, &others).is_ok() {
                if !self.given.contains(&others) {
                    self.given.push(others);
                }
                self.moved.push((tid, cpus));
            }
        }
    }

    /// Gives the moved tasks their CPU sets back; then each task of `born` (tasks started
    /// since the scans) whose set is one this isolation gave gets the CPU back: it inherited
    /// that set from a moved parent (a shell started during the searches, a process the
    /// machine's agent spawned) and would otherwise keep it for good. A task that chose
    /// exactly such a set for itself meanwhile gets the CPU too: the price of not tracking
    /// each task's history.
    fn restore(&self, born: impl IntoIterator<Item = u32>) {
        for (tid, cpus) in &self.moved {
            // A task that has ended in the meantime has nothing to restore.
            let _ = set_task_cpus(*tid, cpus);
        }
        for tid in born.into_iter().filter(|t| !self.seen.contains(t)) {
            let Ok(cpus) = task_cpus(tid) else { continue };
            if self.given.contains(&cpus) {
                let mut back = cpus;
                back.push(self.cpu);
                back.sort_unstable();
                let _ = set_task_cpus(tid, &back);
            }
        }
    }

    /// Tasks moved off the CPU.
    pub fn moved(&self) -> usize {
        self.moved.len()
    }
}

impl Drop for Isolated {
    fn drop(&mut self) {
        // Without the listing, the moved tasks at least get their sets back.
        self.restore(all_tasks().unwrap_or_default());
    }
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

#[cfg(test)]
mod test {
    use super::*;

    /// A thread allowed on every CPU is moved off the isolated one and given its set back
    /// afterwards; a thread pinned to that CPU alone stays; a task that has gone is passed
    /// over; a thread started meanwhile with the set the isolation gave gets the CPU back.
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
        // Both threads live until the checks are done.
        let done = std::sync::Arc::new(std::sync::Barrier::new(5));
        let (to_main, tids) = std::sync::mpsc::channel();
        let spawn = |pin: Option<usize>| {
            let (to_main, done) = (to_main.clone(), done.clone());
            std::thread::spawn(move || {
                let tid = crate::sys::xdp_live::this_thread() as u32;
                match pin {
                    Some(cpu) => crate::sys::pin_task(tid, cpu).expect("pinning"),
                    None => set_task_cpus(tid, &(0..cpus).collect::<Vec<_>>()).expect("every CPU"),
                }
                to_main.send((pin, tid)).expect("the test waits");
                done.wait();
            })
        };
        let threads = [spawn(None), spawn(Some(last))];
        let (mut free_tid, mut pinned_tid) = (0, 0);
        for _ in 0..2 {
            match tids.recv().unwrap() {
                (None, tid) => free_tid = tid,
                (Some(_), tid) => pinned_tid = tid,
            }
        }
        let all = task_cpus(free_tid).unwrap();
        assert!(all.contains(&last), "{all:?}");
        let mut isolated = Isolated::new(last);
        // u32::MAX is no task: passed over.
        isolated.move_off([free_tid, pinned_tid, u32::MAX]);
        assert_eq!(isolated.moved(), 1);
        let now = task_cpus(free_tid).unwrap();
        assert!(!now.contains(&last) && !now.is_empty(), "{now:?}");
        assert_eq!(task_cpus(pinned_tid).unwrap(), vec![last]);
        // A task started during the isolation with the set it gave (as a moved parent's child
        // inherits it) gets the CPU back; one pinned to another CPU keeps its pin.
        let born = spawn(Some(0));
        let (_, born_tid) = tids.recv().unwrap();
        let born_free = spawn(None);
        let (_, born_free_tid) = tids.recv().unwrap();
        set_task_cpus(born_free_tid, &now).unwrap();
        isolated.restore([free_tid, pinned_tid, born_tid, born_free_tid]);
        assert_eq!(task_cpus(free_tid).unwrap(), all);
        assert_eq!(task_cpus(pinned_tid).unwrap(), vec![last]);
        assert_eq!(task_cpus(born_free_tid).unwrap(), all);
        if now != [0] {
            assert_eq!(task_cpus(born_tid).unwrap(), vec![0]);
        }
        done.wait();
        for t in threads.into_iter().chain([born, born_free]) {
            t.join().unwrap();
        }
    }
}
