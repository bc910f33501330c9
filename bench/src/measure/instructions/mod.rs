//! Instructions per packet under valgrind's callgrind: a deterministic companion to the
//! wall-clock figures, which swing with a shared machine's load. Each workload runs twice in a
//! child `rxbench workload NAME N` under callgrind, with N1 and N2 packets over the same
//! fixed input; (I(N2) - I(N1)) / (N2 - N1) cancels the set-up and leaves the per-packet cost.

pub mod text;

use std::collections::HashMap;
use std::hint::black_box;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use zcrx_capture::pcapfile::{Format, SaveFile};
use zcrx_capture::{Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig, Steering};
use zcrx_flowcache::testdata::{
    account_as_the_table, account_counts_only, bench_flows, tcp6_with_ext, udp4, xorshift_order,
};
use zcrx_flowcache::{extract, FlowId, FlowKey, FlowStats, FlowTable, FlowTableConfig, LinkType};
use zcrx_ring::frames::UdpFlow;

/// The workloads, in report order, with what they measure.
pub const WORKLOADS: [(&str, &str); 17] = [
    ("extract", "extraction, Ethernet/IPv4/UDP, 256 flows"),
    (
        "extract-ipv6-ext",
        "extraction, Ethernet/IPv6/two extension headers/TCP (not the fast path's shape)",
    ),
    ("flowtable-256", "extract + FlowTable::track, 256 flows"),
    (
        "flowtable-iter-256",
        "FlowTable::track on each input of an iterator extracting each packet (flowtable-batch-iter-256's walk), 256 flows",
    ),
    (
        "flowtable-vec-256",
        "extract into a Vec of 256 inputs + FlowTable::track over it, one call a packet, 256 flows",
    ),
    (
        "flowtable-batch-256",
        "extract into a Vec of 256 inputs + one FlowTable::track_batch over it, 256 flows",
    ),
    (
        "flowtable-batch-iter-256",
        "FlowTable::track_batch over an iterator extracting each packet, one call for the whole run, 256 flows",
    ),
    (
        "hashbrown-256",
        "extract + hashbrown/foldhash entry, the table's accounting, 256 flows",
    ),
    (
        "hashbrown-counts-256",
        "extract + hashbrown/foldhash entry, counts only (the lighter baseline), 256 flows",
    ),
    (
        "flowtable-65536",
        "extract + FlowTable::track, 65 536 flows",
    ),
    (
        "hashbrown-65536",
        "extract + hashbrown/foldhash entry, the table's accounting, 65 536 flows",
    ),
    (
        "stage",
        "pipeline stage, 256 flows, 64 B, zero-copy to one inline consumer",
    ),
    (
        "stage-threaded",
        "pipeline stage and one consumer thread, 256 flows, 64 B, zero-copy (both threads' instructions)",
    ),
    (
        "stage-tcp",
        "pipeline stage, 256 TCP connections, 64 B, zero-copy to one inline consumer (stage-tcp-state's traffic)",
    ),
    (
        "stage-tcp-state",
        "pipeline stage following TCP states (zcap --flows), 256 TCP connections, 64 B, zero-copy to one inline consumer",
    ),
    (
        "stage-steering-off",
        "pipeline stage without flows (zcap -w), 64 B",
    ),
    (
        "zcap-writer",
        "zcap -w /dev/null's walk of each block and its writer (pcap), 64 B, the zcap binary beside rxbench",
    ),
];

/// The function `zcap-writer` counts (callgrind's --toggle-collect): the walk of a block with
/// zcap's writer taking its packets (`Consumer::packets`), what `zcap -w` runs per packet;
/// the pcap file reading of `zcap -r` around it is not zcap's live path.
const ZCAP_WRITER: &str = "*zcrx_capture::pipeline::deliver::Deliverer<C>::block";

/// One workload's figure.
#[derive(Debug, Clone, Serialize)]
pub struct Instructions {
    /// Workload name.
    pub workload: String,
    /// What it does.
    pub what: String,
    /// Instructions per packet.
    pub per_packet: f64,
}

