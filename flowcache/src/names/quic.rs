//! QUIC Initial packets (RFC 9000 and RFC 9001, version 1; RFC 9369, version 2): the client's
//! Initial keys derived from the Destination Connection ID, header protection removed
//! (AES-ECB), the payload decrypted (AES-128-GCM), and its CRYPTO frames handed out by offset.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce, Tag};
use hkdf::Hkdf;
use sha2::Sha256;

/// QUIC version 1 (RFC 9000).
pub const VERSION_1: u32 = 0x0000_0001;
/// QUIC version 2 (RFC 9369).
pub const VERSION_2: u32 = 0x6b33_43cf;

const SALT_V1: [u8; 20] = [
    0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad,
    0xcc, 0xbb, 0x7f, 0x0a,
];
const SALT_V2: [u8; 20] = [
    0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb,
    0xf9, 0xbd, 0x2e, 0xd9,
];

/// The longest connection ID (RFC 9000 17.2).
pub const MAX_CID: usize = 20;

/// Why a datagram gave no Initial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuicError {
    /// Not a long-header packet of version 1 or 2.
    #[error("not a QUIC v1 or v2 long-header packet")]
    NotQuic,
    /// A long-header packet of a known version but no Initial in the datagram.
    #[error("no Initial packet in the datagram")]
    NoInitial,
    /// A length field points past the datagram, or a connection ID is too long.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// The packet does not decrypt with the client's Initial keys (a server's Initial, or
    /// a different connection's).
    #[error("the Initial does not decrypt with the client's keys")]
    Decrypt,
    /// A frame an Initial packet may not carry, or one cut short.
    #[error("unexpected frame type {0:#x} in an Initial")]
    Frame(u64),
}

/// The client's Initial packet protection keys (RFC 9001 5.2, RFC 9369 3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InitialKeys {
    /// AEAD_AES_128_GCM key.
    pub key: [u8; 16],
    /// AEAD IV (XORed with the packet number for the nonce).
    pub iv: [u8; 12],
    /// Header protection key (AES-128-ECB).
    pub hp: [u8; 16],
}

/// HKDF-Expand-Label (RFC 8446 7.1) with an empty context.
fn expand_label(prk: &Hkdf<Sha256>, label: &[u8], out: &mut [u8]) {
    let mut info = [0u8; 64];
    let full = 6 + label.len();
    info[..2].copy_from_slice(&(out.len() as u16).to_be_bytes());
    info[2] = full as u8;
    info[3..9].copy_from_slice(b"tls13 ");
    info[9..9 + label.len()].copy_from_slice(label);
    info[9 + label.len()] = 0;
    // Lengths are 12, 16 and 32 bytes: far below HKDF-SHA256's 8160-byte limit.
    prk.expand(&info[..10 + label.len()], out)
        .expect("HKDF-SHA256 output of at most 32 bytes");
}

/// The client's Initial keys of `version` (v2's salt and labels for [`VERSION_2`], v1's
/// otherwise) for the Destination Connection ID of the client's first Initial.
pub fn client_initial_keys(version: u32, dcid: &[u8]) -> InitialKeys {
    let (salt, key, iv, hp): (&[u8], &[u8], &[u8], &[u8]) = if version == VERSION_2 {
        (&SALT_V2, b"quicv2 key", b"quicv2 iv", b"quicv2 hp")
    } else {
        (&SALT_V1, b"quic key", b"quic iv", b"quic hp")
    };
    let (_, initial) = Hkdf::<Sha256>::extract(Some(salt), dcid);
    let mut secret = [0u8; 32];
    expand_label(&initial, b"client in", &mut secret);
    let client = Hkdf::<Sha256>::from_prk(&secret).expect("a 32-byte PRK");
    let mut k = InitialKeys {
        key: [0; 16],
        iv: [0; 12],
        hp: [0; 16],
    };
    expand_label(&client, key, &mut k.key);
    expand_label(&client, iv, &mut k.iv);
    expand_label(&client, hp, &mut k.hp);
    k
}

