//! What machine a figure was measured on, and whole-machine CPU accounting from /proc.

use serde::Serialize;

/// The machine, as recorded in every report.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// Online CPUs.
    pub cores: usize,
    /// `uname -r`.
    pub kernel: String,
    /// CPU flags that matter here.
    pub cpu_flags: Vec<String>,
    /// Last-level cache bytes.
    pub llc_bytes: usize,
    /// When, UTC (RFC 3339).
    pub date: String,
    /// What the copy routines' `auto` chose on this CPU (by size, for a destination read
    /// back from cache) and how: measured at first use, how long that took, or pinned by
    /// `ZCRX_COPY_AUTO`.
    pub copy_auto: String,
}

impl Machine {
    /// This machine, from /proc/cpuinfo, uname and the clock.
    pub fn read() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        let flags = field("flags");
        let wanted = [
            "sse4_2", "avx2", "avx512f", "avx512bw", "erms", "fsrm", "bmi2", "rdtscp",
        ];
        Machine {
            cpu_model: field("model name"),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
            cpu_flags: wanted
                .iter()
                .filter(|f| flags.split_whitespace().any(|x| x == **f))
                .map(|s| s.to_string())
                .collect(),
            llc_bytes: zcrx_capture::copy::cpu().llc_bytes,
            date: utc_now(),
            copy_auto: format!(
                "{}; {}",
                zcrx_capture::copy::Copier::new(zcrx_capture::copy::Routine::Auto)
                    .map(|c| c.describe())
                    .unwrap_or_default(),
                zcrx_capture::copy::calibration().summary()
            ),
        }
    }

    /// One line for table headers.
    pub fn line(&self) -> String {
        format!(
            "{}, {} cores, Linux {}, {}",
            self.cpu_model, self.cores, self.kernel, self.date
        )
    }
}

fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Busy CPU time of the whole machine from the first line of /proc/stat, in ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcStat {
    /// user + nice + system + irq + softirq + steal.
    pub busy_ns: u64,
    /// steal alone: time the hypervisor ran something else while this guest wanted the CPU.
    pub steal_ns: u64,
}

impl ProcStat {
    /// Reads /proc/stat.
    pub fn read() -> ProcStat {
        ProcStat::read_line(|l| l.starts_with("cpu "))
    }

    /// Reads one CPU's line of /proc/stat (`cpuN`).
    pub fn read_cpu(cpu: usize) -> ProcStat {
        let name = format!("cpu{cpu} ");
        ProcStat::read_line(|l| l.starts_with(&name))
    }

    fn read_line(which: impl Fn(&str) -> bool) -> ProcStat {
        let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let v: Vec<u64> = s
            .lines()
            .find(|l| which(l))
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let get = |i: usize| v.get(i).copied().unwrap_or(0);
        // USER_HZ is 100 on Linux for /proc/stat.
        let tick = 10_000_000;
        let busy = get(0) + get(1) + get(2) + get(5) + get(6) + get(7);
        ProcStat {
            busy_ns: busy * tick,
            steal_ns: get(7) * tick,
        }
    }
}

/// CPU time of process `pid` so far, all live threads (a kernel thread is one), and of its
/// live descendants (zcap parses in a child process, its worker, beside the monitor that
/// holds the sockets): the scheduler's run time (`/proc/PID/task/TID/schedstat`, first
/// field, ns). Tick-sampled utime/stime are too coarse (10 ms) and charge interrupt work to
/// whoever is running.
pub fn proc_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut children = Vec::new();
    let mut ns = 0;
    for task in tasks.filter_map(|t| t.ok()) {
        if let Some(run) = std::fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        {
            ns += run;
        }
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(
            listed
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    ns + children.into_iter().map(proc_cpu_ns).sum::<u64>()
}

/// Column `col` (0-based, after the colon: rx bytes, rx packets, rx errs, rx drop, ... tx
/// drop is 11) of `iface` in the text of /proc/net/dev.
pub fn netdev_column(dev: &str, iface: &str, col: usize) -> Option<u64> {
    dev.lines().find_map(|l| {
        let (name, rest) = l.split_once(':')?;
        (name.trim() == iface).then(|| rest.split_whitespace().nth(col)?.parse().ok())?
    })
}

/// A counter from `/proc/thread-self/net/snmp` (`proto` line, `field` column) as seen from the
/// calling thread's network namespace.
pub fn snmp(proto: &str, field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/net/snmp").unwrap_or_default();
    let mut lines = s.lines().filter(|l| l.starts_with(&format!("{proto}:")));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == field)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Packets dropped by the per-CPU backlogs (`/proc/net/softnet_stat`, column 2, all CPUs).
pub fn softnet_drops() -> u64 {
    std::fs::read_to_string("/proc/net/softnet_stat")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|v| u64::from_str_radix(v, 16).ok())
        })
        .sum()
}
