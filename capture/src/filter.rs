//! tcpdump filter expressions, compiled to classic BPF by libpcap (feature `bpf-compile`;
//! needs libpcap installed): one program serves the kernel (a socket filter on the ring) and
//! files (run in user space on each frame).

/// A compiled filter expression, or the filter that accepts every frame (the empty
/// expression, as tcpdump treats it: [`Filter::accept_all`]).
pub struct Filter {
    /// `None`: every frame passes, with no program to run.
    program: Option<pcap::BpfProgram>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.program {
            Some(p) => f
                .debug_struct("Filter")
                .field("instructions", &p.get_instructions().len())
                .finish(),
            None => f.write_str("Filter(accept all)"),
        }
    }
}

/// `BPF_RET | BPF_K` (linux/bpf_common.h): return the constant `k`.
const BPF_RET_K: u16 = 0x06;
/// The snapshot length of libpcap's dead handles (`pcap_open_dead` in the `pcap` crate).
const DEAD_SNAPLEN: u32 = 65_535;
/// What an accepting program returns: the bytes to keep, libpcap's default snapshot length
/// (a ring caps it at its own snaplen).
const ACCEPT_BYTES: u32 = 262_144;

/// Why an expression could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// libpcap refused the link type or could not open a dead handle.
    #[error("libpcap: {0}")]
    Libpcap(String),
    /// The expression does not compile.
    #[error("filter {expr:?}: {reason}")]
    Compile {
        /// The filter expression as given.
        expr: String,
        /// libpcap's message.
        reason: String,
    },
    /// libpcap printed an instruction in a form this crate cannot read.
    #[error("libpcap printed BPF instruction {0:?}, expected `code jt jf k`")]
    BadInstruction(String),
}

impl Filter {
    /// Compiles `expr` (tcpdump syntax) for frames of `linktype` (LINKTYPE_*, 1 for
    /// Ethernet). An empty (or all-blank) expression is [`Filter::accept_all`], as in
    /// tcpdump: every frame passes, and [`Filter::accepts_all`] tells a ring it needs no
    /// socket filter. The program accepts with libpcap's default snapshot length; a ring
    /// caps it at its own snaplen.
    pub fn compile(expr: &str, linktype: u32) -> Result<Filter, FilterError> {
        Filter::compile_with(expr, linktype, true)
    }

    /// [`Filter::compile`], optimised or not (tcpdump's `-O` turns libpcap's optimiser off).
    pub fn compile_with(expr: &str, linktype: u32, optimize: bool) -> Result<Filter, FilterError> {
        if expr.trim().is_empty() {
            return Ok(Filter::accept_all());
        }
        let dlt = i32::try_from(linktype_to_dlt(linktype))
            .map_err(|_| FilterError::Libpcap(format!("link type {linktype} out of range")))?;
        let dead = pcap::Capture::dead_with_precision(pcap::Linktype(dlt), pcap::Precision::Nano)
            .map_err(|e| FilterError::Libpcap(e.to_string()))?;
        dead.compile(expr, optimize)
            .map(|program| Filter {
                program: Some(program),
            })
            .map_err(|e| FilterError::Compile {
                expr: expr.to_string(),
                reason: e.to_string(),
            })
    }

    /// The filter every frame passes (what the empty expression compiles to).
    pub fn accept_all() -> Filter {
        Filter { program: None }
    }

    /// Every frame passes: there is no program to run, and a ring needs no socket filter.
    pub fn accepts_all(&self) -> bool {
        self.program.is_none()
    }

    /// Whether `frame` passes (the program run in user space, for files).
    pub fn matches(&self, frame: &[u8]) -> bool {
        self.program.as_ref().is_none_or(|p| p.filter(frame))
    }

    /// The program as socket filter instructions for the ring (parsed from libpcap's text
    /// form `code jt jf k`, which is all the pcap crate exposes). [`Filter::accept_all`]
    /// gives the one instruction that accepts every frame; attaching none at all costs less
    /// ([`Filter::accepts_all`]).
    pub fn socket_filter(&self) -> Result<Vec<libc::sock_filter>, FilterError> {
        let Some(program) = &self.program else {
            return Ok(vec![libc::sock_filter {
                code: BPF_RET_K,
                jt: 0,
                jf: 0,
                k: ACCEPT_BYTES,
            }]);
        };
        program
            .get_instructions()
            .iter()
            .map(|i| {
                let t = i.to_string();
                let f: Vec<u32> = t
                    .split_whitespace()
                    .map(|x| x.parse::<u32>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| FilterError::BadInstruction(t.clone()))?;
                match f[..] {
                    [code, jt, jf, k] => Ok(libc::sock_filter {
                        code: u16::try_from(code)
                            .map_err(|_| FilterError::BadInstruction(t.clone()))?,
                        jt: u8::try_from(jt).map_err(|_| FilterError::BadInstruction(t.clone()))?,
                        jf: u8::try_from(jf).map_err(|_| FilterError::BadInstruction(t.clone()))?,
                        k,
                    }),
                    _ => Err(FilterError::BadInstruction(t)),
                }
            })
            .collect()
    }

