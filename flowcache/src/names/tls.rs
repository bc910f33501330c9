//! TLS handshake: the ClientHello (server name, ALPN, offered versions, JA4) and the
//! ServerHello (chosen version and cipher suite), from a TCP stream's first bytes (records)
//! or a QUIC CRYPTO stream (handshake messages without records).

use sha2::{Digest, Sha256};

use super::reassembly::PAYLOAD_BUDGET;

/// Why a handshake could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The bytes end before the handshake message does (more may come).
    #[error("the handshake message is incomplete")]
    Incomplete,
    /// The stream does not start with a TLS handshake record.
    #[error("not a TLS handshake record")]
    NotHandshake,
    /// The first handshake message is not the one asked for (ClientHello or ServerHello).
    #[error("handshake message type {0}, not the one expected")]
    UnexpectedMessage(u8),
    /// The handshake message is longer than the payload budget.
    #[error("handshake message of {0} bytes is longer than the payload budget")]
    TooLong(usize),
    /// A length field points past its container.
    #[error("malformed {0}")]
    Malformed(&'static str),
}

/// The most ALPN protocols a [`ClientHello`] keeps (JA4 reads the first).
pub const MAX_ALPN: usize = 64;

/// Where a ClientHello travelled, JA4's first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HelloTransport {
    /// TLS over TCP (`t`).
    Tcp,
    /// QUIC (`q`).
    Quic,
}

/// What a ClientHello offers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientHello {
    /// The server name (SNI `host_name`), if the extension is there.
    pub server_name: Option<String>,
    /// The ALPN protocols in the client's order, the first [`MAX_ALPN`] of them (bytes that
    /// are not UTF-8 read as `?`).
    pub alpn: Vec<String>,
    /// The versions offered: `supported_versions` without GREASE, else the legacy version.
    pub versions: Vec<u16>,
    /// The legacy `client_version` field.
    pub legacy_version: u16,
    /// The JA4 fingerprint (FoxIO's JA4 TLS client specification).
    pub ja4: String,
}

/// What a ServerHello chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerHello {
    /// The chosen version: `supported_versions` if present, else the legacy version.
    pub version: u16,
    /// The chosen cipher suite.
    pub cipher_suite: u16,
}

/// GREASE values (RFC 8701): `0x?a?a` with both bytes equal.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

/// A bounds-checked reader.
struct Reader<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8], what: &'static str) -> Self {
        Reader { b, what }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], TlsError> {
        if n > self.b.len() {
            return Err(TlsError::Malformed(self.what));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, TlsError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, TlsError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn vec8(&mut self) -> Result<&'a [u8], TlsError> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    fn vec16(&mut self) -> Result<&'a [u8], TlsError> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
}

fn u16s(b: &[u8]) -> impl Iterator<Item = u16> + '_ {
    b.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]]))
}

/// Reads the first handshake message of a TLS record stream (handshake records, possibly
/// several, the message split across them) into `out`; returns its length.
fn records_to_handshake(stream: &[u8], out: &mut [u8; PAYLOAD_BUDGET]) -> Result<usize, TlsError> {
    let mut have = 0usize;
    let mut rest = stream;
    loop {
        // The message's length, once its 4-byte header is in.
        if have >= 4 {
            let need =
                4 + (usize::from(out[1]) << 16 | usize::from(out[2]) << 8 | usize::from(out[3]));
            if need > PAYLOAD_BUDGET {
                return Err(TlsError::TooLong(need));
            }
            if have >= need {
                return Ok(need);
            }
        }
        if rest.len() < 5 {
            return Err(if rest.is_empty() || rest[0] == 22 {
                TlsError::Incomplete
            } else {
                TlsError::NotHandshake
            });
        }
        if rest[0] != 22 || rest[1] != 3 {
            return Err(TlsError::NotHandshake);
        }
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        let body = &rest[5..];
        let avail = body.len().min(len);
        let n = avail.min(PAYLOAD_BUDGET - have);
        out[have..have + n].copy_from_slice(&body[..n]);
        have += n;
        if avail < len {
            // The record itself is cut: what it holds may still complete the message.
            if have >= 4 {
                let need = 4
                    + (usize::from(out[1]) << 16 | usize::from(out[2]) << 8 | usize::from(out[3]));
                if need <= have {
                    return Ok(need);
                }
                if need > PAYLOAD_BUDGET {
                    return Err(TlsError::TooLong(need));
                }
            }
            return Err(TlsError::Incomplete);
        }
        rest = &body[len..];
    }
}

