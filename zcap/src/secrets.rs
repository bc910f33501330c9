//! The endpoints' secrets — TLS private keys and the metrics' bcrypt hashes — kept out of
//! the process that parses hostile bytes, as OpenSSH keeps its host keys in its monitor.
//!
//! A private key is never read into zcap's own memory before the monitor splits off
//! ([`crate::privsep`]): its file is opened (a descriptor, no byte read), and what the TLS
//! configuration must know of it — its signature algorithm, the schemes it signs with in
//! its order of preference, its public key, and that it goes with the certificate — is
//! learnt from a short-lived child process that reads and parses it, answers on a pipe and
//! exits ([`register_key`]). The TLS configurations hold a [`DelegatedKey`] in its place.
//! Once split, the monitor reads each key from its descriptor ([`load_all`]) and signs what
//! the worker asks ([`sign_local`]); the worker closes the descriptors ([`forget_all`]) and
//! asks the monitor through the hook [`set_remote`] installs. Without the split
//! (`--no-sandbox`), the one process reads the keys when it first signs.
//!
//! The metrics' users come the same way: the web configuration is read and checked
//! apart ([`apart`]), and this process parses it with stand-ins for the hashes; the
//! monitor reads the real ones (`metrics::BasicAuth::load`). A key given inline in a web
//! configuration (`key:` rather than `key_file:`) is replaced by a stand-in too, and read
//! from the configuration file's descriptor where it is used ([`KeySource::InConfig`]), as
//! a key file is.
//!
//! What a compromised worker can do with this: have the monitor sign handshakes while zcap
//! runs, and ask whether a user and password go together, one bcrypt at a time. It cannot
//! take a key or a hash away.

use std::fmt;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{anyhow, bail, Context, Result};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, SubjectPublicKeyInfoDer};
use rustls::sign::{CertifiedKey, Signer, SigningKey};
use rustls::{SignatureAlgorithm, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use zeroize::Zeroize;

/// The most bytes of a private key file read.
const MAX_KEY_FILE: usize = 1 << 20;

/// Where a private key comes from.
pub(crate) enum KeySource {
    /// A file, open, not read.
    File { fd: OwnedFd, what: String },
    /// A web configuration file, open, not read, whose `tls_server_config.key` holds the
    /// PEM text inline.
    InConfig { fd: OwnedFd, what: String },
}

impl KeySource {
    /// Opens `path` (reads nothing): `what` names it in errors.
    pub(crate) fn open(path: &std::path::Path, what: &str) -> Result<KeySource> {
        let file =
            std::fs::File::open(path).with_context(|| format!("{what} {}", path.display()))?;
        Ok(KeySource::File {
            fd: OwnedFd::from(file),
            what: format!("{what} {}", path.display()),
        })
    }

    /// The inline key (`tls_server_config.key`) of the web configuration `config` (open):
    /// `what` names it in errors.
    pub(crate) fn in_config(config: &std::fs::File, what: &str) -> Result<KeySource> {
        Ok(KeySource::InConfig {
            fd: OwnedFd::from(config.try_clone().context("dup")?),
            what: what.to_string(),
        })
    }

    fn what(&self) -> &str {
        match self {
            KeySource::File { what, .. } | KeySource::InConfig { what, .. } => what,
        }
    }

    /// The key's PEM text (read from the start of the file each time).
    fn pem(&self) -> Result<Vec<u8>> {
        let (KeySource::File { fd, what } | KeySource::InConfig { fd, what }) = self;
        let file = std::fs::File::from(fd.try_clone().context("dup")?);
        let mut text = read_from_start(&file, MAX_KEY_FILE).with_context(|| what.clone())?;
        if let KeySource::File { .. } = self {
            return Ok(text);
        }
        let parsed = serde_yaml_ng::from_slice::<serde_yaml_ng::Value>(&text);
        text.zeroize();
        let value = parsed.with_context(|| what.clone())?;
        let key = value
            .get("tls_server_config")
            .and_then(|t| t.get("key"))
            .and_then(serde_yaml_ng::Value::as_str)
            .ok_or_else(|| anyhow!("{what}: no PEM text there"))?;
        Ok(key.as_bytes().to_vec())
    }

    /// The key, parsed, after checking it goes with `chain`'s first certificate.
    fn load(&self, chain: &[CertificateDer<'static>]) -> Result<Arc<dyn SigningKey>> {
        let mut pem = self.pem()?;
        let der = PrivateKeyDer::from_pem_slice(&pem);
        pem.zeroize();
        let der = der.map_err(|e| anyhow!("{}: no private key in PEM form ({e})", self.what()))?;
        let key = rustls::crypto::ring::sign::any_supported_type(&der)
            .map_err(|e| anyhow!("{}: {e}", self.what()))?;
        CertifiedKey::new(chain.to_vec(), key.clone())
            .keys_match()
            .map_err(|e| anyhow!("the certificate and its key: {e}"))?;
        Ok(key)
    }
}

/// The whole of `file` from its start, refused (what was read zeroed) beyond `max` bytes.
/// It reads with pread: the file's offset, shared with a child that read it too, is
/// neither used nor moved.
pub(crate) fn read_from_start(file: &std::fs::File, max: usize) -> Result<Vec<u8>> {
    let mut text = Vec::new();
    let mut chunk = [0u8; 8192];
    let read = loop {
        match file.read_at(&mut chunk, text.len() as u64) {
            Ok(0) => break Ok(()),
            Ok(n) if text.len() + n > max => break Err(anyhow!("larger than {max} bytes")),
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) => break Err(e.into()),
        }
    };
    chunk.zeroize();
    if read.is_err() {
        text.zeroize();
    }
    read.map(|()| text)
}

/// What the TLS configuration knows of a key: nothing secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Description {
    algorithm: SignatureAlgorithm,
    /// The schemes it signs with, most preferred first.
    schemes: Vec<SignatureScheme>,
    /// Its SubjectPublicKeyInfo, DER.
    spki: Vec<u8>,
}

