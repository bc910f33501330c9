//! The `bpf(2)` commands zcrx uses (maps, program load, tcx and XDP links, map reads, test
//! runs), the monotonic clock and interface lookup. Every unsafe block of the crate lives
//! here; each command has one checked wrapper, and the raw attribute structs stay private.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_GET_NEXT_KEY: libc::c_long = 4;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_MAP_LOOKUP_AND_DELETE_ELEM: libc::c_long = 21;
const BPF_MAP_LOOKUP_BATCH: libc::c_long = 24;
const BPF_LINK_CREATE: libc::c_long = 28;

/// `enum bpf_map_type` (`linux/bpf.h`): an array.
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
/// A hash map with a value per possible CPU.
pub const BPF_MAP_TYPE_PERCPU_HASH: u32 = 5;
/// An array with a value per possible CPU.
pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
const BPF_MAP_TYPE_ARRAY_OF_MAPS: u32 = 12;
/// AF_XDP sockets by rx queue, for `bpf_redirect_map`.
pub const BPF_MAP_TYPE_XSKMAP: u32 = 17;
/// `enum bpf_prog_type`: BPF_PROG_TYPE_SCHED_CLS (tc and tcx).
pub const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
/// `enum bpf_prog_type`: BPF_PROG_TYPE_XDP.
pub const BPF_PROG_TYPE_XDP: u32 = 6;
/// `enum bpf_attach_type`: tcx ingress (Linux 6.6+).
pub const BPF_TCX_INGRESS: u32 = 46;
/// `enum bpf_attach_type`: tcx egress (Linux 6.6+).
pub const BPF_TCX_EGRESS: u32 = 47;
/// `enum bpf_attach_type`: an interface's XDP hook.
pub const BPF_XDP: u32 = 37;
/// `BPF_F_XDP_HAS_FRAGS`: the program takes multi-buffer frames (it reads the first buffer
/// and asks the frame's whole length of the kernel), so a driver whose MTU needs several
/// buffers a frame still takes it.
pub const BPF_F_XDP_HAS_FRAGS: u32 = 1 << 5;
/// `XDP_FLAGS_SKB_MODE`: generic XDP, on the skb.
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: the driver's own XDP hook.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux 5.18+): a test run's XDP_TX and redirects really
/// send the frames.
pub const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;

/// `bpf(cmd, attr, sizeof attr)`.
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_int> {
    // SAFETY: `attr` is a repr(C) prefix of `union bpf_attr` for `cmd`, of the size passed,
    // living across the call; the addresses inside it point at buffers the callers keep
    // alive (and large enough) for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            size_of::<T>() as libc::c_long,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::c_int)
    }
}

/// `bpf` for a command that returns a new fd.
fn bpf_fd<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<OwnedFd> {
    let fd = bpf(cmd, attr)?;
    // SAFETY: the creating commands return a new fd that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[repr(C)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
}

/// A map of `max_entries` values of `value_size` bytes under keys of `key_size` bytes.
pub fn create_map(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
) -> io::Result<OwnedFd> {
    bpf_fd(
        BPF_MAP_CREATE,
        &mut MapCreate {
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags: 0,
            inner_map_fd: 0,
        },
    )
}

/// An array of `max_entries` maps like `template` (a map of maps: a program looks a map up
/// in it, then uses that map), filled by [`update`] with the maps' fds.
pub fn create_map_of_maps(template: &OwnedFd, max_entries: u32) -> io::Result<OwnedFd> {
    bpf_fd(
        BPF_MAP_CREATE,
        &mut MapCreate {
            map_type: BPF_MAP_TYPE_ARRAY_OF_MAPS,
            key_size: 4,
            value_size: 4,
            max_entries,
            map_flags: 0,
            inner_map_fd: template.as_raw_fd() as u32,
        },
    )
}

