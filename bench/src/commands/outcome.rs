//! What a sub-command hands back to `main`: figures to write, or a failure that may follow
//! some.

/// What a sub-command left to write.
pub enum Outcome {
    /// Its figures are in the report.
    Measured,
    /// It printed its own output (the lab's state, a child process's figures): nothing to
    /// write.
    Printed,
}

/// A sub-command's failure.
pub struct Failed {
    /// The error, with its context.
    pub error: anyhow::Error,
    /// Whether the report holds what was measured before the failure, to be written first.
    pub measured: bool,
}

impl Failed {
    /// A failure after figures went into the report.
    pub(super) fn after_measuring(error: anyhow::Error) -> Failed {
        Failed {
            error,
            measured: true,
        }
    }
}

impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Failed {
        Failed {
            error,
            measured: false,
        }
    }
}
