//! `rxbench tcp-rx`.

use anyhow::Result;

use super::Outcome;
use crate::cli::TcpRxArgs;
use crate::measure::tcp_rx::TcpRxConfig;
use crate::report::Report;

/// recv against TCP_ZEROCOPY_RECEIVE at every connection count and read size.
pub fn run(args: TcpRxArgs, report: &mut Report) -> Result<Outcome> {
    let cfg = TcpRxConfig {
        conns: args.conns,
        reads: args.reads,
        secs: args.secs,
        verify: args.verify,
    };
    report.tcp_rx = Some(crate::measure::tcp_rx::run(&cfg)?);
    Ok(Outcome::Measured)
}