    /// [`Filter::socket_filter`] behind a prefix that refuses the loopback interface's
    /// outgoing copies (`lo_ifindex`: loopback's interface index): on loopback the kernel
    /// hands a packet socket every packet twice, once going out and once coming in, and
    /// libpcap keeps only the incoming copy. For a ring on `lo` or on `any` whose flows,
    /// counts or files should see each packet once; the prefix reads the packet type and
    /// the interface index (ancillary loads), so it works on cooked and Ethernet rings alike.
    pub fn socket_filter_without_loopback_copies(
        &self,
        lo_ifindex: u32,
    ) -> Result<Vec<libc::sock_filter>, FilterError> {
        const LD_W_ABS: u16 = 0x20;
        const JEQ_K: u16 = 0x15;
        // SKF_AD_OFF (-0x1000) plus the ancillary field, as the kernel reads the offset.
        let ancillary = |field: i32| (libc::SKF_AD_OFF + field) as u32;
        let insn = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
        let mut p = vec![
            insn(LD_W_ABS, 0, 0, ancillary(libc::SKF_AD_PKTTYPE)),
            // Not outgoing: on to the program (3 ahead).
            insn(JEQ_K, 0, 3, u32::from(libc::PACKET_OUTGOING)),
            insn(LD_W_ABS, 0, 0, ancillary(libc::SKF_AD_IFINDEX)),
            // Outgoing, not on loopback: on to the program (1 ahead).
            insn(JEQ_K, 0, 1, lo_ifindex),
            insn(BPF_RET_K, 0, 0, 0),
        ];
        // The program's jumps are relative: they hold behind a prefix.
        p.extend(self.socket_filter()?);
        Ok(p)
    }
}

/// A socket filter prefix that keeps one packet in `one_in` (2 or more), each packet with
/// the same chance and on its own, and refuses the others before anything else runs or any
/// byte is copied: the kernel's pseudo-random number (an ancillary load, SKF_AD_RANDOM)
/// modulo `one_in`, kept when 0. A program follows it ([`Filter::socket_filter`], or one
/// behind [`Filter::socket_filter_without_loopback_copies`]'s prefix): its relative jumps
/// hold behind it. `one_in` of 0 or 1 gives no prefix (every packet kept).
pub fn sampling_prefix(one_in: u32) -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = 0x20;
    const ALU_MOD_K: u16 = 0x94;
    const JEQ_K: u16 = 0x15;
    if one_in < 2 {
        return Vec::new();
    }
    let insn = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    vec![
        insn(
            LD_W_ABS,
            0,
            0,
            (libc::SKF_AD_OFF + libc::SKF_AD_RANDOM) as u32,
        ),
        insn(ALU_MOD_K, 0, 0, one_in),
        // Kept: past the refusal, on to the program.
        insn(JEQ_K, 1, 0, 0),
        insn(BPF_RET_K, 0, 0, 0),
    ]
}

/// libpcap's filters are compiled for a DLT_* code, files and zcap name LINKTYPE_* codes:
/// equal except for the few DLT_* codes that differ between platforms, which have their own
/// LINKTYPE_* codes (libpcap's linktype_to_dlt); these are Linux's values.
fn linktype_to_dlt(linktype: u32) -> u32 {
    match linktype {
        100 => 11, // ATM_RFC1483
        101 => 12, // RAW (raw IP: `-i any` rings before the SLL2 header is added)
        102 => 15, // SLIP_BSDOS
        103 => 16, // PPP_BSDOS
        106 => 19, // ATM_CLIP
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ip_filters_compile_for_dlt_raw() {
        let f = Filter::compile("udp port 53", 101).unwrap();
        let dns = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 10);
        let other = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 80, 10);
        // Raw IP: the frame without its 14-byte Ethernet header.
        assert!(f.matches(&dns[14..]));
        assert!(!f.matches(&other[14..]));
        assert!(!f.matches(&dns));
    }

    #[test]
    fn the_sampling_prefix_keeps_one_in_n_and_jumps_past_its_refusal() {
        assert!(sampling_prefix(0).is_empty());
        assert!(sampling_prefix(1).is_empty());
        let p = sampling_prefix(10);
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].k, (libc::SKF_AD_OFF + libc::SKF_AD_RANDOM) as u32);
        assert_eq!((p[1].code, p[1].k), (0x94, 10));
        // Equal to 0: one ahead, past the `ret #0` that refuses the rest.
        assert_eq!((p[2].jt, p[2].jf, p[2].k), (1, 0, 0));
        assert_eq!((p[3].code, p[3].k), (BPF_RET_K, 0));
    }

    #[test]
    fn dumps_as_tcpdump_does() {
        let d = dump("", 1, true, 1, 262_144).unwrap();
        assert_eq!(d, "(000) ret      #262144\n");
        let d = dump("udp", 1, true, 3, 262_144).unwrap();
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0].parse::<usize>().unwrap(), lines.len() - 1);
        let d = dump("udp", 1, true, 2, 262_144).unwrap();
        assert!(d.starts_with("{ 0x28, 0, 0, 0x0000000c },"), "{d}");
        assert!(dump("udp port x", 1, true, 1, 262_144).is_err());
    }

    #[test]
    fn compiles_runs_and_converts() {
        let all = Filter::compile("  ", 1).unwrap();
        assert!(all.accepts_all());
        assert!(all.matches(&[]));
        let ret = all.socket_filter().unwrap();
        assert_eq!((ret.len(), ret[0].code, ret[0].k), (1, 0x06, 262_144));
        let f = Filter::compile("udp port 53", 1).unwrap();
        assert!(!f.accepts_all());
        let dns = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 10);
        let other = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 80, 10);
        assert!(f.matches(&dns));
        assert!(!f.matches(&other));
        let insns = f.socket_filter().unwrap();
        assert!(insns.len() > 4);
        // The last instruction of a libpcap program returns.
        assert_eq!(insns.last().unwrap().code, 0x06);
        let e = Filter::compile("udp port notaport", 1).unwrap_err();
        assert!(e.to_string().contains("notaport"), "{e}");
    }
}

