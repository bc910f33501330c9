//! The messages the [`names`](crate::names) readers read, built as a client or server sends
//! them: a ClientHello with the fields a test chooses, a ServerHello, TLS handshake records,
//! a client's QUIC Initial protected with the version's Initial keys (RFC 9001 §5), CRYPTO
//! frames, a DNS message with one question. One copy for the crate's tests, the fuzz targets' seeds and the benchmarks'
//! handshake traffic.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce};

use crate::names::quic::{client_initial_keys, VERSION_2};

/// A ClientHello handshake message (legacy version TLS 1.2, an all-zero random, no session
/// id, null compression) offering `ciphers`, with the extensions server_name (`sni`), ALPN
/// (`alpn`, when not empty) and then `extensions` as given (type, data).
pub fn client_hello(
    sni: Option<&str>,
    alpn: &[&[u8]],
    ciphers: &[u16],
    extensions: &[(u16, Vec<u8>)],
) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(s) = sni {
        let mut d = ((s.len() + 3) as u16).to_be_bytes().to_vec();
        d.push(0);
        d.extend((s.len() as u16).to_be_bytes());
        d.extend(s.as_bytes());
        exts.push((0u16, d));
    }
    if !alpn.is_empty() {
        let mut l = Vec::new();
        for p in alpn {
            l.push(p.len() as u8);
            l.extend_from_slice(p);
        }
        let mut d = (l.len() as u16).to_be_bytes().to_vec();
        d.extend(l);
        exts.push((16, d));
    }
    exts.extend(extensions.iter().cloned());
    let mut body = vec![3, 3];
    body.extend([0u8; 32]);
    body.push(0);
    body.extend(((ciphers.len() * 2) as u16).to_be_bytes());
    for c in ciphers {
        body.extend(c.to_be_bytes());
    }
    body.extend([1, 0]);
    let mut e = Vec::new();
    for (t, d) in &exts {
        e.extend(t.to_be_bytes());
        e.extend((d.len() as u16).to_be_bytes());
        e.extend(d);
    }
    body.extend((e.len() as u16).to_be_bytes());
    body.extend(e);
    let mut msg = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
    msg.extend(body);
    msg
}

/// What a current client sends beside its names: supported_versions (GREASE, TLS 1.3, 1.2),
/// signature_algorithms, and one key share of `share_len` bytes for group 0x11ec
/// (X25519MLKEM768's share is 1216 bytes, X25519's 32).
pub fn modern_extensions(share_len: usize) -> Vec<(u16, Vec<u8>)> {
    let mut ks = ((share_len + 4) as u16).to_be_bytes().to_vec();
    ks.extend(0x11ecu16.to_be_bytes());
    ks.extend((share_len as u16).to_be_bytes());
    ks.extend(std::iter::repeat_n(0x42, share_len));
    vec![
        (43, vec![6, 0x5a, 0x5a, 3, 4, 3, 3]),
        (13, vec![0, 4, 4, 3, 8, 4]),
        (51, ks),
    ]
}

/// The ciphers [`modern_client_hello`] offers: GREASE, two TLS 1.3 suites, one TLS 1.2.
pub const MODERN_CIPHERS: [u16; 4] = [0x0a0a, 0x1301, 0x1302, 0xc02b];

/// A browser-like ClientHello: `sni`, `alpn`, [`MODERN_CIPHERS`] and
/// [`modern_extensions`]`(share_len)`.
pub fn modern_client_hello(sni: &str, alpn: &[&str], share_len: usize) -> Vec<u8> {
    let alpn: Vec<&[u8]> = alpn.iter().map(|p| p.as_bytes()).collect();
    client_hello(
        Some(sni),
        &alpn,
        &MODERN_CIPHERS,
        &modern_extensions(share_len),
    )
}

/// A ServerHello choosing TLS 1.3 (supported_versions) and TLS_AES_256_GCM_SHA384.
pub fn server_hello() -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend([9u8; 32]);
    body.push(0);
    body.extend([0x13, 0x02, 0]);
    body.extend([0, 6, 0, 43, 0, 2, 3, 4]);
    let mut msg = vec![2, 0, 0, body.len() as u8];
    msg.extend(body);
    msg
}

/// `msg` in handshake records of at most `chunk` bytes each.
pub fn records(msg: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in msg.chunks(chunk.max(1)) {
        out.extend([22, 3, 1]);
        out.extend((c.len() as u16).to_be_bytes());
        out.extend(c);
    }
    out
}

/// `frames` protected as a client's Initial of QUIC `version` for Destination Connection ID
/// `dcid`: long header (no SCID, no token), packet number `pn` in two bytes, AEAD and header
/// protection with the version's Initial keys.
pub fn protect_initial(version: u32, dcid: &[u8], pn: u16, frames: &[u8]) -> Vec<u8> {
    let k = client_initial_keys(version, dcid);
    let ty = if version == VERSION_2 { 1 } else { 0 };
    let mut p = vec![0xc0 | ty << 4 | 1];
    p.extend(version.to_be_bytes());
    p.push(dcid.len() as u8);
    p.extend(dcid);
    p.extend([0, 0]);
    let len = 2 + frames.len() + 16;
    p.extend((0x4000 | len as u16).to_be_bytes());
    let pn_at = p.len();
    p.extend(pn.to_be_bytes());
    let mut nonce = k.iv;
    nonce[10] ^= (pn >> 8) as u8;
    nonce[11] ^= pn as u8;
    let mut body = frames.to_vec();
    let tag = Aes128Gcm::new(&k.key.into())
        .encrypt_in_place_detached(Nonce::from_slice(&nonce), &p, &mut body)
        .expect("a payload far below AES-GCM's limit");
    p.extend(body);
    p.extend(tag);
    let mut mask = aes::Block::clone_from_slice(&p[pn_at + 4..pn_at + 20]);
    aes::Aes128::new(&k.hp.into()).encrypt_block(&mut mask);
    p[0] ^= mask[0] & 0x0f;
    p[pn_at] ^= mask[1];
    p[pn_at + 1] ^= mask[2];
    p
}

/// A CRYPTO frame carrying `data` at `offset` (both as 2-byte varints: below 16 KiB).
pub fn crypto_frame(offset: usize, data: &[u8]) -> Vec<u8> {
    let mut f = vec![0x06];
    f.extend((0x4000 | offset as u16).to_be_bytes());
    f.extend((0x4000 | data.len() as u16).to_be_bytes());
    f.extend(data);
    f
}

/// A DNS message (ID 7, no answers) with one question: `labels` (each a label), type
/// `qtype`, class `qclass`; a response (QR and AA set) where `response`, else a query.
pub fn dns_message(labels: &[&[u8]], qtype: u16, qclass: u16, response: bool) -> Vec<u8> {
    let flags: u16 = if response { 0x8400 } else { 0 };
    let mut m = vec![0, 7];
    m.extend(flags.to_be_bytes());
    m.extend([0, 1, 0, 0, 0, 0, 0, 0]);
    for l in labels {
        m.push(l.len() as u8);
        m.extend_from_slice(l);
    }
    m.push(0);
    m.extend(qtype.to_be_bytes());
    m.extend(qclass.to_be_bytes());
    m
}
