//! Which clock stamps a ring's packets: the builder's knob (PACKET_TIMESTAMP) and what each
//! packet's status says it got. A module of its own because both the ring (`rx`) and the
//! block walk (`block`) name it.

/// Which clock stamps the packets of a ring (PACKET_TIMESTAMP, `SOF_TIMESTAMPING_*` in
/// linux/net_tstamp.h). Each packet says which one it got
/// ([`PacketMeta::timestamp_source`](crate::PacketMeta::timestamp_source)): the kernel falls
/// back to the software stamp for a packet without a hardware one (loopback, veth, a NIC
/// whose time stamping is off: hardware stamps also need the NIC's own set-up, `hwstamp_ctl`
/// or SIOCSHWTSTAMP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimestampSource {
    /// The kernel's receive time (the default).
    Software,
    /// The NIC's own clock (`SOF_TIMESTAMPING_RAW_HARDWARE`), as the NIC counts it.
    RawHardware,
    /// The NIC's clock converted to system time (`SOF_TIMESTAMPING_SYS_HARDWARE`; recent
    /// kernels no longer provide it and stamp such packets in software).
    SysHardware,
}

impl TimestampSource {
    /// Every source, for listings.
    pub const ALL: [TimestampSource; 3] = [
        TimestampSource::Software,
        TimestampSource::RawHardware,
        TimestampSource::SysHardware,
    ];

    /// The PACKET_TIMESTAMP value.
    pub(crate) fn raw(self) -> libc::c_int {
        (match self {
            TimestampSource::Software => libc::SOF_TIMESTAMPING_SOFTWARE,
            TimestampSource::RawHardware => libc::SOF_TIMESTAMPING_RAW_HARDWARE,
            TimestampSource::SysHardware => libc::SOF_TIMESTAMPING_SYS_HARDWARE,
        }) as libc::c_int
    }

    /// The name [`FromStr`](std::str::FromStr) takes and [`Display`](std::fmt::Display)
    /// prints: `software`, `hardware-raw`, `hardware-sys`.
    pub const fn name(self) -> &'static str {
        match self {
            TimestampSource::Software => "software",
            TimestampSource::RawHardware => "hardware-raw",
            TimestampSource::SysHardware => "hardware-sys",
        }
    }
}

impl std::fmt::Display for TimestampSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TimestampSource {
    type Err = crate::error::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                crate::error::UnknownName::new("timestamp source", s, Self::ALL.map(Self::name))
            })
    }
}
