//! `rxbench tcp-rx`.

use anyhow::Result;

use super::Outcome;
use crate::cli::TcpRxArgs;
use crate::report::Report;
use crate::tcp_rx::TcpRxConfig;

/// recv against TCP_ZEROCOPY_RECEIVE at every connection count and read size.
pub fn run(args: TcpRxArgs, report: &mut Report) -> Result<Outcome> {
    let cfg = TcpRxConfig {
        conns: args.conns,
        reads: args.reads,
        secs: args.secs,
        verify: args.verify,
    };
    report.tcp_rx = Some(crate::tcp_rx::run(&cfg)?);
    Ok(Outcome::Measured)
}