/// Every scheme rustls's `ring` provider signs with.
const SCHEMES: [SignatureScheme; 9] = [
    SignatureScheme::ED25519,
    SignatureScheme::ECDSA_NISTP384_SHA384,
    SignatureScheme::ECDSA_NISTP256_SHA256,
    SignatureScheme::RSA_PSS_SHA512,
    SignatureScheme::RSA_PSS_SHA384,
    SignatureScheme::RSA_PSS_SHA256,
    SignatureScheme::RSA_PKCS1_SHA512,
    SignatureScheme::RSA_PKCS1_SHA384,
    SignatureScheme::RSA_PKCS1_SHA256,
];

impl Description {
    fn of(key: &dyn SigningKey) -> Result<Description> {
        let mut left = SCHEMES.to_vec();
        let mut schemes = Vec::new();
        while let Some(s) = key.choose_scheme(&left) {
            let s = s.scheme();
            schemes.push(s);
            left.retain(|x| *x != s);
        }
        let spki = key
            .public_key()
            .ok_or_else(|| anyhow!("the key's public part"))?
            .to_vec();
        Ok(Description {
            algorithm: key.algorithm(),
            schemes,
            spki,
        })
    }

    /// algorithm (u8), scheme count (u8), schemes (u16 each, big-endian), the SPKI.
    fn encode(&self) -> Vec<u8> {
        let mut out = vec![u8::from(self.algorithm), self.schemes.len() as u8];
        for s in &self.schemes {
            out.extend_from_slice(&u16::from(*s).to_be_bytes());
        }
        out.extend_from_slice(&self.spki);
        out
    }

