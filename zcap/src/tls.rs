//! TLS for zcap's listening endpoints (`--metrics` with `--web-config`, `--pcap-over-ip`
//! with its certificate flags): PEM files read into rustls (the `ring` provider), client
//! certificates verified or merely asked for as the Prometheus exporter toolkit's
//! `client_auth_type` says, the protocol versions rustls implements (TLS 1.2 and 1.3).
//!
//! Everything here is read and built once, at start-up, before `-Z`: after it the
//! endpoints hold an `Arc<ServerConfig>` and open no file. The private keys are not read
//! here: their files are opened and handed to `crate::secrets`, which signs for them.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConfig};
use rustls::{SignatureScheme, SupportedProtocolVersion};
use rustls_pki_types::pem::PemObject;

use crate::secrets::KeySource;

/// The cryptography: rustls's `ring` provider.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server's certificate chain and where its private key is (never read here: see
/// `crate::secrets`).
pub(crate) struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: KeySource,
}

impl Identity {
    /// The chain (the server's certificate first) from PEM text, and its key's source;
    /// `cert` names where the text came from, for the errors.
    pub(crate) fn new(cert_pem: &[u8], cert: &str, key: KeySource) -> Result<Self> {
        let chain = certificates(cert_pem, cert)?;
        Ok(Identity { chain, key })
    }
}

/// The one certificate and key a server shows.
#[derive(Debug)]
struct OneCert(Arc<CertifiedKey>);

impl ResolvesServerCert for OneCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// The certificates of PEM text (`what` names where it came from); at least one.
pub(crate) fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("{what}: {e}"))?;
    if certs.is_empty() {
        bail!("{what}: no certificate in PEM form (-----BEGIN CERTIFICATE-----)");
    }
    Ok(certs)
}

/// The certificate authorities of PEM text that client certificates must chain to.
pub(crate) fn trust_anchors(pem: &[u8], what: &str) -> Result<Arc<RootCertStore>> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(pem, what)? {
        roots
            .add(cert)
            .map_err(|e| anyhow!("{what}: not a usable CA certificate: {e}"))?;
    }
    Ok(Arc::new(roots))
}

/// A whole file (`what` names the flag or key that gave it, for the error).
pub(crate) fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{what} {}", path.display()))
}

/// What a client must show, with the exporter toolkit's names (Go's `tls.ClientAuthType`).
#[derive(Clone)]
pub(crate) enum ClientAuth {
    /// No certificate asked for.
    NoClientCert,
    /// A certificate asked for, neither required nor verified.
    RequestClientCert,
    /// A certificate required, not verified (any certificate whose key signs the
    /// handshake).
    RequireAnyClientCert,
    /// A certificate not required; one that is given must chain to these authorities.
    VerifyClientCertIfGiven(Arc<RootCertStore>),
    /// A certificate required, chaining to these authorities.
    RequireAndVerifyClientCert(Arc<RootCertStore>),
}

impl ClientAuth {
    /// Whether only a client with a certificate of the authorities gets through.
    pub(crate) fn authenticates(&self) -> bool {
        matches!(self, ClientAuth::RequireAndVerifyClientCert(_))
    }

    fn verifier(&self, provider: &Arc<CryptoProvider>) -> Result<Arc<dyn ClientCertVerifier>> {
        let verified = |roots: &Arc<RootCertStore>| {
            WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
        };
        let any = |mandatory| -> Arc<dyn ClientCertVerifier> {
            Arc::new(AnyClientCert {
                mandatory,
                algorithms: provider.signature_verification_algorithms,
            })
        };
        Ok(match self {
            ClientAuth::NoClientCert => WebPkiClientVerifier::no_client_auth(),
            ClientAuth::RequestClientCert => any(false),
            ClientAuth::RequireAnyClientCert => any(true),
            ClientAuth::VerifyClientCertIfGiven(roots) => {
                verified(roots).allow_unauthenticated().build()?
            }
            ClientAuth::RequireAndVerifyClientCert(roots) => verified(roots).build()?,
        })
    }
}

/// TLS protocol versions, as the exporter toolkit names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Version {
    Tls10,
    Tls11,
    Tls12,
    Tls13,
}

impl Version {
    /// `TLS10` ..= `TLS13`.
    pub(crate) fn from_name(name: &str) -> Option<Version> {
        Some(match name {
            "TLS10" => Version::Tls10,
            "TLS11" => Version::Tls11,
            "TLS12" => Version::Tls12,
            "TLS13" => Version::Tls13,
            _ => return None,
        })
    }

    fn rustls(self) -> Option<&'static SupportedProtocolVersion> {
        match self {
            Version::Tls12 => Some(&rustls::version::TLS12),
            Version::Tls13 => Some(&rustls::version::TLS13),
            Version::Tls10 | Version::Tls11 => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::Tls10 => "TLS10",
            Version::Tls11 => "TLS11",
            Version::Tls12 => "TLS12",
            Version::Tls13 => "TLS13",
        })
    }
}

/// How a server speaks TLS: who it is, what it asks of clients, which versions, and
/// whose order of cipher suites wins.
pub(crate) struct Settings {
    pub(crate) identity: Identity,
    pub(crate) client_auth: ClientAuth,
    pub(crate) min_version: Version,
    pub(crate) max_version: Version,
    pub(crate) prefer_server_order: bool,
}

/// The rustls server configuration of `settings`. A version below TLS 1.2 is refused
/// (rustls implements TLS 1.2 and 1.3 only), as is a key that does not go with the
/// certificate (checked apart: `crate::secrets::register_key`).
pub(crate) fn server_config(settings: Settings) -> Result<Arc<ServerConfig>> {
    let (min, max) = (settings.min_version, settings.max_version);
    for v in [min, max] {
        if v.rustls().is_none() {
            bail!("{v}: zcap's TLS (rustls) implements TLS12 and TLS13 only");
        }
    }
    if min > max {
        bail!("min_version {min} is above max_version {max}");
    }
    let versions: Vec<&'static SupportedProtocolVersion> = [Version::Tls12, Version::Tls13]
        .into_iter()
        .filter(|v| (min..=max).contains(v))
        .filter_map(Version::rustls)
        .collect();
    let provider = provider();
    let verifier = settings.client_auth.verifier(&provider)?;
    let Identity { chain, key } = settings.identity;
    let key = crate::secrets::register_key(key, chain.clone())?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)?
        .with_client_cert_verifier(verifier)
        .with_cert_resolver(Arc::new(OneCert(Arc::new(CertifiedKey::new(chain, key)))));
    config.ignore_client_order = settings.prefer_server_order;
    Ok(Arc::new(config))
}

/// Whether a failed handshake was with a TLS client at all: a peer whose bytes are not TLS
/// records (a plain HTTP request, garbage) gets no alert, only the connection closed.
pub(crate) fn peer_spoke_tls(e: &rustls::Error) -> bool {
    !matches!(e, rustls::Error::InvalidMessage(_))
}

/// `RequestClientCert` and `RequireAnyClientCert`: any certificate is taken, as Go's
/// crypto/tls does for them; the client must still prove it holds the certificate's key
/// (the handshake signature is verified).
#[derive(Debug)]
struct AnyClientCert {
    mandatory: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for AnyClientCert {
    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
