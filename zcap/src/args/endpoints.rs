//! The endpoints from the command line: `--metrics` with its `--web-config`, and
//! `--pcap-over-ip` with its TLS, allow-list and bound; their files are read here, before
//! `-Z`.

use std::net::{IpAddr, SocketAddr};

use anyhow::{anyhow, bail, Context, Result};
use ipnet::IpNet;

use super::flags::Args;
use crate::metrics::{self, WebConfig};
use crate::pcap_over_ip;
use crate::secrets::KeySource;
use crate::tls::{self, ClientAuth, Identity, Settings, Version};

/// `--metrics [ADDR:]PORT`, parsed (a port alone is 127.0.0.1's).
pub(super) fn metrics_address(args: &Args) -> Result<Option<SocketAddr>> {
    args.metrics
        .as_deref()
        .map(|a| {
            if let Ok(port) = a.parse::<u16>() {
                return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
            }
            a.parse::<SocketAddr>().map_err(|_| {
                anyhow!(
                    "--metrics {a:?}: give [ADDR:]PORT, e.g. 9128, 127.0.0.1:9128 or [::1]:9128"
                )
            })
        })
        .transpose()
}

/// The endpoints' flags that go with `--pcap-over-ip` or `--metrics`, and the allow-list
/// parsed.
pub(super) fn endpoint_flags(args: &Args) -> Result<Vec<IpNet>> {
    let (cert, key) = (&args.pcap_over_ip_cert, &args.pcap_over_ip_key);
    let tls_flags = cert.is_some() || key.is_some() || args.pcap_over_ip_client_ca.is_some();
    if (tls_flags || !args.pcap_over_ip_allow.is_empty()) && args.pcap_over_ip.is_none() {
        bail!("--pcap-over-ip-cert, --pcap-over-ip-key, --pcap-over-ip-client-ca and --pcap-over-ip-allow go with --pcap-over-ip");
    }
    if cert.is_some() != key.is_some() {
        bail!("--pcap-over-ip-cert and --pcap-over-ip-key go together (the certificate and its private key)");
    }
    if args.pcap_over_ip_client_ca.is_some() && cert.is_none() {
        bail!("--pcap-over-ip-client-ca asks clients for certificates over TLS: give --pcap-over-ip-cert and --pcap-over-ip-key too");
    }
    if (args.web_config.is_some() || !args.metrics_allow.is_empty()) && args.metrics.is_none() {
        bail!(
            "--web-config and --metrics-allow configure --metrics: give --metrics [ADDR:]PORT too"
        );
    }
    args.pcap_over_ip_allow
        .iter()
        .map(|a| allowed_network(a.trim()))
        .collect()
}

/// One `--pcap-over-ip-allow` network: CIDR, or an address alone (one host).
pub(super) fn allowed_network(a: &str) -> Result<IpNet> {
    allowed_network_of("--pcap-over-ip-allow", a)
}

/// One network of the allow-list `flag`: CIDR, or an address alone (one host).
fn allowed_network_of(flag: &str, a: &str) -> Result<IpNet> {
    if let Ok(ip) = a.parse::<IpAddr>() {
        return Ok(IpNet::from(ip));
    }
    let net = a.parse::<IpNet>().map_err(|_| {
        anyhow!("{flag} {a:?}: give networks as ADDR/LEN (127.0.0.1/32, 198.18.0.0/15, fd00::/8) or addresses, separated by commas")
    })?;
    if net.trunc() != net {
        bail!(
            "{flag} {a}: host bits set past /{} (the network is {})",
            net.prefix_len(),
            net.trunc()
        );
    }
    Ok(net)
}

/// `--metrics` with its `--web-config` read (and every file it names).
pub(super) fn metrics_config(
    args: &Args,
    addr: Option<SocketAddr>,
) -> Result<Option<metrics::ServeConfig>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let web = match &args.web_config {
        Some(path) => WebConfig::load(path)?,
        None => WebConfig::plain(),
    };
    let allow = args
        .metrics_allow
        .iter()
        .map(|a| allowed_network_of("--metrics-allow", a.trim()))
        .collect::<Result<_>>()?;
    Ok(Some(metrics::ServeConfig {
        addr,
        web,
        max_connections: args.metrics_max_connections as usize,
        allow,
    }))
}

/// `--pcap-over-ip` with its certificate, key and client CAs read (a port alone is
/// 127.0.0.1's).
pub(super) fn pcap_over_ip_config(
    args: &Args,
    allow: Vec<IpNet>,
) -> Result<Option<pcap_over_ip::ServeConfig>> {
    let Some(addr) = &args.pcap_over_ip else {
        return Ok(None);
    };
    let addr = match addr.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.clone(),
    };
    if let Some(path) = addr.strip_prefix(pcap_over_ip::UNIX_PREFIX) {
        if path.is_empty() || !path.starts_with('/') {
            bail!("--pcap-over-ip {addr}: give the socket's absolute path, as unix:/run/zcap/pcap.sock");
        }
        if args.pcap_over_ip_cert.is_some() || !allow.is_empty() {
            bail!("--pcap-over-ip {addr}: a UNIX socket's file permissions say who may connect; --pcap-over-ip-cert, --pcap-over-ip-client-ca and --pcap-over-ip-allow are for TCP");
        }
    }
    let tls = match (&args.pcap_over_ip_cert, &args.pcap_over_ip_key) {
        (Some(cert), Some(key)) => {
            let identity = Identity::new(
                &tls::read(cert, "--pcap-over-ip-cert")?,
                &format!("--pcap-over-ip-cert {}", cert.display()),
                KeySource::open(key, "--pcap-over-ip-key")?,
            )?;
            let client_auth = match &args.pcap_over_ip_client_ca {
                Some(ca) => ClientAuth::RequireAndVerifyClientCert(tls::trust_anchors(
                    &tls::read(ca, "--pcap-over-ip-client-ca")?,
                    &format!("--pcap-over-ip-client-ca {}", ca.display()),
                )?),
                None => ClientAuth::NoClientCert,
            };
            let settings = Settings {
                identity,
                client_auth,
                min_version: Version::Tls12,
                max_version: Version::Tls13,
                prefer_server_order: true,
            };
            Some(tls::server_config(settings).context("--pcap-over-ip TLS")?)
        }
        _ => None,
    };
    Ok(Some(pcap_over_ip::ServeConfig {
        addr,
        tls,
        client_certs: args.pcap_over_ip_client_ca.is_some(),
        allow,
        max_connections: args.pcap_over_ip_max_connections as usize,
    }))
}
