//! The benchmark's own system calls, one file a concern: UDP sockets and their receive calls
//! (`udp`), the receiving link (`link`), threads' CPUs (`cpu`), child processes (`process`),
//! anonymous mappings (`mem`), TCP receive with remap (`tcp`), io_uring (`uring`), AF_XDP
//! (`xdp`) and the in-kernel generator (`xdp_live`). Unsafe code is allowed in each file that
//! makes a system call, and only there; `errno` (the return checks) is safe.

#[allow(unsafe_code)]
mod cpu;
mod errno;
#[allow(unsafe_code)]
mod link;
#[allow(unsafe_code)]
mod mem;
#[allow(unsafe_code)]
mod process;
#[allow(unsafe_code)]
pub mod tcp;
#[allow(unsafe_code)]
mod udp;
#[allow(unsafe_code)]
pub mod uring;
#[allow(unsafe_code)]
pub mod xdp;
#[allow(unsafe_code)]
pub mod xdp_live;

pub use cpu::{
    last_cpu, on_last_cpu, pin_task, pin_to_cpu, set_affinity, set_fifo, set_task_affinity,
    task_affinity, thread_cpu, timer_slack_ns,
};
pub use link::{
    busy_poll_rx_packets, gro, ifindex, packet_drops, packet_socket, set_gro, set_tso, tso,
};
pub use mem::Anon;
pub use process::{
    interrupt, kill_children, raise_nofile, signal_name, stat_comm, stat_field, wait_rusage,
};
pub use udp::{
    incoming_napi_id, kick_recv, recvmsg, set_busy_poll, set_udp_gro, udp_socket, Epoll, RecvBatch,
    RecvSlot,
};
/// CLOCK_REALTIME in ns (the clock of kernel receive timestamps).
pub use zcrx_kflows::bpf::realtime_ns;
