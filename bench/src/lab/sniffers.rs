//! The sniffers' command lines: zcap and tcpdump on an interface, with a ring size, flags, an
//! output and a filter, optionally pinned to a CPU. Every comparison of the two builds its
//! commands here, so both take their settings in the same order.

use std::path::PathBuf;

use anyhow::{bail, Result};

/// The zcap binary (given, or beside rxbench) as a program name; tcpdump must be installed.
pub fn zcap_binary(zcap: Option<PathBuf>) -> Result<String> {
    let zcap = match zcap {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name("zcap"),
    };
    if !zcap.exists() {
        bail!(
            "{} not found: build it (cargo build --release -p zcap) or pass --zcap",
            zcap.display()
        );
    }
    if std::process::Command::new("tcpdump")
        .arg("--version")
        .output()
        .is_err()
    {
        bail!("tcpdump is not installed (scripts/deps.sh installs it)");
    }
    Ok(zcap.display().to_string())
}

/// `cmd` run through `prefix` (a command that execs the rest, such as `taskset` or `chrt`).
pub fn prefixed(prefix: &[&str], cmd: &[String]) -> Vec<String> {
    prefix
        .iter()
        .map(|s| s.to_string())
        .chain(cmd.iter().cloned())
        .collect()
}

/// `cmd` run on `cpu` (through `taskset -c`).
pub fn pinned(cpu: usize, cmd: &[String]) -> Vec<String> {
    prefixed(&["taskset", "-c", &cpu.to_string()], cmd)
}

/// A sniffer's command line:
/// `[taskset -c CPU] PROGRAM -i IFACE [-n] [-q] [-B KIB] [FLAGS] [-w OUTPUT] [FILTER]`.
#[derive(Debug, Clone)]
pub struct SnifferCmd {
    program: String,
    /// `-n` (no name lookups): tcpdump's always; zcap's when printing (its other modes
    /// look up no names).
    numeric: bool,
    /// `-q`, unless the sniffer prints its lines ([`SnifferCmd::printing`]).
    quiet: bool,
    iface: String,
    ring_kib: Option<u32>,
    flags: Vec<String>,
    output: Option<String>,
    filter: Option<String>,
    cpu: Option<usize>,
}

impl SnifferCmd {
    /// zcap (the binary at `zcap`) on `iface`, quiet.
    pub fn zcap(zcap: &str, iface: &str) -> SnifferCmd {
        SnifferCmd::new(zcap, false, iface)
    }

    /// tcpdump on `iface`, quiet, without name lookups.
    pub fn tcpdump(iface: &str) -> SnifferCmd {
        SnifferCmd::new("tcpdump", true, iface)
    }

    fn new(program: &str, numeric: bool, iface: &str) -> SnifferCmd {
        SnifferCmd {
            program: program.to_string(),
            numeric,
            quiet: true,
            iface: iface.to_string(),
            ring_kib: None,
            flags: Vec::new(),
            output: None,
            filter: None,
            cpu: None,
        }
    }

    /// The ring's memory, KiB (`-B`: both tools take KiB).
    pub fn ring_kib(mut self, kib: u32) -> SnifferCmd {
        self.ring_kib = Some(kib);
        self
    }

    /// Flags of the tool's own, after the ring size.
    pub fn flags(mut self, flags: &[&str]) -> SnifferCmd {
        self.flags.extend(flags.iter().map(|f| f.to_string()));
        self
    }

    /// Writes pcap to `to` (`-w`; `-` is standard output).
    pub fn write(mut self, to: &str) -> SnifferCmd {
        self.output = Some(to.to_string());
        self
    }

    /// Prints tcpdump's full lines: no `-q`, and `-n` for both tools (the lines go to the
    /// sniffer's standard output).
    pub fn printing(mut self) -> SnifferCmd {
        self.numeric = true;
        self.quiet = false;
        self
    }

    /// Captures only UDP (the lab's traffic).
    pub fn udp(mut self) -> SnifferCmd {
        self.filter = Some("udp".to_string());
        self
    }

    /// Runs on `cpu` (through `taskset -c`).
    pub fn on_cpu(mut self, cpu: usize) -> SnifferCmd {
        self.cpu = Some(cpu);
        self
    }

    /// The command line.
    pub fn build(self) -> Vec<String> {
        let mut cmd = vec![self.program, "-i".into(), self.iface];
        if self.numeric {
            cmd.push("-n".into());
        }
        if self.quiet {
            cmd.push("-q".into());
        }
        if let Some(kib) = self.ring_kib {
            cmd.extend(["-B".to_string(), kib.to_string()]);
        }
        cmd.extend(self.flags);
        if let Some(to) = self.output {
            cmd.extend(["-w".to_string(), to]);
        }
        cmd.extend(self.filter);
        match self.cpu {
            Some(cpu) => pinned(cpu, &cmd),
            None => cmd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_lines_keep_the_order_the_tools_are_given_them_in() {
        let zcap = SnifferCmd::zcap("/bin/zcap", "veth0")
            .ring_kib(4096)
            .flags(&["--compress", "zstd:1"])
            .write("/tmp/x.zst")
            .udp()
            .on_cpu(1)
            .build();
        assert_eq!(
            zcap.join(" "),
            "taskset -c 1 /bin/zcap -i veth0 -q -B 4096 --compress zstd:1 -w /tmp/x.zst udp"
        );
        let tcpdump = SnifferCmd::tcpdump("veth0")
            .ring_kib(65536)
            .write("-")
            .build();
        assert_eq!(tcpdump.join(" "), "tcpdump -i veth0 -n -q -B 65536 -w -");
    }

    #[test]
    fn printing_sniffers_are_numeric_and_not_quiet() {
        let zcap = SnifferCmd::zcap("/bin/zcap", "veth0").printing().build();
        assert_eq!(zcap.join(" "), "/bin/zcap -i veth0 -n");
        let tcpdump = SnifferCmd::tcpdump("veth0")
            .ring_kib(65536)
            .printing()
            .build();
        assert_eq!(tcpdump.join(" "), "tcpdump -i veth0 -n -B 65536");
    }
}