/// Runs every workload under callgrind (valgrind must be installed).
pub fn measure(names: &[String]) -> Result<Vec<Instructions>> {
    let exe = std::env::current_exe().context("finding rxbench itself")?;
    let (n1, n2) = (200_000u64, 1_200_000u64);
    let mut out = Vec::new();
    for (name, what) in WORKLOADS {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        // zcap's consumer runs in zcap, over a capture file of the stream's frames.
        let zcap_input = (name == "zcap-writer")
            .then(|| ZcapInput::new(n2))
            .transpose()?;
        let count = |n: u64| -> Result<u64> {
            let mut cmd = Command::new("valgrind");
            cmd.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"]);
            match &zcap_input {
                Some(file) => cmd
                    .arg(format!("--toggle-collect={ZCAP_WRITER}"))
                    .arg(exe.with_file_name("zcap"))
                    .arg("-r")
                    .arg(file.path())
                    .args(["-c", &n.to_string(), "-w", "/dev/null"])
                    // valgrind does not implement seccomp(2); the sandbox is entered once at
                    // set-up and adds no instruction to the packet path counted here.
                    .arg("--no-sandbox"),
                None => cmd.arg(&exe).args(["workload", name, &n.to_string()]),
            };
            let o = cmd
                .output()
                .context("running valgrind (apt install valgrind)")?;
            let err = String::from_utf8_lossy(&o.stderr);
            if !o.status.success() {
                bail!("callgrind {name} {n}: {err}");
            }
            err.lines()
                .find_map(|l| l.split("Collected : ").nth(1))
                .and_then(|v| v.trim().parse().ok())
                .with_context(|| format!("no instruction count from callgrind: {err}"))
        };
        let (i1, i2) = (count(n1)?, count(n2)?);
        if i2 <= i1 {
            bail!("{name}: no per-packet instructions counted ({i1}, {i2}): was {ZCAP_WRITER} inlined?");
        }
        let per_packet = i2.saturating_sub(i1) as f64 / (n2 - n1) as f64;
        eprintln!("{name}: {per_packet:.1} instructions/packet");
        out.push(Instructions {
            workload: name.to_string(),
            what: what.to_string(),
            per_packet,
        });
    }
    Ok(out)
}

/// A pcap file of `packets` UDP frames of 256 flows, for `zcap -r`; removed
/// when dropped.
struct ZcapInput(std::path::PathBuf);

