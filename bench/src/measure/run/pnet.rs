//! The `pnet-datalink` receiver: `pnet`'s datalink channel on the receiving interface, what a
//! Rust user reaches for first (an AF_PACKET socket read with one `recvfrom` per frame). We
//! open the socket ourselves and hand it to pnet, only to read its drop counter.

use std::os::fd::{IntoRawFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use pnet_datalink::{Channel, Config, DataLinkReceiver};
use zcrx_capture::StopToken;

use super::tally::{flow_of_frame, ReceiverTally};
use crate::sys;

/// The channel's receiving half and its socket.
pub(super) struct PnetRx {
    rx: Mutex<Box<dyn DataLinkReceiver>>,
    /// The socket pnet owns (valid while `rx` lives), for PACKET_STATISTICS.
    fd: RawFd,
    /// PACKET_STATISTICS resets on every read: the sum so far.
    drops: Mutex<u64>,
}

impl PnetRx {
    /// Opens the channel on `iface`; call in the interface's namespace.
    pub(super) fn open(iface: &str, size: usize) -> Result<PnetRx> {
        let interface = pnet_datalink::interfaces()
            .into_iter()
            .find(|i| i.name == iface)
            .with_context(|| format!("pnet: no interface {iface}"))?;
        let fd = sys::packet_socket()
            .context("pnet: AF_PACKET socket")?
            .into_raw_fd();
        let config = Config {
            read_buffer_size: size.max(4096),
            read_timeout: Some(Duration::from_millis(5)),
            promiscuous: true,
            socket_fd: Some(fd),
            ..Default::default()
        };
        match pnet_datalink::channel(&interface, config).context("pnet: opening the channel")? {
            Channel::Ethernet(_tx, rx) => Ok(PnetRx {
                rx: Mutex::new(rx),
                fd,
                drops: Mutex::new(0),
            }),
            _ => bail!("pnet: not an Ethernet channel"),
        }
    }

    /// Frames the socket dropped since it was opened.
    pub(super) fn drops(&self) -> Result<u64> {
        let mut d = self.drops.lock().unwrap_or_else(|p| p.into_inner());
        *d += sys::packet_drops(self.fd)?;
        Ok(*d)
    }
}

pub(super) fn pnet_receiver(
    rx: &PnetRx,
    mut local: ReceiverTally<'_>,
    stop: &StopToken,
) -> Result<()> {
    let mut rx = rx
        .rx
        .lock()
        .map_err(|_| anyhow!("pnet receiver poisoned"))?;
    loop {
        match rx.next() {
            Ok(frame) => local.packet(flow_of_frame(frame), None),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                if stop.is_stopped() {
                    local.finish();
                    return Ok(());
                }
                local.idle();
            }
            Err(e) => return Err(e).context("pnet: receiving"),
        }
    }
}
