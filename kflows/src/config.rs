//! The settings of [`KernelFlows::attach`](crate::KernelFlows::attach).

use zcrx_flowcache::Timeouts;

use crate::hook::Hook;

/// The settings of [`KernelFlows::attach`](crate::KernelFlows::attach): [`KernelFlowsConfig::new`], then the setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelFlowsConfig {
    /// Count packets the interface receives (tcx ingress, or XDP). Default on.
    pub ingress: bool,
    /// Count packets the host sends out of the interface (tcx egress; not with
    /// [`Hook::Xdp`]). Default off.
    pub egress: bool,
    /// Entries of the flow map: one per flow and direction (spread over its shards: see the
    /// module's documentation). Default 65 536.
    pub max_entries: u32,
    /// Idle timeouts per protocol and the active timeout ([`KernelFlows::poll`](crate::KernelFlows::poll)).
    pub timeouts: Timeouts,
    /// Where the program runs. Default [`Hook::Tcx`].
    pub hook: Hook,
}

impl Default for KernelFlowsConfig {
    fn default() -> Self {
        KernelFlowsConfig {
            ingress: true,
            egress: false,
            max_entries: 65_536,
            timeouts: Timeouts::default(),
            hook: Hook::Tcx,
        }
    }
}

impl KernelFlowsConfig {
    /// The defaults: tcx ingress only, 65 536 entries, the flow cache's default timeouts.
    pub fn new() -> Self {
        Self::default()
    }
    /// Counts received packets (tcx ingress, or XDP).
    pub fn ingress(mut self, on: bool) -> Self {
        self.ingress = on;
        self
    }
    /// Counts sent packets (tcx egress; [`Hook::Xdp`] has none).
    pub fn egress(mut self, on: bool) -> Self {
        self.egress = on;
        self
    }
    /// Entries of the flow map (one per flow and direction); at least 1.
    pub fn max_entries(mut self, n: u32) -> Self {
        self.max_entries = n;
        self
    }
    /// Idle timeouts per protocol and the active timeout.
    pub fn timeouts(mut self, t: Timeouts) -> Self {
        self.timeouts = t;
        self
    }
    /// Where the program runs: [`Hook::Tcx`] (the default) or [`Hook::Xdp`] (received
    /// frames only).
    pub fn hook(mut self, hook: Hook) -> Self {
        self.hook = hook;
        self
    }
}