impl ZcapInput {
    fn new(packets: u64) -> Result<ZcapInput> {
        let path = std::env::temp_dir().join(format!("rxbench-zcap-{}.pcap", std::process::id()));
        let input = ZcapInput(path);
        let file = std::fs::File::create(&input.0)
            .with_context(|| format!("creating {}", input.0.display()))?;
        // Not `stream`: a second caller changes how it is inlined into the other workloads,
        // and with it their loops' instruction counts.
        let frames: Vec<Vec<u8>> = (0..256u32)
            .map(|i| {
                udp4(
                    [198, 18, 0, i as u8],
                    [198, 19, 0, 1],
                    1024 + i as u16,
                    53,
                    18,
                )
            })
            .collect();
        let mut save = SaveFile::new(file, Format::Pcap, 1, 262_144);
        for i in 0..packets {
            let f = &frames[(i % 256) as usize];
            save.write(i * 1000, f.len() as u32, f, None)
                .context("writing the capture file")?;
        }
        save.flush().context("writing the capture file")?;
        Ok(input)
    }
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ZcapInput {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// 64-byte frames of `flows` UDP flows laid out one after another in a random flow order,
/// 65 536 packets or two per flow (the criterion bench's stream).
pub(crate) fn stream(flows: u32) -> (Vec<u8>, usize) {
    let frames = bench_flows(flows as usize);
    let len = frames[0].len();
    let n = (flows as usize * 2).max(1 << 16);
    let mut bytes = Vec::with_capacity(n * 64);
    for i in xorshift_order(flows as usize, n) {
        let f = &frames[i as usize];
        bytes.extend_from_slice(f);
        bytes.resize(bytes.len() + 64 - f.len(), 0);
    }
    (bytes, len)
}

/// The stream's first `n` frames, numbered: `each(i, frame)` for every packet, walked in
/// runs that stay inside the stream (a pointer stepping 64 bytes and one compare a packet,
/// one division a run). The table workloads and their hashbrown baselines walk the stream
/// so: the leanest loop, so that the count is what the table or the map does with a
/// packet; a walk with more state (an iterator, an index modulo the stream) moves every
/// count by register allocation alone, by up to a sixth.
#[inline(always)]
fn walk(bytes: &[u8], len: usize, n: u64, mut each: impl FnMut(u64, &[u8])) {
    assert!(len <= 64 && bytes.len() % 64 == 0 && !bytes.is_empty());
    let count = (bytes.len() / 64) as u64;
    let mut i = 0;
    while i < n {
        let at = i % count;
        let run = (n - i).min(count - at);
        for c in bytes[(at * 64) as usize..][..(run * 64) as usize].chunks_exact(64) {
            each(i, &c[..len]);
            i += 1;
        }
    }
}

/// The stream's first `packets` frames, numbered, round and round, as an iterator: what the
/// workloads that compare `track` with `track_batch` walk, each pair the same way.
#[inline(always)]
fn packets(bytes: &[u8], len: usize, packets: u64) -> impl Iterator<Item = (u64, &[u8])> {
    assert!(len <= 64 && bytes.len() % 64 == 0 && !bytes.is_empty());
    bytes
        .chunks_exact(64)
        .cycle()
        .zip(0..packets)
        .map(move |(c, i)| (i, &c[..len]))
}

/// The hashbrown baseline's accounting of one packet of flow `key` (as extracted): its
/// canonical key's entry, counted in the packet's direction with exactly the accounting the
/// table does (`account_as_the_table`; the criterion bench's baseline does the same). Shared
/// by the `hashbrown-*` workloads and `rxbench table`.
#[inline(always)]
pub(crate) fn hashbrown_account<S: std::hash::BuildHasher>(
    h: &mut hashbrown::HashMap<FlowKey, FlowStats, S>,
    key: FlowKey,
    len: u32,
    ts: u64,
    tcp_flags: u8,
) {
    let (k, d) = key.canonical();
    account_as_the_table(h.entry(k).or_default(), k, d, len, ts, tcp_flags);
}

/// A flow id as a number to sum, both its halves used: how the table workloads consume each
/// packet's answer without a store per packet.
#[inline(always)]
pub(crate) fn id_value(id: FlowId) -> usize {
    id.slot() + id.generation() as usize
}

/// [`hashbrown_account`] with lighter accounting (`account_counts_only`: no TCP flags, the
/// last time stored rather than compared): what a table that only counts costs.
#[inline(always)]
pub(crate) fn hashbrown_count<S: std::hash::BuildHasher>(
    h: &mut hashbrown::HashMap<FlowKey, FlowStats, S>,
    key: FlowKey,
    len: u32,
    ts: u64,
) {
    let (k, d) = key.canonical();
    account_counts_only(h.entry(k).or_default(), k, d, len, ts);
}

/// Runs workload `name` over `packets` packets (the child side of [`measure`]).
pub fn run_workload(name: &str, packets: u64) -> Result<()> {
    match name {
        "extract-ipv6-ext" => extract_ipv6_ext(packets),
        "extract"
        | "flowtable-256"
        | "flowtable-65536"
        | "hashbrown-256"
        | "hashbrown-counts-256"
        | "hashbrown-65536" => table_workload(name, packets),
        "flowtable-iter-256" => batch_workload(Batch::TrackIter, packets),
        "flowtable-vec-256" => batch_workload(Batch::Track, packets),
        "flowtable-batch-256" => batch_workload(Batch::Vec, packets),
        "flowtable-batch-iter-256" => batch_workload(Batch::Iterator, packets),
        "stage" => stage_workload(true, (false, false), Consumers::Inline, packets)?,
        "stage-threaded" => stage_workload(true, (false, false), Consumers::threads(1), packets)?,
        "stage-tcp" => stage_workload(true, (true, false), Consumers::Inline, packets)?,
        "stage-tcp-state" => stage_workload(true, (true, true), Consumers::Inline, packets)?,
        "stage-steering-off" => stage_workload(false, (false, false), Consumers::Inline, packets)?,
        other => bail!("unknown workload {other:?}"),
    }
    Ok(())
}

/// IPv6 with two extension headers: not the fast path's shape.
#[inline(never)]
fn extract_ipv6_ext(packets: u64) {
    let frames: Vec<Vec<u8>> = (0..256u16)
        .map(|i| {
            let mut a = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
            a[14] = (i >> 8) as u8;
            a[15] = i as u8;
            let b = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
            tcp6_with_ext(a, b, 1024 + i, 443, 0x10)
        })
        .collect();
    for i in 0..packets {
        let f = &frames[(i % 256) as usize];
        black_box(&extract(LinkType::Ethernet, black_box(f), None));
    }
}

/// How `batch_workload` hands its packets to the table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Batch {
    /// `track` called on each input of an extracting iterator.
    TrackIter,
    /// A Vec of inputs filled, then `track` called on each.
    Track,
    /// A Vec of inputs filled, then one `track_batch` over it.
    Vec,
    /// One `track_batch` over an iterator that extracts each packet as the table asks.
    Iterator,
}

/// The flow table in an embedder's loop over the stream of 256 flows, as `how` says (the Vec
/// workloads 256 packets at a time, the iterator ones in one loop). A function of its own, as
/// `table_workload`.
#[inline(never)]
fn batch_workload(how: Batch, n: u64) {
    let f = 256u32;
    let (bytes, len) = stream(f);
    const BATCH: usize = 256;
    let mut t = FlowTable::new(FlowTableConfig::with_capacity(f as usize * 2).with_seed(Some(1)))
        .expect("capacity within MAX_CAPACITY");
    // Each loop its own closure, used once (one closure shared by both loops is not inlined
    // into either, and the count would be of the call).
    macro_rules! input {
        () => {
            |(i, frame): (u64, &[u8])| {
                let x = extract(LinkType::Ethernet, frame, None).expect("our frames");
                zcrx_flowcache::TrackInput {
                    key: x.key,
                    len: len as u32,
                    ts_ns: i,
                    tcp_flags: x.tcp_flags,
                }
            }
        };
    }
    let mut stream = packets(&bytes, len, n);
    let mut ids = 0usize;
    // One loop for each, so that the counted loop carries no branch between them.
    if how == Batch::TrackIter {
        for p in stream.map(input!()) {
            ids += id_value(t.track(p).id);
        }
    } else if how == Batch::Iterator {
        // One call over every packet: the loop is track_batch's, the walk the same as
        // flowtable-iter-256's loop of `track`.
        t.track_batch(stream.map(input!()), |_, r| ids += id_value(r.id));
    } else if how == Batch::Track {
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            batch.extend(stream.by_ref().take(BATCH).map(input!()));
            if batch.is_empty() {
                break;
            }
            for p in &batch {
                ids += id_value(t.track(*p).id);
            }
        }
    } else {
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            batch.extend(stream.by_ref().take(BATCH).map(input!()));
            if batch.is_empty() {
                break;
            }
            t.track_batch(&batch, |_, r| ids += id_value(r.id));
        }
    }
    black_box(ids);
}