impl ClientHello {
    /// The ClientHello at the start of a TLS record stream (a TCP direction's first bytes).
    pub fn parse_records(stream: &[u8]) -> Result<ClientHello, TlsError> {
        let mut hs = [0u8; PAYLOAD_BUDGET];
        let n = records_to_handshake(stream, &mut hs)?;
        ClientHello::parse(&hs[..n], HelloTransport::Tcp)
    }

    /// The ClientHello handshake message at the start of `msg` (type, 24-bit length, body),
    /// as QUIC's CRYPTO stream carries it.
    pub fn parse(msg: &[u8], transport: HelloTransport) -> Result<ClientHello, TlsError> {
        let body = handshake_body(msg, 1)?;
        let mut r = Reader::new(body, "ClientHello");
        let legacy_version = r.u16()?;
        r.take(32)?; // random
        r.vec8()?; // legacy_session_id
        let ciphers = r.vec16()?;
        if ciphers.len() % 2 != 0 {
            return Err(TlsError::Malformed("cipher suites"));
        }
        r.vec8()?; // legacy_compression_methods
        let exts = if r.is_empty() { &[][..] } else { r.vec16()? };

        let Extensions {
            server_name,
            sni_present,
            alpn,
            first_alpn,
            mut versions,
            sig_algs,
            mut ext_types,
        } = Extensions::read(exts)?;
        if versions.is_empty() {
            versions.push(legacy_version);
        }
        let mut cipher_list: Vec<u16> = u16s(ciphers).filter(|c| !is_grease(*c)).collect();
        let sigs: Vec<u16> = u16s(sig_algs).filter(|s| !is_grease(*s)).collect();
        let ja4 = ja4(
            transport,
            versions.iter().copied().max().unwrap_or(legacy_version),
            sni_present,
            &mut cipher_list,
            &mut ext_types,
            first_alpn,
            &sigs,
        );
        Ok(ClientHello {
            server_name,
            alpn,
            versions,
            legacy_version,
            ja4,
        })
    }
}

/// What a ClientHello's extensions say, as JA4 and the names need it.
struct Extensions<'a> {
    server_name: Option<String>,
    sni_present: bool,
    alpn: Vec<String>,
    first_alpn: Option<&'a [u8]>,
    versions: Vec<u16>,
    sig_algs: &'a [u8],
    /// The extensions' types in the client's order, GREASE left out.
    ext_types: Vec<u16>,
}

impl<'a> Extensions<'a> {
    /// Walks the extensions block `exts`: server_name (0), ALPN (16), supported_versions
    /// (43) and signature_algorithms (13) read, every type noted. Inlined into
    /// [`ClientHello::parse`], which compiles to the one body it was before the split.
    #[inline(always)]
    fn read(exts: &'a [u8]) -> Result<Extensions<'a>, TlsError> {
        let mut server_name = None;
        let mut sni_present = false;
        let mut alpn = Vec::new();
        let mut first_alpn: Option<&[u8]> = None;
        let mut versions: Vec<u16> = Vec::new();
        let mut sig_algs: &[u8] = &[];
        let mut ext_types: Vec<u16> = Vec::new();
        let mut er = Reader::new(exts, "extensions");
        while !er.is_empty() {
            let ty = er.u16()?;
            let data = er.vec16()?;
            if !is_grease(ty) {
                ext_types.push(ty);
            }
            match ty {
                0 => {
                    sni_present = true;
                    let mut l =
                        Reader::new(Reader::new(data, "server_name").vec16()?, "server_name");
                    while !l.is_empty() {
                        let kind = l.u8()?;
                        let name = l.vec16()?;
                        if kind == 0 && server_name.is_none() {
                            server_name = Some(super::text::host(name));
                        }
                    }
                }
                16 => {
                    let mut l = Reader::new(Reader::new(data, "ALPN").vec16()?, "ALPN");
                    while !l.is_empty() {
                        let p = l.vec8()?;
                        first_alpn.get_or_insert(p);
                        if alpn.len() < MAX_ALPN {
                            alpn.push(super::text::text(p));
                        }
                    }
                }
                43 => {
                    let list = Reader::new(data, "supported_versions").vec8()?;
                    versions = u16s(list).filter(|v| !is_grease(*v)).collect();
                }
                13 => {
                    sig_algs = Reader::new(data, "signature_algorithms").vec16()?;
                }
                _ => {}
            }
        }
        Ok(Extensions {
            server_name,
            sni_present,
            alpn,
            first_alpn,
            versions,
            sig_algs,
            ext_types,
        })
    }
}

impl ServerHello {
    /// The ServerHello at the start of a TLS record stream (the server's first bytes).
    pub fn parse_records(stream: &[u8]) -> Result<ServerHello, TlsError> {
        let mut hs = [0u8; PAYLOAD_BUDGET];
        let n = records_to_handshake(stream, &mut hs)?;
        ServerHello::parse(&hs[..n])
    }