    fn decode(b: &[u8]) -> Option<Description> {
        let (&algorithm, rest) = b.split_first()?;
        let (&n, rest) = rest.split_first()?;
        let (schemes, spki) = rest.split_at_checked(usize::from(n) * 2)?;
        Some(Description {
            algorithm: SignatureAlgorithm::from(algorithm),
            schemes: schemes
                .chunks_exact(2)
                .map(|c| SignatureScheme::from(u16::from_be_bytes([c[0], c[1]])))
                .collect(),
            spki: spki.to_vec(),
        })
    }
}

/// A registered key: where it comes from, its certificate chain, and (where this process
/// may hold it) the key itself once read.
struct Slot {
    source: Option<KeySource>,
    chain: Vec<CertificateDer<'static>>,
    key: Option<Arc<dyn SigningKey>>,
}

static SLOTS: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

fn slots() -> std::sync::MutexGuard<'static, Vec<Slot>> {
    SLOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The worker's way to the monitor: (operation, index, payload) to the answer's payload.
pub(crate) type Remote = Box<dyn Fn(u32, u32, &[u8]) -> std::io::Result<Vec<u8>> + Send + Sync>;

static REMOTE: OnceLock<Remote> = OnceLock::new();

/// The monitor's operations on secrets (the numbers [`crate::privsep`]'s requests carry).
pub(crate) const SIGN: u32 = 3;
pub(crate) const CHECK_PASSWORD: u32 = 4;

/// Registers the key of `source` for the certificate chain `chain`, checking it in a child
/// process that reads and parses it (this process reads none of it); returns what stands
/// for it in a TLS configuration.
pub(crate) fn register_key(
    source: KeySource,
    chain: Vec<CertificateDer<'static>>,
) -> Result<Arc<DelegatedKey>> {
    let description = describe_apart(&source, &chain)?;
    let mut slots = slots();
    slots.push(Slot {
        source: Some(source),
        chain,
        key: None,
    });
    Ok(Arc::new(DelegatedKey {
        slot: slots.len() - 1,
        description,
    }))
}

/// The description of `source`'s key, learnt apart ([`apart`]).
fn describe_apart(source: &KeySource, chain: &[CertificateDer<'static>]) -> Result<Description> {
    let answer = apart(|| Ok(Description::of(source.load(chain)?.as_ref())?.encode()))?;
    Description::decode(&answer)
        .ok_or_else(|| anyhow!("{}: the key checker's answer", source.what()))
}

/// Runs `task` in a short-lived child process and returns what it returned: what it read
/// and parsed on the way (a secret) stays in the child's memory, which ends with it. (In
/// the unit tests, whose harness runs threads a fork would leave half-held, here.)
pub(crate) fn apart(task: impl FnOnce() -> Result<Vec<u8>>) -> Result<Vec<u8>> {
    if cfg!(test) {
        return task();
    }
    let (mut answer, mut child_end) = std::os::unix::net::UnixStream::pair().context("a pipe")?;
    match crate::system::fork().context("a child for the secrets")? {
        None => {
            drop(answer);
            let reply = match task() {
                Ok(bytes) => [vec![0], bytes].concat(),
                Err(e) => [vec![1], format!("{e:#}").into_bytes()].concat(),
            };
            let code = i32::from(child_end.write_all(&reply).is_err());
            crate::system::exit_now(code)
        }
        Some(child) => {
            drop(child_end);
            let mut reply = Vec::new();
            let read = answer.read_to_end(&mut reply);
            let _ = nix::sys::wait::waitpid(child, None);
            read.context("the child's answer")?;
            match reply.split_first() {
                Some((0, bytes)) => Ok(bytes.to_vec()),
                Some((_, e)) => bail!("{}", String::from_utf8_lossy(e)),
                None => bail!("the child for the secrets ended without an answer"),
            }
        }
    }
}

/// The monitor's start (or, without the split, nothing: keys are read when first used):
/// every key read from its source and checked, then the sources closed.
pub(crate) fn load_all() -> Result<()> {
    for slot in slots().iter_mut() {
        if let Some(source) = slot.source.take() {
            slot.key = Some(source.load(&slot.chain)?);
        }
    }
    Ok(())
}

/// The worker's start: every key source closed, and the monitor asked from now on through
/// `remote`.
pub(crate) fn forget_all(remote: Remote) {
    for slot in slots().iter_mut() {
        slot.source = None;
        slot.key = None;
    }
    let _ = REMOTE.set(remote);
}

/// Whether this process asks the monitor (it is the worker).
pub(crate) fn remote() -> Option<&'static Remote> {
    REMOTE.get()
}