/// Extraction alone, or with the flow table, or with hashbrown, over the stream.
// Each workload is a function of its own (never inlined into the dispatcher), so that its
// loop's code, and with it the count, does not change with the code of the program around it.
#[inline(never)]
fn table_workload(name: &str, n: u64) {
    let f = name
        .rsplit('-')
        .next()
        .and_then(|f| f.parse::<u32>().ok())
        .unwrap_or(256);
    let (bytes, len) = stream(f);
    if name == "extract" {
        walk(&bytes, len, n, |_, frame| {
            black_box(&extract(LinkType::Ethernet, black_box(frame), None));
        });
    } else if name.starts_with("flowtable") {
        let mut t =
            FlowTable::new(FlowTableConfig::with_capacity(f as usize * 2).with_seed(Some(1)))
                .expect("capacity within MAX_CAPACITY");
        let mut ids = 0usize;
        walk(&bytes, len, n, |i, frame| {
            let x = extract(LinkType::Ethernet, frame, None).expect("our frames");
            ids += id_value(
                t.track(zcrx_flowcache::TrackInput {
                    key: x.key,
                    len: len as u32,
                    ts_ns: i,
                    tcp_flags: x.tcp_flags,
                })
                .id,
            );
        });
        black_box(ids);
    } else {
        let mut h: hashbrown::HashMap<FlowKey, FlowStats, foldhash::fast::RandomState> =
            hashbrown::HashMap::with_capacity_and_hasher(
                f as usize * 2,
                foldhash::fast::RandomState::default(),
            );
        // One loop per accounting, so that the counted loop carries no branch between them.
        if name.starts_with("hashbrown-counts") {
            walk(&bytes, len, n, |i, frame| {
                let x = extract(LinkType::Ethernet, frame, None).expect("our frames");
                hashbrown_count(&mut h, x.key, len as u32, i);
            });
        } else {
            walk(&bytes, len, n, |i, frame| {
                let x = extract(LinkType::Ethernet, frame, None).expect("our frames");
                hashbrown_account(&mut h, x.key, len as u32, i, x.tcp_flags);
            });
        }
        black_box(h.len());
    }
}

