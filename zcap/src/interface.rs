//! Interface names by index: a leaf that the printers share, and that the offline fuzz target
//! compiles in with them.

/// The name of interface `index` in the calling thread's network namespace (as tcpdump
/// shows the interface of a LINUX_SLL2 record), "?" when there is none.
pub(crate) fn interface_name(index: u32) -> String {
    nix::net::if_::if_indextoname(index)
        .map_or_else(|_| "?".into(), |name| name.to_string_lossy().into_owned())
}
