//! [`ConnState`]: a connection's state in Zeek's conn.log vocabulary, by name.

use std::fmt;

/// A TCP connection's state in Zeek's conn.log vocabulary (see the [module](crate::tcp_state)
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant is Zeek's name, documented in the module's table
pub enum ConnState {
    S0,
    S1,
    SF,
    REJ,
    S2,
    S3,
    RSTO,
    RSTR,
    RSTOS0,
    RSTRH,
    SH,
    SHR,
    OTH,
}

impl ConnState {
    /// Every state.
    pub const ALL: [ConnState; 13] = [
        ConnState::S0,
        ConnState::S1,
        ConnState::SF,
        ConnState::REJ,
        ConnState::S2,
        ConnState::S3,
        ConnState::RSTO,
        ConnState::RSTR,
        ConnState::RSTOS0,
        ConnState::RSTRH,
        ConnState::SH,
        ConnState::SHR,
        ConnState::OTH,
    ];

    /// Zeek's name: "S0", "SF", "REJ", ...
    pub fn name(self) -> &'static str {
        match self {
            ConnState::S0 => "S0",
            ConnState::S1 => "S1",
            ConnState::SF => "SF",
            ConnState::REJ => "REJ",
            ConnState::S2 => "S2",
            ConnState::S3 => "S3",
            ConnState::RSTO => "RSTO",
            ConnState::RSTR => "RSTR",
            ConnState::RSTOS0 => "RSTOS0",
            ConnState::RSTRH => "RSTRH",
            ConnState::SH => "SH",
            ConnState::SHR => "SHR",
            ConnState::OTH => "OTH",
        }
    }
}

impl fmt::Display for ConnState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ConnState {
    type Err = crate::UnknownName;

    /// The state [`ConnState::name`] names.
    fn from_str(s: &str) -> Result<Self, crate::UnknownName> {
        ConnState::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                crate::record::unknown_name(
                    "connection state",
                    s,
                    "S0, S1, SF, REJ, S2, S3, RSTO, RSTR, RSTOS0, RSTRH, SH, SHR, OTH",
                )
            })
    }
}