    /// The ServerHello handshake message at the start of `msg`.
    pub fn parse(msg: &[u8]) -> Result<ServerHello, TlsError> {
        let body = handshake_body(msg, 2)?;
        let mut r = Reader::new(body, "ServerHello");
        let legacy = r.u16()?;
        r.take(32)?;
        r.vec8()?;
        let cipher_suite = r.u16()?;
        r.u8()?; // compression method
        let mut version = legacy;
        if !r.is_empty() {
            let mut er = Reader::new(r.vec16()?, "extensions");
            while !er.is_empty() {
                let ty = er.u16()?;
                let data = er.vec16()?;
                if ty == 43 {
                    version = Reader::new(data, "supported_versions").u16()?;
                }
            }
        }
        Ok(ServerHello {
            version,
            cipher_suite,
        })
    }
}

fn handshake_body(msg: &[u8], want: u8) -> Result<&[u8], TlsError> {
    if msg.len() < 4 {
        return Err(TlsError::Incomplete);
    }
    if msg[0] != want {
        return Err(TlsError::UnexpectedMessage(msg[0]));
    }
    let len = usize::from(msg[1]) << 16 | usize::from(msg[2]) << 8 | usize::from(msg[3]);
    msg.get(4..4 + len).ok_or(if 4 + len > PAYLOAD_BUDGET {
        TlsError::TooLong(4 + len)
    } else {
        TlsError::Incomplete
    })
}

/// JA4's two version characters.
fn ja4_version(v: u16) -> &'static str {
    match v {
        0x0304 => "13",
        0x0303 => "12",
        0x0302 => "11",
        0x0301 => "10",
        0x0300 => "s3",
        0x0002 => "s2",
        0xfeff => "d1",
        0xfefd => "d2",
        0xfefc => "d3",
        _ => "00",
    }
}

/// One end of JA4's ALPN pair: printable ASCII as itself, a byte >= 0x80 as `9`, a control
/// byte as none (the pair is then `99`). This is the `ja4plus` package's reading, the oracle
/// of the tests; revisions of FoxIO's text differ on ends that are not alphanumeric (rare in
/// practice: `h2`, `h3`, `http/1.1` read the same everywhere).
fn alpn_char(b: u8) -> Option<char> {
    match b {
        0x20..=0x7e => Some(char::from(b)),
        0x80..=0xff => Some('9'),
        _ => None,
    }
}

