//! `--web-config FILE`: TLS and basic authentication for `--metrics`, in the Prometheus
//! exporter toolkit's web configuration format (the file node_exporter's `--web.config.file`
//! reads and `promtool check web-config` checks), read once at start-up.
//!
//! What zcap takes: `tls_server_config` (`cert_file`/`cert`, `key_file`/`key`,
//! `client_auth_type`, `client_ca_file`/`client_ca`, `min_version`, `max_version`,
//! `prefer_server_cipher_suites`), `http_server_config.http2` (zcap serves HTTP/1.1, which
//! every client that offers HTTP/2 also speaks), and `basic_auth_users` (user: bcrypt
//! hash). What it does not implement is refused by name (`cipher_suites`,
//! `curve_preferences`, `client_allowed_sans`, `http_server_config.headers`, `rate_limit`,
//! TLS 1.0 and 1.1), and so is any key the toolkit does not know. As in the toolkit, a
//! relative path is taken from the file's directory, and a `tls_server_config` that sets
//! nothing leaves the endpoint on plain HTTP.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rustls::ServerConfig;
use serde::Deserialize;

use super::auth::BasicAuth;
use crate::secrets::KeySource;
use crate::tls::{self, ClientAuth, Identity, Settings, Version};

/// The file as the toolkit defines it (its `web.Config`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsServerConfig>,
    http_server_config: Option<HttpServerConfig>,
    rate_limit: Option<serde_yaml_ng::Value>,
    basic_auth_users: Option<BTreeMap<String, String>>,
}

/// The toolkit's `web.TLSConfig`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TlsServerConfig {
    cert: Option<String>,
    key: Option<String>,
    client_ca: Option<String>,
    cert_file: Option<String>,
    key_file: Option<String>,
    client_auth_type: Option<String>,
    client_ca_file: Option<String>,
    cipher_suites: Option<Vec<String>>,
    curve_preferences: Option<Vec<String>>,
    min_version: Option<String>,
    max_version: Option<String>,
    prefer_server_cipher_suites: Option<bool>,
    client_allowed_sans: Option<Vec<String>>,
}

/// The toolkit's `web.HTTPConfig`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HttpServerConfig {
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// How `--metrics` serves: TLS or plain HTTP, with or without basic authentication.
pub(crate) struct WebConfig {
    /// TLS (`None`: plain HTTP).
    pub(crate) tls: Option<Arc<ServerConfig>>,
    /// `basic_auth_users` (`None`: every request is answered).
    pub(crate) auth: Option<BasicAuth>,
    /// Whether only clients with a certificate of `client_ca_file` get through.
    pub(crate) client_certs: bool,
}

impl WebConfig {
    /// Plain HTTP, no authentication: `--metrics` without `--web-config`.
    pub(crate) fn plain() -> Self {
        WebConfig {
            tls: None,
            auth: None,
            client_certs: false,
        }
    }

    /// Reads `path` and every file it names; any error says what is wrong and where.
    ///
    /// The file holds the users' bcrypt hashes, and may hold a private key inline, which
    /// the worker must not hold (`crate::secrets`): it is read and checked in a short-lived
    /// child, which answers the file with every hash and the key replaced by stand-ins;
    /// that is what this process parses. The real users and key are read from the file
    /// again by the monitor once split (or at their first use without the split).
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let at = |e: anyhow::Error| e.context(format!("--web-config {}", path.display()));
        let source = std::fs::File::open(path)
            .with_context(|| format!("--web-config {}", path.display()))?;
        let text = crate::secrets::apart(|| {
            stand_ins(&crate::secrets::read_from_start(&source, usize::MAX)?)
        })
        .map_err(at)?;
        let file: File = if text.iter().all(u8::is_ascii_whitespace) {
            File::default()
        } else {
            serde_yaml_ng::from_slice(&text).map_err(|e| at(anyhow!("{e}")))?
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut web = WebConfig::from_file(file, dir, &source).map_err(at)?;
        web.auth = web.auth.map(|a| a.stand_in_for(source, users_of));
        Ok(web)
    }