/// A variable-length integer (RFC 9000 16) at `*pos`.
fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *b.get(*pos)?;
    let len = 1usize << (first >> 6);
    let bytes = b.get(*pos..*pos + len)?;
    let mut v = u64::from(first & 0x3f);
    for &x in &bytes[1..] {
        v = v << 8 | u64::from(x);
    }
    *pos += len;
    Some(v)
}

/// The version and Destination Connection ID of a long-header packet of version 1 or 2.
pub fn long_header(datagram: &[u8]) -> Result<(u32, &[u8]), QuicError> {
    let first = *datagram.first().ok_or(QuicError::NotQuic)?;
    if first & 0xc0 != 0xc0 || datagram.len() < 6 {
        return Err(QuicError::NotQuic);
    }
    let version = u32::from_be_bytes([datagram[1], datagram[2], datagram[3], datagram[4]]);
    if version != VERSION_1 && version != VERSION_2 {
        return Err(QuicError::NotQuic);
    }
    let n = usize::from(datagram[5]);
    if n > MAX_CID {
        return Err(QuicError::Malformed("connection ID"));
    }
    let dcid = datagram
        .get(6..6 + n)
        .ok_or(QuicError::Malformed("connection ID"))?;
    Ok((version, dcid))
}

/// Decrypts the client Initial packets in `datagram` (coalesced packets of other types are
/// skipped) with the keys of `original_dcid` — the Destination Connection ID of the client's
/// first Initial, which keys every client Initial of the connection (RFC 9001 5.2) — and
/// calls `crypto(offset, data)` for each CRYPTO frame. Returns the version. The decrypted
/// copy is at most the datagram's length and freed before returning.
pub fn client_initial_crypto(
    datagram: &[u8],
    original_dcid: &[u8],
    mut crypto: impl FnMut(u64, &[u8]),
) -> Result<u32, QuicError> {
    let (version, _) = long_header(datagram)?;
    if original_dcid.len() > MAX_CID {
        return Err(QuicError::Malformed("connection ID"));
    }
    let initial_type = if version == VERSION_2 { 1 } else { 0 };
    let keys = client_initial_keys(version, original_dcid);
    let mut rest = datagram;
    let mut found = false;
    while rest.len() > 5 && rest[0] & 0xc0 == 0xc0 {
        let v = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]);
        if v != version {
            break;
        }
        let mut pos = 5;
        for _ in 0..2 {
            let n = usize::from(*rest.get(pos).ok_or(QuicError::Malformed("header"))?);
            if n > MAX_CID {
                return Err(QuicError::Malformed("connection ID"));
            }
            pos += 1 + n;
        }
        let ty = (rest[0] >> 4) & 3;
        if ty == initial_type {
            let token = varint(rest, &mut pos).ok_or(QuicError::Malformed("token"))?;
            pos = pos
                .checked_add(usize::try_from(token).map_err(|_| QuicError::Malformed("token"))?)
                .ok_or(QuicError::Malformed("token"))?;
        } else if ty == (if version == VERSION_2 { 0 } else { 3 }) {
            break; // Retry: no Length field, nothing after it
        }
        let length = varint(rest, &mut pos).ok_or(QuicError::Malformed("length"))?;
        let end = usize::try_from(length)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= rest.len())
            .ok_or(QuicError::Malformed("length"))?;
        if ty == initial_type {
            decrypt(&rest[..end], pos, &keys, &mut crypto)?;
            found = true;
        }
        rest = &rest[end..];
    }
    if found {
        Ok(version)
    } else {
        Err(QuicError::NoInitial)
    }
}