/// The first 12 hex digits of SHA-256 of `list` as comma-separated 4-digit hex, and the
/// optional `_`-joined tail; twelve zeros for an empty list.
fn hash12(list: &[u16], tail: &[u16]) -> String {
    if list.is_empty() && tail.is_empty() {
        return "000000000000".into();
    }
    let mut h = Sha256::new();
    for (i, v) in list.iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        h.update(format!("{v:04x}").as_bytes());
    }
    if !tail.is_empty() {
        h.update(b"_");
        for (i, v) in tail.iter().enumerate() {
            if i > 0 {
                h.update(b",");
            }
            h.update(format!("{v:04x}").as_bytes());
        }
    }
    let d = h.finalize();
    d[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// JA4 = `{t|q}{version}{d|i}{ciphers:02}{extensions:02}{alpn}_{hash(sorted ciphers)}_
/// {hash(sorted extensions without SNI and ALPN "_" signature algorithms in order)}`, GREASE
/// left out everywhere.
fn ja4(
    transport: HelloTransport,
    version: u16,
    sni: bool,
    ciphers: &mut [u16],
    exts: &mut Vec<u16>,
    first_alpn: Option<&[u8]>,
    sigs: &[u16],
) -> String {
    let alpn = match first_alpn {
        Some([first, .., last]) | Some([first @ last]) => {
            match (alpn_char(*first), alpn_char(*last)) {
                (Some(a), Some(b)) => format!("{a}{b}"),
                _ => "99".into(),
            }
        }
        _ => "00".into(),
    };
    let a = format!(
        "{}{}{}{:02}{:02}{}",
        match transport {
            HelloTransport::Tcp => 't',
            HelloTransport::Quic => 'q',
        },
        ja4_version(version),
        if sni { 'd' } else { 'i' },
        ciphers.len().min(99),
        exts.len().min(99),
        alpn
    );
    ciphers.sort_unstable();
    exts.retain(|e| *e != 0 && *e != 16);
    exts.sort_unstable();
    let b = hash12(ciphers, &[]);
    let c = if exts.is_empty() {
        "000000000000".into()
    } else {
        hash12(exts, sigs)
    };
    format!("{a}_{b}_{c}")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testdata::names::{client_hello as hello, records};

    #[test]
    fn grease_values() {
        assert!(is_grease(0x0a0a) && is_grease(0xfafa));
        assert!(!is_grease(0x0a1a) && !is_grease(0x1301));
    }

    #[test]
    fn fields_and_ja4_from_a_hello_split_across_records_and_cut() {
        let sv = vec![4, 0x1a, 0x1a, 3, 4];
        let sig = vec![0, 4, 4, 3, 8, 4];
        let msg = hello(
            Some("example.net"),
            &[b"h2", b"http/1.1"],
            &[0x2a2a, 0x1301, 0x1302, 0xc02b],
            &[(43, sv), (13, sig), (0x3a3a, vec![])],
        );
        let one = ClientHello::parse_records(&records(&msg, 4000)).unwrap();
        let split = ClientHello::parse_records(&records(&msg, 7)).unwrap();
        assert_eq!(one, split);
        assert_eq!(one.server_name.as_deref(), Some("example.net"));
        assert_eq!(one.alpn, ["h2", "http/1.1"]);
        assert_eq!(one.versions, [0x0304]);
        // 3 ciphers and 4 extensions (GREASE left out), ALPN "h2".
        assert!(one.ja4.starts_with("t13d0304h2_"), "{}", one.ja4);
        let expect_b = hash12(&[0x1301, 0x1302, 0xc02b], &[]);
        let expect_c = hash12(&[0x000d, 0x002b], &[0x0403, 0x0804]);
        assert_eq!(one.ja4, format!("t13d0304h2_{expect_b}_{expect_c}"));
        let rec = records(&msg, 7);
        for cut in 0..rec.len() {
            assert!(
                matches!(
                    ClientHello::parse_records(&rec[..cut]),
                    Err(TlsError::Incomplete)
                ),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn hash_of_the_specifications_cipher_example() {
        // JA4.md: the sorted cipher list of its Chrome example hashes to 8daaf6152771.
        let ciphers = [
            0x002f, 0x0035, 0x009c, 0x009d, 0x1301, 0x1302, 0x1303, 0xc013, 0xc014, 0xc02b, 0xc02c,
            0xc02f, 0xc030, 0xcca8, 0xcca9,
        ];
        assert_eq!(hash12(&ciphers, &[]), "8daaf6152771");
        let exts = [
            0x0005, 0x000a, 0x000b, 0x000d, 0x0012, 0x0015, 0x0017, 0x001b, 0x0023, 0x002b, 0x002d,
            0x0033, 0x4469, 0xff01,
        ];
        let sigs = [
            0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
        ];
        assert_eq!(hash12(&exts, &sigs), "e5627efa2ab1");
    }

    #[test]
    fn alpn_ends_and_no_sni() {
        let msg = hello(None, &[&[0xff, b'a']], &[0x1301], &[]);
        let h = ClientHello::parse(&msg, HelloTransport::Quic).unwrap();
        assert!(h.ja4.starts_with("q12i01019a_"), "{}", h.ja4);
        assert_eq!(h.versions, [0x0303]);
        let msg = hello(None, &[&[1, b'a']], &[], &[]);
        let h = ClientHello::parse(&msg, HelloTransport::Tcp).unwrap();
        assert_eq!(h.ja4, "t12i000199_000000000000_000000000000");
    }

    #[test]
    fn server_hello_reads_the_chosen_version() {
        let mut body = vec![3, 3];
        body.extend([0u8; 32]);
        body.push(0);
        body.extend([0x13, 0x02, 0]);
        body.extend([0, 6, 0, 43, 0, 2, 3, 4]);
        let mut msg = vec![2, 0, 0, body.len() as u8];
        msg.extend(body);
        let s = ServerHello::parse_records(&records(&msg, 20)).unwrap();
        assert_eq!((s.version, s.cipher_suite), (0x0304, 0x1302));
        assert_eq!(
            ClientHello::parse_records(&records(&msg, 100)),
            Err(TlsError::UnexpectedMessage(2))
        );
        assert_eq!(
            ServerHello::parse_records(b"GET / HTTP/1.1\r\n"),
            Err(TlsError::NotHandshake)
        );
    }
}