/// Signs `message` with key `slot` under `scheme`, here: what the monitor (or a process
/// without the split) does. `None` for a slot or scheme the key does not have.
pub(crate) fn sign_local(slot: usize, scheme: SignatureScheme, message: &[u8]) -> Option<Vec<u8>> {
    let key = {
        let mut slots = slots();
        let s = slots.get_mut(slot)?;
        if s.key.is_none() {
            let source = s.source.as_ref()?;
            s.key = Some(source.load(&s.chain).ok()?);
        }
        s.key.clone()?
    };
    key.choose_scheme(&[scheme])?.sign(message).ok()
}

/// What stands for a private key in zcap's TLS configurations: it signs through the
/// monitor (in the worker) or with the key read here.
pub(crate) struct DelegatedKey {
    slot: usize,
    description: Description,
}

impl fmt::Debug for DelegatedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegatedKey")
            .field("slot", &self.slot)
            .field("algorithm", &self.description.algorithm)
            .finish()
    }
}

impl SigningKey for DelegatedKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        let scheme = *self
            .description
            .schemes
            .iter()
            .find(|s| offered.contains(s))?;
        Some(Box::new(DelegatedSigner {
            slot: self.slot,
            scheme,
        }))
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        Some(SubjectPublicKeyInfoDer::from(
            self.description.spki.as_slice(),
        ))
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.description.algorithm
    }
}

#[derive(Debug)]
struct DelegatedSigner {
    slot: usize,
    scheme: SignatureScheme,
}

impl Signer for DelegatedSigner {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        let signed = match remote() {
            Some(ask) => {
                let mut payload = u16::from(self.scheme).to_be_bytes().to_vec();
                payload.extend_from_slice(message);
                ask(SIGN, self.slot as u32, &payload).ok()
            }
            None => sign_local(self.slot, self.scheme, message),
        };
        signed.ok_or_else(|| rustls::Error::General("the key could not sign".into()))
    }

    fn scheme(&self) -> SignatureScheme {
        self.scheme
    }
}

/// The monitor's answer to a SIGN request's payload (scheme, then the message) for key
/// `slot`; `None` for anything else (a short payload, a slot or scheme the key lacks).
pub(crate) fn answer_sign(slot: u32, payload: &[u8]) -> Option<Vec<u8>> {
    let (scheme, message) = payload.split_at_checked(2)?;
    let scheme = SignatureScheme::from(u16::from_be_bytes([scheme[0], scheme[1]]));
    sign_local(slot as usize, scheme, message)
}

/// A CHECK_PASSWORD request's payload: the user's length (u32, big-endian), the user, the
/// password.
pub(crate) fn encode_credentials(user: &[u8], password: &[u8]) -> Vec<u8> {
    let mut out = (user.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(user);
    out.extend_from_slice(password);
    out
}

/// The user and password of a CHECK_PASSWORD payload, if it is one.
pub(crate) fn decode_credentials(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = payload.split_at_checked(4)?;
    let len = u32::from_be_bytes(len.try_into().ok()?) as usize;
    rest.split_at_checked(len)
}

/// Whether `fd` is one of the key sources' descriptors (the monitor keeps them open until
/// it has read them).
pub(crate) fn source_fds() -> Vec<std::os::fd::RawFd> {
    use std::os::fd::AsRawFd;
    slots()
        .iter()
        .filter_map(|s| match &s.source {
            Some(KeySource::File { fd, .. } | KeySource::InConfig { fd, .. }) => {
                Some(fd.as_fd().as_raw_fd())
            }
            None => None,
        })
        .collect()
}
