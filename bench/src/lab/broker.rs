//! A Kafka-compatible broker for `sniff --kafka-cost`: nisshi (tansu's command line) with
//! its memory storage, on the loopback of the namespace where the sniffers run, stopped
//! when dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The broker's port on the namespace's loopback.
const PORT: u16 = 39092;

pub struct Broker {
    child: Child,
}

impl Broker {
    /// Starts `bin` in `netns` and waits (at most 20 s) until it accepts connections.
    pub fn start(bin: &Path, netns: &str) -> Result<Broker> {
        let url = format!("tcp://127.0.0.1:{PORT}");
        let child = Command::new("ip")
            .args(["netns", "exec", netns])
            .arg(bin)
            .args(["broker", "--listener-url", &url])
            .args(["--advertised-listener-url", &url])
            .args(["--storage-engine", "memory://rxbench/"])
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("--kafka-cost: starting {}", bin.display()))?;
        let mut broker = Broker { child };
        let deadline = Instant::now() + Duration::from_secs(20);
        let probe = format!("exec 3<>/dev/tcp/127.0.0.1/{PORT}");
        loop {
            let ready = Command::new("ip")
                .args(["netns", "exec", netns, "bash", "-c", &probe])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(broker);
            }
            if let Ok(Some(status)) = broker.child.try_wait() {
                bail!("--kafka-cost: {} ended: {status}", bin.display());
            }
            if Instant::now() > deadline {
                bail!("--kafka-cost: {} did not listen within 20 s", bin.display());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Its bootstrap address, in its namespace.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{PORT}")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