    /// The configuration `file` (read from `source`, open, whose inline key is read where
    /// it is used), its relative paths from `dir`.
    fn from_file(file: File, dir: &Path, source: &std::fs::File) -> Result<Self> {
        if file.rate_limit.is_some() {
            bail!("rate_limit: zcap does not implement it (it bounds connections instead: --metrics-max-connections)");
        }
        if let Some(http) = &file.http_server_config {
            if http.headers.is_some() {
                bail!("http_server_config.headers: zcap does not implement it");
            }
            // http2: HTTP/2 is offered by ALPN, which zcap does not offer; clients speak
            // HTTP/1.1 to it whatever the setting.
            let _ = http.http2;
        }
        let (tls, client_certs) = match file.tls_server_config {
            Some(t) => tls_config(t, dir, source)?,
            None => (None, false),
        };
        let auth = match file.basic_auth_users {
            Some(users) if !users.is_empty() => Some(BasicAuth::new(users)?),
            _ => None,
        };
        Ok(WebConfig {
            tls,
            auth,
            client_certs,
        })
    }
}

/// The web configuration `text` with each `basic_auth_users` hash replaced by one stand-in
/// (a bcrypt hash of nothing, of the lowest cost), after checking the real ones, and an
/// inline `tls_server_config.key` by [`KEY_STAND_IN`]; the rest as it is.
fn stand_ins(text: &[u8]) -> Result<Vec<u8>> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(text.to_vec());
    }
    let mut value: serde_yaml_ng::Value =
        serde_yaml_ng::from_slice(text).map_err(|e| anyhow!("{e}"))?;
    let users = users_of(text)?;
    if !users.is_empty() {
        BasicAuth::new(users)?;
    }
    let stand_in = bcrypt::hash("", 4).map_err(|e| anyhow!("bcrypt: {e}"))?;
    if let Some(serde_yaml_ng::Value::Mapping(users)) = value.get_mut("basic_auth_users") {
        for (_, hash) in users.iter_mut() {
            *hash = serde_yaml_ng::Value::String(stand_in.clone());
        }
    }
    if let Some(key) = value
        .get_mut("tls_server_config")
        .and_then(|t| t.get_mut("key"))
    {
        *key = serde_yaml_ng::Value::String(KEY_STAND_IN.into());
    }
    serde_yaml_ng::to_string(&value)
        .map(String::into_bytes)
        .map_err(|e| anyhow!("{e}"))
}

/// The `basic_auth_users` of a web configuration's `text`.
fn users_of(text: &[u8]) -> Result<BTreeMap<String, String>> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(BTreeMap::new());
    }
    let file: File = serde_yaml_ng::from_slice(text).map_err(|e| anyhow!("{e}"))?;
    Ok(file.basic_auth_users.unwrap_or_default())
}

/// PEM text given inline (`inline`) or by a file (`file`, relative to `dir`), not both.
fn pem(
    inline: Option<String>,
    file: Option<String>,
    names: (&str, &str),
    dir: &Path,
) -> Result<Option<(Vec<u8>, String)>> {
    let (inline_name, file_name) = names;
    match (inline, file) {
        (Some(_), Some(_)) => {
            bail!("tls_server_config: give {inline_name} or {file_name}, not both")
        }
        (Some(text), None) => Ok(Some((
            text.into_bytes(),
            format!("tls_server_config.{inline_name}"),
        ))),
        (None, Some(f)) => {
            let path = join(dir, &f);
            let what = format!("tls_server_config.{file_name}");
            Ok(Some((
                tls::read(&path, &what)?,
                format!("{what} {}", path.display()),
            )))
        }
        (None, None) => Ok(None),
    }
}

/// What an inline private key reads as in the configuration this process parses.
const KEY_STAND_IN: &str = "(read by the monitor)";

/// The private key's source: inline PEM (`key`: read from `config` where it is used) or a
/// file (`key_file`, relative to `dir`: opened, not read), not both.
fn key_source(
    inline: Option<String>,
    file: Option<String>,
    dir: &Path,
    config: &std::fs::File,
) -> Result<KeySource> {
    match (inline, file) {
        (Some(_), Some(_)) => bail!("tls_server_config: give key or key_file, not both"),
        (Some(_), None) => KeySource::in_config(config, "--web-config tls_server_config.key"),
        (None, Some(f)) => KeySource::open(&join(dir, &f), "tls_server_config.key_file"),
        (None, None) => bail!("tls_server_config: missing one of key or key_file"),
    }
}