/// Removes header protection, decrypts the packet `pkt` (its packet number at `pn_at`) and
/// walks its frames.
fn decrypt(
    pkt: &[u8],
    pn_at: usize,
    keys: &InitialKeys,
    crypto: &mut impl FnMut(u64, &[u8]),
) -> Result<(), QuicError> {
    let sample = pkt
        .get(pn_at + 4..pn_at + 20)
        .ok_or(QuicError::Malformed("packet too short"))?;
    let mut mask = aes::Block::clone_from_slice(sample);
    aes::Aes128::new(&keys.hp.into()).encrypt_block(&mut mask);
    let first = pkt[0] ^ (mask[0] & 0x0f);
    let pn_len = usize::from(first & 3) + 1;
    let mut header = [0u8; 64 + MAX_CID * 2];
    let hlen = pn_at + pn_len;
    if pkt.len() < hlen + 16 {
        return Err(QuicError::Malformed("packet too short"));
    }
    // The header (with its token) as associated data; a long token needs a heap copy.
    let mut heap;
    let aad: &mut [u8] = if hlen <= header.len() {
        &mut header[..hlen]
    } else {
        heap = vec![0u8; hlen];
        &mut heap[..]
    };
    aad.copy_from_slice(&pkt[..hlen]);
    aad[0] = first;
    let mut pn = 0u64;
    for i in 0..pn_len {
        aad[pn_at + i] ^= mask[1 + i];
        pn = pn << 8 | u64::from(aad[pn_at + i]);
    }
    let mut nonce = keys.iv;
    for (i, b) in pn.to_be_bytes().iter().enumerate() {
        nonce[4 + i] ^= b;
    }
    let (body, tag) = pkt[hlen..].split_at(pkt.len() - hlen - 16);
    let mut plain = body.to_vec();
    Aes128Gcm::new(&keys.key.into())
        .decrypt_in_place_detached(
            Nonce::from_slice(&nonce),
            aad,
            &mut plain,
            Tag::from_slice(tag),
        )
        .map_err(|_| QuicError::Decrypt)?;
    frames(&plain, crypto)
}