#[repr(C)]
struct MapElem {
    map_fd: u32,
    pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

impl MapElem {
    /// The attribute for `map`, a key and a value by address (0: none).
    fn new(map: &OwnedFd, key: u64, value: u64) -> MapElem {
        MapElem {
            map_fd: map.as_raw_fd() as u32,
            pad: 0,
            key,
            value,
            flags: 0,
        }
    }
}

fn map_elem(cmd: libc::c_long, map: &OwnedFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    let mut attr = MapElem::new(map, key.as_ptr() as u64, value.as_mut_ptr() as u64);
    bpf(cmd, &mut attr).map(drop)
}

/// Reads `map[key]` into `value` (for a per-CPU map: one value per possible CPU, each
/// rounded up to 8 bytes; the caller sizes `value` so).
pub fn lookup(map: &OwnedFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    map_elem(BPF_MAP_LOOKUP_ELEM, map, key, value)
}

/// Reads `map[key]` into `value` and deletes the entry, in one command.
pub fn lookup_and_delete(map: &OwnedFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    map_elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, map, key, value)
}

/// The key after `key` (the first key when `key` is `None`) into `next`; `Ok(false)` at the
/// end of the map.
pub fn next_key(map: &OwnedFd, key: Option<&[u8]>, next: &mut [u8]) -> io::Result<bool> {
    let key = key.map_or(0, |k| k.as_ptr() as u64);
    let mut attr = MapElem::new(map, key, next.as_mut_ptr() as u64);
    match bpf(BPF_MAP_GET_NEXT_KEY, &mut attr) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `union bpf_attr`'s `batch`.
#[repr(C)]
struct Batch {
    in_batch: u64,
    out_batch: u64,
    keys: u64,
    values: u64,
    count: u32,
    map_fd: u32,
    elem_flags: u64,
    flags: u64,
}

/// Where a batch read goes on from: the kernel's opaque position (a hash map's bucket, a
/// `u32`; room for more).
pub type BatchToken = [u64; 2];

/// Reads up to `keys.len() / key_size` entries of `map` in one command
/// (`BPF_MAP_LOOKUP_BATCH`), from the start (`from` `None`) or where the last read
/// stopped, into `keys` and `values` (each entry's value as [`lookup`] gives it); the
/// position to go on from lands in `next`. Returns how many entries were read and whether
/// the map has more (the kernel's ENOENT: none after these). An error is the kernel's: EINVAL
/// or EOPNOTSUPP on a kernel without batch reads, ENOSPC when a hash bucket holds more
/// entries than the buffers.
pub fn lookup_batch(
    map: &OwnedFd,
    from: Option<&BatchToken>,
    next: &mut BatchToken,
    key_size: usize,
    keys: &mut [u8],
    values: &mut [u8],
) -> io::Result<(usize, bool)> {
    let count = keys.len() / key_size.max(1);
    if count == 0 || values.len() % count != 0 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut attr = Batch {
        in_batch: from.map_or(0, |t| t.as_ptr() as u64),
        out_batch: next.as_mut_ptr() as u64,
        keys: keys.as_mut_ptr() as u64,
        values: values.as_mut_ptr() as u64,
        count: count as u32,
        map_fd: map.as_raw_fd() as u32,
        elem_flags: 0,
        flags: 0,
    };
    match bpf(BPF_MAP_LOOKUP_BATCH, &mut attr) {
        Ok(_) => Ok((attr.count as usize, true)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok((attr.count as usize, false)),
        Err(e) => Err(e),
    }
}

/// Writes `map[key] = value` (for a per-CPU map, every CPU's value; for a map of maps, the
/// map's fd as a u32).
pub fn update(map: &OwnedFd, key: &[u8], value: &[u8]) -> io::Result<()> {
    let mut attr = MapElem::new(map, key.as_ptr() as u64, value.as_ptr() as u64);
    bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(drop)
}

/// `union bpf_attr`'s `test`.
#[repr(C)]
#[derive(Default)]
struct TestRun {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    /// Explicit, so that it is zero: the kernel refuses (EINVAL) a non-zero byte after the
    /// command's last field, and padding's bytes are whatever the stack held.
    pad: u32,
}

/// Runs `prog` once on the frame `data` (`BPF_PROG_TEST_RUN`, no device): its return value.
pub fn test_run(prog: &OwnedFd, data: &[u8]) -> io::Result<u32> {
    let mut attr = TestRun {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: data.len() as u32,
        data_in: data.as_ptr() as u64,
        repeat: 1,
        ..TestRun::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr)?;
    Ok(attr.retval)
}

/// A test run of an XDP program with a context and flags (`BPF_PROG_TEST_RUN`).
#[derive(Debug, Clone, Copy)]
pub struct XdpTestRun<'a> {
    /// The frame.
    pub data: &'a [u8],
    /// The `struct xdp_md` the run starts from, as bytes.
    pub ctx: &'a [u8],
    /// Runs (with [`BPF_F_TEST_XDP_LIVE_FRAMES`]: frames sent).
    pub repeat: u32,
    /// `BPF_F_TEST_*` flags.
    pub flags: u32,
    /// Frames per kernel batch with live frames (0: the kernel's default).
    pub batch_size: u32,
}

/// Runs an XDP program as `run` says; the program's last return value. With live frames a
/// signal ends the run early: EINTR.
pub fn test_run_xdp(prog: &OwnedFd, run: &XdpTestRun<'_>) -> io::Result<u32> {
    let mut attr = TestRun {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: run.data.len() as u32,
        data_in: run.data.as_ptr() as u64,
        repeat: run.repeat,
        ctx_size_in: run.ctx.len() as u32,
        ctx_in: run.ctx.as_ptr() as u64,
        flags: run.flags,
        batch_size: run.batch_size,
        ..TestRun::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr)?;
    Ok(attr.retval)
}

#[repr(C)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// What a program is loaded as: its type, expected attach type and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgKind {
    /// `enum bpf_prog_type`.
    pub prog_type: u32,
    /// `enum bpf_attach_type` (0: none expected).
    pub expected_attach_type: u32,
    /// `BPF_F_*` load flags.
    pub prog_flags: u32,
}

