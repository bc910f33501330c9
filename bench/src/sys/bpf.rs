//! The `bpf(2)` system call as rxbench uses it, for the AF_XDP redirect program (`xdp`) and
//! the in-kernel generator (`xdp_live`): instructions assembled by hand, maps created and
//! read, XDP programs loaded with the verifier's log kept for the error.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::check;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_TYPE_XDP: u32 = 6;

/// One BPF instruction (`struct bpf_insn`): opcode, dst/src registers, offset, immediate.
pub const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    (code as u64)
        | (((dst & 0xf) | ((src & 0xf) << 4)) as u64) << 8
        | ((off as u16) as u64) << 16
        | ((imm as u32) as u64) << 32
}

/// `bpf(cmd, attr, sizeof attr)`: the raw return (0, or a new fd for the creating commands).
pub fn bpf<T>(cmd: libc::c_long, attr: &T) -> io::Result<libc::c_int> {
    // SAFETY: `attr` is a repr(C) prefix of `union bpf_attr` for `cmd`, of the size passed,
    // living across the call; the pointers inside it are the caller's to keep valid.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *const T).cast::<libc::c_void>(),
            size_of::<T>() as libc::c_long,
        )
    };
    check(r as libc::c_int)
}

/// `bpf(cmd, attr)` for a command that returns a new fd (map create, program load, link).
pub fn bpf_fd<T>(cmd: libc::c_long, attr: &T) -> io::Result<OwnedFd> {
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
}

#[repr(C)]
struct MapElem {
    map_fd: u32,
    pad: u32,
    key: u64,
    value: u64,
    flags: u64,
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

/// A map of `max_entries` values of `V` under `u32` keys.
pub fn create_map<V>(map_type: u32, max_entries: u32) -> io::Result<OwnedFd> {
    bpf_fd(
        BPF_MAP_CREATE,
        &MapCreate {
            map_type,
            key_size: 4,
            value_size: size_of::<V>() as u32,
            max_entries,
            map_flags: 0,
        },
    )
}

/// Sets `map[key] = value`.
pub fn update_elem<V>(map: &OwnedFd, key: u32, value: &V) -> io::Result<()> {
    map_elem(BPF_MAP_UPDATE_ELEM, map, key, value as *const V as u64)
}

/// Reads `map[key]` into `value`.
pub fn lookup_elem<V>(map: &OwnedFd, key: u32, value: &mut V) -> io::Result<()> {
    map_elem(BPF_MAP_LOOKUP_ELEM, map, key, value as *mut V as u64)
}

/// One element command on `map` at `key`, with the value at address `value` (a `V` the
/// caller borrows for the call, so the kernel reads or writes live memory).
fn map_elem(cmd: libc::c_long, map: &OwnedFd, key: u32, value: u64) -> io::Result<()> {
    let attr = MapElem {
        map_fd: map.as_raw_fd() as u32,
        pad: 0,
        key: &key as *const u32 as u64,
        value,
        flags: 0,
    };
    bpf(cmd, &attr).map(drop)
}

/// Loads an XDP program named `name` (at most 15 bytes). A refusal is the kernel's error and
/// the verifier's log.
pub fn load_xdp(
    insns: &[u64],
    name: &str,
    expected_attach_type: u32,
) -> Result<OwnedFd, (io::Error, String)> {
    let license = b"Dual MIT/GPL\0";
    let mut log = vec![0u8; 65536];
    let mut prog_name = [0u8; 16];
    let n = name.len().min(15);
    prog_name[..n].copy_from_slice(&name.as_bytes()[..n]);
    let attr = ProgLoad {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        kern_version: 0,
        prog_flags: 0,
        prog_name,
        prog_ifindex: 0,
        expected_attach_type,
    };
    bpf_fd(BPF_PROG_LOAD, &attr).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        (e, String::from_utf8_lossy(&log[..end]).trim().to_string())
    })
}
