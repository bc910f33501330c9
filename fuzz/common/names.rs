//! Builders shared by the `names_*` fuzz targets and their seeds: a ClientHello, TLS records,
//! and a client's QUIC Initial protected as a client protects it.
#![allow(dead_code)]

use aes::cipher::{BlockEncrypt, KeyInit};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce};
use zcrx_flowcache::names::quic::{client_initial_keys, VERSION_2};

/// A ClientHello handshake message: SNI, ALPN, TLS 1.3 and 1.2 offered, a key share.
pub fn client_hello(sni: &str, alpn: &[&str], share_len: usize) -> Vec<u8> {
    let mut exts: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut d = ((sni.len() + 3) as u16).to_be_bytes().to_vec();
    d.push(0);
    d.extend((sni.len() as u16).to_be_bytes());
    d.extend(sni.as_bytes());
    exts.push((0, d));
    let mut l = Vec::new();
    for p in alpn {
        l.push(p.len() as u8);
        l.extend(p.as_bytes());
    }
    let mut d = (l.len() as u16).to_be_bytes().to_vec();
    d.extend(l);
    exts.push((16, d));
    exts.push((43, vec![6, 0x5a, 0x5a, 3, 4, 3, 3]));
    exts.push((13, vec![0, 4, 4, 3, 8, 4]));
    let mut ks = ((share_len + 4) as u16).to_be_bytes().to_vec();
    ks.extend(0x11ecu16.to_be_bytes());
    ks.extend((share_len as u16).to_be_bytes());
    ks.extend(std::iter::repeat_n(0x42, share_len));
    exts.push((51, ks));
    let mut body = vec![3, 3];
    body.extend([7u8; 32]);
    body.push(0);
    let ciphers = [0x0a0au16, 0x1301, 0x1302, 0xc02b];
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

/// A ServerHello choosing TLS 1.3 and TLS_AES_256_GCM_SHA384.
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

/// `msg` in handshake records of at most `chunk` bytes.
pub fn records(msg: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in msg.chunks(chunk.max(1)) {
        out.extend([22, 3, 1]);
        out.extend((c.len() as u16).to_be_bytes());
        out.extend(c);
    }
    out
}

/// `frames` protected as a client Initial of `version` for `dcid`, packet number `pn`.
pub fn protect(version: u32, dcid: &[u8], pn: u16, frames: &[u8]) -> Vec<u8> {
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

/// A CRYPTO frame (2-byte varints) carrying `data` at `offset`.
pub fn crypto_frame(offset: usize, data: &[u8]) -> Vec<u8> {
    let mut f = vec![0x06];
    f.extend((0x4000 | offset as u16).to_be_bytes());
    f.extend((0x4000 | data.len() as u16).to_be_bytes());
    f.extend(data);
    f
}
