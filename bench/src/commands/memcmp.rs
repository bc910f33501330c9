//! `rxbench memcmp`.

use super::Outcome;
use crate::report::Report;

/// memcmp variants at sizes from 16 B to 1 MiB.
pub fn run(report: &mut Report) -> Outcome {
    report.memcmp = Some(crate::measure::micro::memcmp(&[
        16,
        64,
        256,
        1500,
        4096,
        64 << 10,
        1 << 20,
    ]));
    Outcome::Measured
}