/// `file` as the toolkit takes it: relative to the configuration file's directory.
fn join(dir: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// `tls_server_config` into rustls's configuration, and whether it authenticates clients
/// by certificate. Nothing set: no TLS (as the toolkit's `errNoTLSConfig`).
fn tls_config(
    t: TlsServerConfig,
    dir: &Path,
    config: &std::fs::File,
) -> Result<(Option<Arc<ServerConfig>>, bool)> {
    for (set, key, instead) in [
        (
            t.cipher_suites.is_some(),
            "cipher_suites",
            "rustls's own suites are used",
        ),
        (
            t.curve_preferences.is_some(),
            "curve_preferences",
            "rustls's own key exchange groups are used",
        ),
        (
            t.client_allowed_sans.is_some(),
            "client_allowed_sans",
            "verify clients by client_ca_file alone",
        ),
    ] {
        if set {
            bail!("tls_server_config.{key}: zcap does not implement it ({instead})");
        }
    }
    let enabled = t.cert.is_some()
        || t.cert_file.is_some()
        || t.key.is_some()
        || t.key_file.is_some()
        || t.client_ca.is_some()
        || t.client_ca_file.is_some()
        || t.client_auth_type.is_some();
    if !enabled {
        return Ok((None, false));
    }
    let version = |v: Option<String>, key: &str, default| match v {
        None => Ok(default),
        Some(name) => Version::from_name(&name).ok_or_else(|| {
            anyhow!("tls_server_config.{key} {name:?}: one of TLS10, TLS11, TLS12, TLS13")
        }),
    };
    let min_version = version(t.min_version, "min_version", Version::Tls12)?;
    let max_version = version(t.max_version, "max_version", Version::Tls13)?;
    for (v, key) in [(min_version, "min_version"), (max_version, "max_version")] {
        if v < Version::Tls12 {
            bail!(
                "tls_server_config.{key} {v}: zcap's TLS (rustls) implements TLS12 and TLS13 only"
            );
        }
    }
    if min_version > max_version {
        bail!("tls_server_config: min_version {min_version} is above max_version {max_version}");
    }
    let cert = pem(t.cert, t.cert_file, ("cert", "cert_file"), dir)?
        .ok_or_else(|| anyhow!("tls_server_config: missing one of cert or cert_file"))?;
    let key = key_source(t.key, t.key_file, dir, config)?;
    let ca = pem(
        t.client_ca,
        t.client_ca_file,
        ("client_ca", "client_ca_file"),
        dir,
    )?;
    let identity = Identity::new(&cert.0, &cert.1, key)?;
    let client_auth = client_auth(t.client_auth_type.as_deref().unwrap_or(""), ca)?;
    let authenticates = client_auth.authenticates();
    let config = tls::server_config(Settings {
        identity,
        client_auth,
        min_version,
        max_version,
        prefer_server_order: t.prefer_server_cipher_suites.unwrap_or(true),
    })
    .context("tls_server_config")?;
    Ok((Some(config), authenticates))
}

/// `client_auth_type` (the toolkit's names; empty is `NoClientCert`, `RequireClientCert` is
/// its older name of `RequireAnyClientCert`) with the CA certificates given, if any.
fn client_auth(name: &str, ca: Option<(Vec<u8>, String)>) -> Result<ClientAuth> {
    let roots = |ca: Option<(Vec<u8>, String)>| -> Result<_> {
        let (pem, what) = ca.ok_or_else(|| {
            anyhow!("tls_server_config.client_auth_type {name}: needs client_ca_file (or client_ca), the authorities client certificates must chain to")
        })?;
        tls::trust_anchors(&pem, &what)
    };
    let auth = match name {
        "" | "NoClientCert" => ClientAuth::NoClientCert,
        "RequestClientCert" => ClientAuth::RequestClientCert,
        "RequireAnyClientCert" | "RequireClientCert" => ClientAuth::RequireAnyClientCert,
        "VerifyClientCertIfGiven" => return Ok(ClientAuth::VerifyClientCertIfGiven(roots(ca)?)),
        "RequireAndVerifyClientCert" => {
            return Ok(ClientAuth::RequireAndVerifyClientCert(roots(ca)?))
        }
        other => bail!("tls_server_config.client_auth_type {other:?}: one of NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert"),
    };
    match (&auth, ca) {
        (ClientAuth::NoClientCert, Some(_)) => bail!("tls_server_config: client CA's have been configured without a Client Auth Policy (set client_auth_type)"),
        (_, Some(_)) => bail!("tls_server_config.client_ca_file: client_auth_type {name} does not verify client certificates (VerifyClientCertIfGiven or RequireAndVerifyClientCert do)"),
        _ => Ok(auth),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<WebConfig> {
        let file: File = serde_yaml_ng::from_str(yaml).map_err(|e| anyhow!("{e}"))?;
        let source = std::fs::File::open("/dev/null").unwrap();
        WebConfig::from_file(file, Path::new("/nonexistent"), &source)
    }

    fn refusal(yaml: &str) -> String {
        match parse(yaml) {
            Ok(_) => panic!("accepted: {yaml}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn unknown_and_unimplemented_keys_are_refused_by_name() {
        assert!(refusal("tls_server_config:\n  certfile: x\n").contains("unknown field `certfile`"));
        assert!(refusal("basic_auth: {}\n").contains("unknown field `basic_auth`"));
        for (yaml, key) in [
            (
                "tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                "cipher_suites",
            ),
            (
                "tls_server_config:\n  curve_preferences: [X25519]\n",
                "curve_preferences",
            ),
            (
                "tls_server_config:\n  client_allowed_sans: [a]\n",
                "client_allowed_sans",
            ),
            (
                "http_server_config:\n  headers:\n    X-Frame-Options: deny\n",
                "headers",
            ),
            ("rate_limit:\n  interval: 1s\n  burst: 1\n", "rate_limit"),
        ] {
            let e = refusal(yaml);
            assert!(e.contains(key) && e.contains("does not implement"), "{e}");
        }
    }

    #[test]
    fn nothing_set_is_plain_http_and_http2_is_taken() {
        let c = parse("tls_server_config: {}\nhttp_server_config:\n  http2: false\n").unwrap();
        assert!(c.tls.is_none() && c.auth.is_none());
        let c = parse("tls_server_config:\nbasic_auth_users:\n").unwrap();
        assert!(c.tls.is_none() && c.auth.is_none());
    }

    #[test]
    fn incomplete_tls_and_client_auth_mistakes_are_refused() {
        let e = refusal("tls_server_config:\n  key_file: k.pem\n");
        assert!(e.contains("missing one of cert or cert_file"), "{e}");
        let e = refusal("tls_server_config:\n  cert: x\n  cert_file: y\n");
        assert!(e.contains("give cert or cert_file, not both"), "{e}");
        // Files are read relative to the configuration's directory.
        let e = refusal("tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n");
        assert!(e.contains("/nonexistent/c.pem"), "{e}");
        assert!(client_auth("Bogus", None).is_err());
        let e = format!(
            "{:#}",
            client_auth("RequireAndVerifyClientCert", None)
                .err()
                .unwrap()
        );
        assert!(e.contains("needs client_ca_file"), "{e}");
        let ca = Some((Vec::new(), "ca".to_string()));
        let e = format!("{:#}", client_auth("NoClientCert", ca).err().unwrap());
        assert!(e.contains("without a Client Auth Policy"), "{e}");
    }

    #[test]
    fn versions_rustls_lacks_or_out_of_order_are_refused() {
        let tls = "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n";
        for v in ["TLS10", "TLS11"] {
            let e = refusal(&format!("{tls}  min_version: {v}\n"));
            assert!(
                e.contains(&format!("min_version {v}")) && e.contains("TLS12 and TLS13 only"),
                "{e}"
            );
        }
        let e = refusal(&format!("{tls}  max_version: TLS11\n"));
        assert!(e.contains("max_version TLS11"), "{e}");
        let e = refusal(&format!("{tls}  min_version: SSL3\n"));
        assert!(e.contains("one of TLS10, TLS11, TLS12, TLS13"), "{e}");
        let e = refusal(&format!(
            "{tls}  min_version: TLS13\n  max_version: TLS12\n"
        ));
        assert!(e.contains("above max_version"), "{e}");
    }

    #[test]
    fn bad_password_hashes_and_user_names_are_refused() {
        let e = refusal("basic_auth_users:\n  alice: notahash\n");
        assert!(e.contains("alice") && e.contains("bcrypt"), "{e}");
        let hash = bcrypt::hash("pw", 4).unwrap();
        let e = refusal(&format!("basic_auth_users:\n  'a:b': '{hash}'\n"));
        assert!(e.contains("':'"), "{e}");
        assert!(parse(&format!("basic_auth_users:\n  alice: '{hash}'\n"))
            .unwrap()
            .auth
            .is_some());
    }
}