/// The pipeline's stage over a replayed synthetic ring, one zero-copy consumer; `(tcp,
/// states)`: over TCP connections, and the table following their states.
#[inline(never)]
fn stage_workload(
    steering: bool,
    (tcp, states): (bool, bool),
    consumers: Consumers,
    packets: u64,
) -> Result<()> {
    let ring = if tcp {
        tcp_ring(256, 1 << 20, 16)?
    } else {
        let flows: Vec<UdpFlow> = (0..256).map(UdpFlow::synthetic).collect();
        zcrx_ring::frames::replay_ring(&flows, 64, 1 << 20, 16)?
    };
    let config = PipelineConfig::builder()
        .consumers(consumers)
        .delivery(Delivery::ZeroCopy)
        .steering(if steering {
            Steering::Flows(FlowTableConfig::default().with_tcp_state(states))
        } else {
            Steering::Off
        })
        .max_packets(packets)
        .build()?;
    let mut seen = HashMap::new();
    let run = Pipeline::new(&ring, config).run(
        |_| {
            |d: &Delivered<'_>| {
                black_box(d.data()[0]);
            }
        },
        Hooks::new().on_flow_end(|r| {
            seen.insert(r.stats.key, r.stats.total_packets());
        }),
    )?;
    if run.stats.packets != packets {
        bail!("stage: {} of {packets} packets", run.stats.packets);
    }
    Ok(())
}

/// A replaying synthetic ring of `blocks` blocks of `block_size` bytes holding 64-byte
/// Ethernet/IPv4/TCP frames of `flows` connections in turn: each opens with its handshake
/// (SYN, SYN-ACK), then both sides send 10 bytes a segment in turn, sequence numbers going
/// forward (a replayed ring starts each connection over, which its state sees as
/// retransmissions once a round).
fn tcp_ring(flows: u16, block_size: usize, blocks: usize) -> Result<zcrx_ring::SyntheticRing> {
    // A frame and its ring header take 144 bytes of a block.
    let n = blocks * (block_size - 48) / 144;
    let frames = (0..n).map(|s| {
        let (flow, k) = (
            (s % usize::from(flows)) as u16,
            (s / usize::from(flows)) as u32,
        );
        zcrx_ring::Frame::new(tcp_frame(flow, k))
    });
    Ok(zcrx_ring::SyntheticRing::builder()
        .block_size(block_size)
        .replay(true)
        .build(frames)?)
}

/// Segment `k` of connection `flow` (198.18.0.x:1024+flow to 198.19.0.1:80), 64 bytes.
fn tcp_frame(flow: u16, k: u32) -> Vec<u8> {
    let (syn, syn_ack, psh_ack) = (0x02u8, 0x12u8, 0x18u8);
    let client = [198, 18, (flow >> 8) as u8, flow as u8];
    let server = [198, 19, 0, 1];
    let (cport, sport) = (1024 + flow, 80u16);
    // Initial sequence numbers 1000 (client) and 5000 (server); 10 bytes a data segment, the
    // client's at even k from 2, the server's at odd k from 3.
    let client_sent = k.saturating_sub(1) / 2 * 10;
    let server_sent = k.saturating_sub(2) / 2 * 10;
    let (fwd, flags, seq, ack, payload) = match k {
        0 => (true, syn, 1000, 0, 0),
        1 => (false, syn_ack, 5000, 1001, 0),
        _ if k % 2 == 0 => (true, psh_ack, 1001 + client_sent, 5001 + server_sent, 10),
        _ => (false, psh_ack, 5001 + server_sent, 1001 + client_sent, 10),
    };
    let (src, dst, sp, dp) = if fwd {
        (client, server, cport, sport)
    } else {
        (server, client, sport, cport)
    };
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    let ip_len = (20 + 20 + payload) as u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    let c = zcrx_ring::frames::ipv4_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&sp.to_be_bytes());
    f.extend_from_slice(&dp.to_be_bytes());
    f.extend_from_slice(&u32::to_be_bytes(seq));
    f.extend_from_slice(&u32::to_be_bytes(ack));
    f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(64, 0);
    f
}
