//! TLS on `tls-port`: the rustls server configuration built from the
//! `tls-*` parameters, swapped whole when `CONFIG SET` changes them. The
//! handshake that turns an accepted socket into a TLS stream with it is
//! the connection layer's (`crate::stream::Tls`).
//!
//! rustls (through tokio-rustls, with ring for the cryptography) offers
//! TLS 1.2 and 1.3 only, so `tls-protocols TLSv1 TLSv1.1` alone is refused
//! instead of quietly meaning something else. Client certificates are
//! checked against `tls-ca-cert-file` and every PEM file in
//! `tls-ca-cert-dir`, by `tls-auth-clients`: `yes` refuses a client
//! without one, `optional` checks one only if presented, `no` asks none.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig, SupportedProtocolVersion};
use tokio_rustls::TlsAcceptor;

use crate::config::{TlsConfig, TlsProtocol};

/// Why the `tls-*` parameters do not make a TLS configuration. The texts
/// of the missing-parameter cases are Redis's log lines.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    /// `tls-cert-file` is empty.
    #[error("No tls-cert-file configured!")]
    NoCertFile,
    /// `tls-key-file` is empty.
    #[error("No tls-key-file configured!")]
    NoKeyFile,
    /// Client certificates are asked for, but no CA to check them against.
    #[error("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")]
    NoCa,
    /// A file could not be read or holds no PEM item of the kind needed.
    #[error("{param} '{}': {reason}", path.display())]
    File {
        /// The parameter that names the file.
        param: &'static str,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// `tls-protocols` names only versions rustls does not offer.
    #[error("tls-protocols: FerrumKV offers TLSv1.2 and TLSv1.3 only")]
    NoProtocol,
    /// rustls refused the combination (a key that does not match the
    /// certificate, a CA it cannot use, ...).
    #[error("{0}")]
    Rustls(String),
}

/// The TLS configuration in force: new handshakes use the latest one, and
/// connections already open keep the one they started with.
pub(crate) struct TlsContext {
    acceptor: RwLock<TlsAcceptor>,
}

impl TlsContext {
    /// Builds the context from the `tls-*` parameters.
    ///
    /// # Errors
    ///
    /// When a file is missing or unreadable, or the parameters do not fit.
    pub(crate) fn new(config: &TlsConfig) -> Result<TlsContext, TlsError> {
        Ok(TlsContext {
            acceptor: RwLock::new(TlsAcceptor::from(server_config(config)?)),
        })
    }

    /// Replaces the configuration for the handshakes to come; on error the
    /// one in force stays.
    ///
    /// # Errors
    ///
    /// As [`TlsContext::new`].
    pub(crate) fn reload(&self, config: &TlsConfig) -> Result<(), TlsError> {
        let acceptor = TlsAcceptor::from(server_config(config)?);
        *self.acceptor.write().unwrap_or_else(|p| p.into_inner()) = acceptor;
        Ok(())
    }

    /// The acceptor for a handshake starting now.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.acceptor
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The rustls server configuration the `tls-*` parameters describe.
fn server_config(config: &TlsConfig) -> Result<Arc<ServerConfig>, TlsError> {
    let cert_file = config.cert_file.as_deref().ok_or(TlsError::NoCertFile)?;
    let key_file = config.key_file.as_deref().ok_or(TlsError::NoKeyFile)?;
    let chain = read_certificates("tls-cert-file", cert_file)?;
    if chain.is_empty() {
        return Err(file_error("tls-cert-file", cert_file, "no certificate"));
    }
    let key = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| file_error("tls-key-file", key_file, e))?;
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&protocol_versions(config)?)
        .map_err(rustls_error)?;
    let builder = match config.auth_clients {
        "no" => builder.with_no_client_auth(),
        auth => {
            let verifier = WebPkiClientVerifier::builder_with_provider(
                Arc::new(trusted_cas(config)?),
                provider,
            );
            let verifier = if auth == "optional" {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(verifier.build().map_err(rustls_error)?)
        }
    };
    let server = builder.with_single_cert(chain, key).map_err(rustls_error)?;
    Ok(Arc::new(server))
}

/// The versions of `tls-protocols` that rustls offers.
fn protocol_versions(
    config: &TlsConfig,
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    let versions: Vec<_> = config
        .protocol_versions()
        .into_iter()
        .filter_map(|v| match v {
            TlsProtocol::Tls1_2 => Some(&rustls::version::TLS12),
            TlsProtocol::Tls1_3 => Some(&rustls::version::TLS13),
            TlsProtocol::Tls1_0 | TlsProtocol::Tls1_1 => None,
        })
        .collect();
    if versions.is_empty() {
        return Err(TlsError::NoProtocol);
    }
    Ok(versions)
}

/// The CAs client certificates must chain to: `tls-ca-cert-file`'s, and
/// those of every file in `tls-ca-cert-dir` (files without a certificate
/// are passed over, as OpenSSL's directory lookup never opens them).
fn trusted_cas(config: &TlsConfig) -> Result<RootCertStore, TlsError> {
    let mut certificates = Vec::new();
    if let Some(file) = &config.ca_cert_file {
        let found = read_certificates("tls-ca-cert-file", file)?;
        if found.is_empty() {
            return Err(file_error("tls-ca-cert-file", file, "no certificate"));
        }
        certificates.extend(found);
    }
    if let Some(dir) = &config.ca_cert_dir {
        let entries = std::fs::read_dir(dir).map_err(|e| file_error("tls-ca-cert-dir", dir, e))?;
        let before = certificates.len();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                certificates
                    .extend(read_certificates("tls-ca-cert-dir", &path).unwrap_or_default());
            }
        }
        if certificates.len() == before {
            return Err(file_error("tls-ca-cert-dir", dir, "no certificate"));
        }
    }
    if certificates.is_empty() {
        return Err(TlsError::NoCa);
    }
    let mut roots = RootCertStore::empty();
    for certificate in certificates {
        roots.add(certificate).map_err(rustls_error)?;
    }
    Ok(roots)
}

/// Every certificate in a PEM file, in order.
fn read_certificates(
    param: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    CertificateDer::pem_file_iter(path)
        .and_then(|items| items.collect::<Result<Vec<_>, _>>())
        .map_err(|e| file_error(param, path, e))
}

fn file_error(param: &'static str, path: &Path, reason: impl std::fmt::Display) -> TlsError {
    TlsError::File {
        param,
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

fn rustls_error(error: impl std::fmt::Display) -> TlsError {
    TlsError::Rustls(error.to_string())
}