/// A SCHED_CLS program, for tcx.
pub const SCHED_CLS: ProgKind = ProgKind {
    prog_type: BPF_PROG_TYPE_SCHED_CLS,
    expected_attach_type: 0,
    prog_flags: 0,
};

/// An XDP program for an interface's XDP hook, taking multi-buffer frames.
pub const XDP: ProgKind = ProgKind {
    prog_type: BPF_PROG_TYPE_XDP,
    expected_attach_type: BPF_XDP,
    prog_flags: BPF_F_XDP_HAS_FRAGS,
};

/// Loads a SCHED_CLS program; a refusal is the kernel's error and the verifier's log.
pub fn load_sched_cls(insns: &[u64], name: &str) -> Result<OwnedFd, (io::Error, String)> {
    load(SCHED_CLS, insns, name)
}

/// Loads an XDP program (for `BPF_XDP`, multi-buffer frames taken); a refusal is the
/// kernel's error and the verifier's log.
pub fn load_xdp(insns: &[u64], name: &str) -> Result<OwnedFd, (io::Error, String)> {
    load(XDP, insns, name)
}

/// Loads a program of `kind` named `name` (at most 15 bytes kept); a refusal is the
/// kernel's error and the verifier's log.
///
/// The first load asks for no log: at log level 1 the verifier formats every instruction it
/// walks, which costs more than the verification itself for this program's unrolled walk.
/// Only a refused program is loaded again, with the log, for the error to show the verifier's
/// reason.
pub fn load(kind: ProgKind, insns: &[u64], name: &str) -> Result<OwnedFd, (io::Error, String)> {
    match load_logged(kind, insns, name, None) {
        Ok(fd) => Ok(fd),
        Err(_) => {
            let mut log = vec![0u8; 1 << 20];
            load_logged(kind, insns, name, Some(&mut log)).map_err(|e| {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                (e, String::from_utf8_lossy(&log[..end]).trim().to_string())
            })
        }
    }
}