/// The frames of a decrypted Initial: PADDING, PING, ACK, CRYPTO and CONNECTION_CLOSE are
/// allowed (RFC 9000 12.4); CRYPTO's data goes to `crypto`.
fn frames(p: &[u8], crypto: &mut impl FnMut(u64, &[u8])) -> Result<(), QuicError> {
    let mut pos = 0;
    let cut = |t| QuicError::Frame(t);
    while pos < p.len() {
        let ty = varint(p, &mut pos).ok_or(cut(0))?;
        match ty {
            0x00 | 0x01 => {}
            0x02 | 0x03 => {
                let _largest = varint(p, &mut pos).ok_or(cut(ty))?;
                let _delay = varint(p, &mut pos).ok_or(cut(ty))?;
                let ranges = varint(p, &mut pos).ok_or(cut(ty))?;
                varint(p, &mut pos).ok_or(cut(ty))?;
                for _ in 0..ranges {
                    varint(p, &mut pos).ok_or(cut(ty))?;
                    varint(p, &mut pos).ok_or(cut(ty))?;
                }
                if ty == 0x03 {
                    for _ in 0..3 {
                        varint(p, &mut pos).ok_or(cut(ty))?;
                    }
                }
            }
            0x06 => {
                let offset = varint(p, &mut pos).ok_or(cut(ty))?;
                let len = varint(p, &mut pos).ok_or(cut(ty))?;
                let data = usize::try_from(len)
                    .ok()
                    .and_then(|l| p.get(pos..pos.checked_add(l)?))
                    .ok_or(cut(ty))?;
                crypto(offset, data);
                pos += data.len();
            }
            0x1c => return Ok(()),
            _ => return Err(QuicError::Frame(ty)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::names::protect_initial as protect;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn keys_of_the_rfcs_examples() {
        // RFC 9001 A.1 and RFC 9369 A.1: DCID 0x8394c8f03e515708.
        let dcid = hex("8394c8f03e515708");
        let k = client_initial_keys(VERSION_1, &dcid);
        assert_eq!(k.key.to_vec(), hex("1f369613dd76d5467730efcbe3b1a22d"));
        assert_eq!(k.iv.to_vec(), hex("fa044b2f42a3fd3b46fb255c"));
        assert_eq!(k.hp.to_vec(), hex("9f50449e04a0e810283a1e9933adedd2"));
        let k = client_initial_keys(VERSION_2, &dcid);
        assert_eq!(k.key.to_vec(), hex("8b1a0bc121284290a29e0971b5cd045d"));
        assert_eq!(k.iv.to_vec(), hex("91f73e2351d8fa91660e909f"));
        assert_eq!(k.hp.to_vec(), hex("45b95e15235d6f45a6b19cbcb0294ba9"));
    }

    #[test]
    fn protected_initials_decrypt_and_give_their_crypto_frames() {
        let dcid = hex("0011223344556677");
        // PING, CRYPTO at 5 ("hello"), ACK, CRYPTO at 0 ("01234"), PADDING.
        let mut frames = vec![0x01, 0x06, 0x05, 0x05];
        frames.extend(b"hello");
        frames.extend([0x02, 0x03, 0x00, 0x00, 0x00]);
        frames.extend([0x06, 0x00, 0x05]);
        frames.extend(b"01234");
        frames.resize(1100, 0);
        for version in [VERSION_1, VERSION_2] {
            let mut got = Vec::new();
            let pkt = protect(version, &dcid, 7, &frames);
            let v = client_initial_crypto(&pkt, &dcid, |o, d| got.push((o, d.to_vec())));
            assert_eq!(v, Ok(version));
            assert_eq!(got, [(5, b"hello".to_vec()), (0, b"01234".to_vec())]);
            // Other keys (another DCID, or the other version's) do not open it.
            assert_eq!(
                client_initial_crypto(&pkt, &dcid[1..], |_, _| {}),
                Err(QuicError::Decrypt)
            );
            let mut other = pkt.clone();
            other[1..5].copy_from_slice(&(version ^ VERSION_1 ^ VERSION_2).to_be_bytes());
            assert!(client_initial_crypto(&other, &dcid, |_, _| {}).is_err());
            // A flipped ciphertext bit fails authentication.
            let mut bad = pkt.clone();
            bad[40] ^= 1;
            assert_eq!(
                client_initial_crypto(&bad, &dcid, |_, _| {}),
                Err(QuicError::Decrypt)
            );
        }
    }

    /// RFC 9001 A.2 and RFC 9369 A.2: the client Initial of the specifications' example
    /// (DCID 0x8394c8f03e515708), 1200 bytes protected with version 1's and version 2's
    /// keys, and the CRYPTO frame's data both carry.
    #[test]
    fn the_rfc_example_initials() {
        let unhex = |s: &str| hex(&s.replace('\n', ""));
        let want = unhex(include_str!("testdata/rfc9001-a2-crypto.hex"));
        let dcid = hex("8394c8f03e515708");
        for (version, file) in [
            (
                VERSION_1,
                include_str!("testdata/rfc9001-a2-client-initial.hex"),
            ),
            (
                VERSION_2,
                include_str!("testdata/rfc9369-a2-client-initial.hex"),
            ),
        ] {
            let pkt = unhex(file);
            assert_eq!(long_header(&pkt), Ok((version, &dcid[..])));
            let mut got = Vec::new();
            let v = client_initial_crypto(&pkt, &dcid, |o, d| got.push((o, d.to_vec())));
            assert_eq!(v, Ok(version));
            assert_eq!(got, [(0, want.clone())]);
        }
        let hello =
            super::super::ClientHello::parse(&want, super::super::HelloTransport::Quic).unwrap();
        assert_eq!(hello.server_name.as_deref(), Some("example.com"));
        assert_eq!(hello.alpn, ["alpn"]);
        assert_eq!(hello.versions, [0x0304]);
        // The ja4plus package's JA4 of the version 1 datagram (in a pcap, read as QUIC).
        assert_eq!(hello.ja4, "q13d0211an_62ed6f6ca7ad_4d634acda6c0");
    }

    #[test]
    fn not_quic() {
        assert_eq!(long_header(&[0x40, 0, 0, 0, 1, 0]), Err(QuicError::NotQuic));
        assert_eq!(long_header(&[0xc0, 0, 0, 0, 2, 0]), Err(QuicError::NotQuic));
        let noop = |_: u64, _: &[u8]| {};
        assert_eq!(
            client_initial_crypto(&[0xc0, 0, 0, 0, 1, 0, 0, 0, 4, 1, 2, 3, 4], &[], noop),
            Err(QuicError::Malformed("packet too short"))
        );
    }
}