/// The libpcap the filters are compiled with, as it names itself at run time (e.g.
/// "libpcap version 1.10.3 (with TPACKET_V3)").
pub fn libpcap_version() -> String {
    sys::lib_version()
}

/// `expr` compiled for `linktype` (optimised unless `optimize` is false, tcpdump's `-O`), as
/// tcpdump's `-d` (`level` 1: libpcap's readable listing), `-dd` (2: a C array) and `-ddd`
/// (3: the count, then decimal `code jt jf k` lines) print it; the empty expression is the
/// one instruction that accepts every frame. Accepting returns `snaplen` bytes, as a capture
/// with that snapshot length compiles it.
pub fn dump(
    expr: &str,
    linktype: u32,
    optimize: bool,
    level: u8,
    snaplen: u32,
) -> Result<String, FilterError> {
    let dlt = i32::try_from(linktype_to_dlt(linktype))
        .map_err(|_| FilterError::Libpcap(format!("link type {linktype} out of range")))?;
    let dead = pcap::Capture::dead_with_precision(pcap::Linktype(dlt), pcap::Precision::Nano)
        .map_err(|e| FilterError::Libpcap(e.to_string()))?;
    let program = dead
        .compile(expr, optimize)
        .map_err(|e| FilterError::Compile {
            expr: expr.to_string(),
            reason: e.to_string(),
        })?;
    let mut insns = Filter {
        program: Some(program),
    }
    .socket_filter()?;
    // A dead handle has libpcap's dead snapshot length (65535): its accepting returns are
    // given the capture's.
    for i in insns
        .iter_mut()
        .filter(|i| i.code == BPF_RET_K && i.k == DEAD_SNAPLEN)
    {
        i.k = snaplen;
    }
    let mut out = String::new();
    use std::fmt::Write as _;
    match level {
        0 | 1 => {
            for (i, insn) in insns.iter().enumerate() {
                let _ = writeln!(out, "{}", sys::image(insn, i));
            }
        }
        2 => {
            for i in &insns {
                let _ = writeln!(
                    out,
                    "{{ 0x{:x}, {}, {}, 0x{:08x} }},",
                    i.code, i.jt, i.jf, i.k
                );
            }
        }
        _ => {
            let _ = writeln!(out, "{}", insns.len());
            for i in &insns {
                let _ = writeln!(out, "{} {} {} {}", i.code, i.jt, i.jf, i.k);
            }
        }
    }
    Ok(out)
}

/// The libpcap calls the `pcap` crate does not wrap.
mod sys {
    #![allow(unsafe_code)]

    extern "C" {
        fn pcap_lib_version() -> *const std::ffi::c_char;
        fn bpf_image(insn: *const libc::sock_filter, n: std::ffi::c_int) -> *mut std::ffi::c_char;
    }

    /// libpcap's text of one instruction (`n`: its index), as tcpdump -d prints it.
    pub(super) fn image(insn: &libc::sock_filter, n: usize) -> String {
        let n = std::ffi::c_int::try_from(n).unwrap_or(std::ffi::c_int::MAX);
        // SAFETY: `struct bpf_insn` and `struct sock_filter` are the same four fields (u16, u8,
        // u8, u32) in the same layout; bpf_image only reads the one instruction it is given
        // and returns a pointer to a NUL-terminated string in a static buffer of its own
        // (never null), which is copied out at once, before any other libpcap call.
        let s = unsafe { std::ffi::CStr::from_ptr(bpf_image(insn, n)) };
        s.to_string_lossy().into_owned()
    }

    pub(super) fn lib_version() -> String {
        // SAFETY: pcap_lib_version takes no arguments and returns a pointer to a static,
        // NUL-terminated string owned by libpcap (never freed, never null); it is linked in
        // by the `pcap` crate.
        let s = unsafe { std::ffi::CStr::from_ptr(pcap_lib_version()) };
        s.to_string_lossy().into_owned()
    }
}