/// One `BPF_PROG_LOAD` of a program of `kind`, with the verifier's log (level 1) into `log`
/// when given.
fn load_logged(
    kind: ProgKind,
    insns: &[u64],
    name: &str,
    log: Option<&mut [u8]>,
) -> io::Result<OwnedFd> {
    let license = b"Dual MIT/GPL\0";
    let mut prog_name = [0u8; 16];
    let n = name.len().min(15);
    prog_name[..n].copy_from_slice(&name.as_bytes()[..n]);
    let (log_level, log_size, log_buf) = match log {
        Some(log) => (1, log.len() as u32, log.as_mut_ptr() as u64),
        None => (0, 0, 0),
    };
    let mut attr = ProgLoad {
        prog_type: kind.prog_type,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level,
        log_size,
        log_buf,
        kern_version: 0,
        prog_flags: kind.prog_flags,
        prog_name,
        prog_ifindex: 0,
        expected_attach_type: kind.expected_attach_type,
    };
    bpf_fd(BPF_PROG_LOAD, &mut attr)
}

/// `union bpf_attr`'s `link_create` for tcx and XDP: program, interface, attach type, flags,
/// then `tcx.relative_fd` and `tcx.expected_revision` (0: at the end of the chain, any
/// revision; XDP reads none of them, and they stay 0).
#[repr(C)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    relative_fd: u32,
    pad: u32,
    expected_revision: u64,
}

/// Attaches `prog` at `attach_type` (tcx ingress or egress) of `ifindex`; the link detaches
/// when its fd closes.
pub fn tcx_attach(prog: &OwnedFd, ifindex: u32, attach_type: u32) -> io::Result<OwnedFd> {
    bpf_fd(
        BPF_LINK_CREATE,
        &mut LinkCreate {
            prog_fd: prog.as_raw_fd() as u32,
            target_ifindex: ifindex,
            attach_type,
            flags: 0,
            relative_fd: 0,
            pad: 0,
            expected_revision: 0,
        },
    )
}

/// Where an XDP program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// In the driver, on the frame before any skb.
    Native,
    /// Generic XDP: on the skb, at the start of the receive path (a driver without XDP).
    Generic,
}

/// Attaches the XDP program `prog` to `ifindex` in the driver's mode, or, where the driver
/// has no XDP (EOPNOTSUPP), in generic mode; the link detaches when its fd closes. An
/// interface with an XDP program already (in either mode) refuses it: EBUSY or EEXIST.
pub fn xdp_attach(prog: &OwnedFd, ifindex: u32) -> io::Result<(OwnedFd, XdpMode)> {
    let attach = |flags| xdp_link(prog, ifindex, flags);
    match attach(XDP_FLAGS_DRV_MODE) {
        Ok(link) => Ok((link, XdpMode::Native)),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            attach(XDP_FLAGS_SKB_MODE).map(|link| (link, XdpMode::Generic))
        }
        Err(e) => Err(e),
    }
}

/// Attaches the XDP program `prog` to `ifindex` with `flags` ([`XDP_FLAGS_DRV_MODE`] or
/// [`XDP_FLAGS_SKB_MODE`]); the link detaches when its fd closes.
pub fn xdp_link(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    bpf_fd(
        BPF_LINK_CREATE,
        &mut LinkCreate {
            prog_fd: prog.as_raw_fd() as u32,
            target_ifindex: ifindex,
            attach_type: BPF_XDP,
            flags,
            relative_fd: 0,
            pad: 0,
            expected_revision: 0,
        },
    )
}

/// `clock_gettime(clock)` in ns.
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the clocks used always exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// CLOCK_MONOTONIC in ns: the clock of `bpf_ktime_get_ns`.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in ns.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// The index of interface `name` in the calling thread's network namespace.
pub fn ifindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
    // SAFETY: `c` is a NUL-terminated string living across the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(i)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_attributes_have_the_kernels_layout() {
        // union bpf_attr's test member: 15 fields, u64s 8-aligned, 80 bytes with padding.
        assert_eq!(size_of::<TestRun>(), 80);
        assert_eq!(std::mem::offset_of!(TestRun, repeat), 32);
        assert_eq!(std::mem::offset_of!(TestRun, ctx_in), 48);
        assert_eq!(std::mem::offset_of!(TestRun, batch_size), 72);
        assert_eq!(size_of::<LinkCreate>(), 32);
        assert_eq!(size_of::<ProgLoad>(), 72);
    }
}
