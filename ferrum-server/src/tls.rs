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
//!
//! The rest of Redis's `tls-*` tuning maps onto rustls where rustls has
//! the knob: `tls-ciphers` and `tls-ciphersuites` pick among rustls's
//! suites by their OpenSSL names ([`select_tls12`], [`select_tls13`]),
//! `tls-prefer-server-ciphers` is rustls's `ignore_client_order`, and
//! `tls-session-caching`, `-cache-size` and `-cache-timeout` shape the
//! session cache clients resume from ([`SessionCache`]). The DH parameters
//! file is read and checked as Redis reads it but not used, since rustls
//! offers only (EC)DHE over named groups.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::time::Instant;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{
    NoServerSessionStorage, StoresServerSessions, WebPkiClientVerifier,
};
use tokio_rustls::rustls::{
    self, CipherSuite, RootCertStore, ServerConfig, SupportedCipherSuite, SupportedProtocolVersion,
};
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
    /// `tls-ciphers` selects none of rustls's TLS 1.2 suites (OpenSSL
    /// fails the same way when a list selects no cipher).
    #[error("Failed to configure ciphers: {0}")]
    Ciphers(String),
    /// `tls-dh-params-file` holds no DH parameters.
    #[error("{}: failed to read DH params.", .0.display())]
    DhParams(PathBuf),
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
    if (config.cluster || config.replication)
        && config.ca_cert_file.is_none()
        && config.ca_cert_dir.is_none()
    {
        return Err(TlsError::NoCa);
    }
    if let Some(file) = &config.dh_params_file {
        check_dh_params(file)?;
    }
    let mut provider = ring::default_provider();
    provider.cipher_suites = cipher_suites(config, &provider.cipher_suites)?;
    // A version none of whose suites is left is not offered (OpenSSL's
    // behaviour when `tls-ciphersuites` names no suite it knows).
    let versions: Vec<_> = protocol_versions(config)?
        .into_iter()
        .filter(|v| provider.cipher_suites.iter().any(|s| s.version() == *v))
        .collect();
    if versions.is_empty() {
        return Err(TlsError::NoProtocol);
    }
    let provider = Arc::new(provider);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
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
    let mut server = builder.with_single_cert(chain, key).map_err(rustls_error)?;
    server.ignore_client_order = config.prefer_server_ciphers;
    if config.session_caching {
        server.session_storage = Arc::new(SessionCache::new(
            config.session_cache_size,
            Duration::from_secs(config.session_cache_timeout_secs),
        ));
    } else {
        server.session_storage = Arc::new(NoServerSessionStorage {});
        server.send_tls13_tickets = 0;
    }
    Ok(Arc::new(server))
}

/// Redis's check of `tls-dh-params-file` (OpenSSL's `PEM_read_DHparams`):
/// the file must hold a `DH PARAMETERS` block.
fn check_dh_params(file: &Path) -> Result<(), TlsError> {
    const BEGIN: &[u8] = b"-----BEGIN DH PARAMETERS-----";
    let text = std::fs::read(file).map_err(|e| file_error("tls-dh-params-file", file, e))?;
    if text.windows(BEGIN.len()).any(|w| w == BEGIN) {
        Ok(())
    } else {
        Err(TlsError::DhParams(file.to_owned()))
    }
}

/// The TLS 1.3 suites rustls offers, by their OpenSSL (and IANA) names.
const TLS13_NAMES: [(&str, CipherSuite); 3] = [
    (
        "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_256_GCM_SHA384,
    ),
    (
        "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_128_GCM_SHA256,
    ),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ),
];

/// The TLS 1.2 suites rustls offers, by their OpenSSL names.
const TLS12_NAMES: [(&str, CipherSuite); 6] = [
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// The suites of `available` that `tls-ciphersuites` (TLS 1.3) and
/// `tls-ciphers` (TLS 1.2) select, TLS 1.3 first, each list in its own
/// order; an empty parameter keeps rustls's suites of that version.
fn cipher_suites(
    config: &TlsConfig,
    available: &[SupportedCipherSuite],
) -> Result<Vec<SupportedCipherSuite>, TlsError> {
    let of_version = |v: &SupportedProtocolVersion| -> Vec<CipherSuite> {
        available
            .iter()
            .filter(|s| s.version() == v)
            .map(|s| s.suite())
            .collect()
    };
    let tls13 = if config.ciphersuites.is_empty() {
        of_version(&rustls::version::TLS13)
    } else {
        select_tls13(&config.ciphersuites)
    };
    let tls12 = if config.ciphers.is_empty() {
        of_version(&rustls::version::TLS12)
    } else {
        let chosen = select_tls12(&config.ciphers);
        if chosen.is_empty() {
            return Err(TlsError::Ciphers(config.ciphers.clone()));
        }
        chosen
    };
    Ok(tls13
        .iter()
        .chain(&tls12)
        .filter_map(|id| available.iter().find(|s| s.suite() == *id).copied())
        .collect())
}

/// OpenSSL's `SSL_CTX_set_ciphersuites`: TLS 1.3 suite names separated
/// by `:`, in order of preference; names it does not know are passed
/// over, and a list naming none turns TLS 1.3 off.
fn select_tls13(list: &str) -> Vec<CipherSuite> {
    let mut chosen = Vec::new();
    for name in list.split(':') {
        if let Some((_, id)) = TLS13_NAMES.iter().find(|(n, _)| *n == name) {
            if !chosen.contains(id) {
                chosen.push(*id);
            }
        }
    }
    chosen
}

/// The TLS 1.2 suites an OpenSSL cipher-list keyword or name selects.
fn tls12_matching(word: &str) -> Vec<CipherSuite> {
    let has = |name: &str, part: &str| name.split('-').any(|p| p == part);
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<CipherSuite> {
        TLS12_NAMES
            .iter()
            .filter(|(n, _)| f(n))
            .map(|(_, id)| *id)
            .collect()
    };
    match word {
        "ALL" | "DEFAULT" | "HIGH" | "ECDHE" | "EECDH" | "kECDHE" | "kEECDH" | "AEAD"
        | "TLSv1.2" => pick(&|_| true),
        "aRSA" | "RSA" => pick(&|n| has(n, "RSA")),
        "aECDSA" | "ECDSA" => pick(&|n| has(n, "ECDSA")),
        "AES" | "AESGCM" => pick(&|n| n.contains("-AES")),
        "AES128" => pick(&|n| has(n, "AES128")),
        "AES256" => pick(&|n| has(n, "AES256")),
        "CHACHA20" => pick(&|n| has(n, "CHACHA20")),
        "SHA256" => pick(&|n| !has(n, "SHA384")),
        "SHA384" => pick(&|n| has(n, "SHA384")),
        name => pick(&|n| n == name),
    }
}

/// OpenSSL's cipher list (`SSL_CTX_set_cipher_list`) over the TLS 1.2
/// suites rustls has: words separated by `:`, `,`, `;` or spaces; a word
/// is a name or keyword (`HIGH`, `ECDHE`, `AESGCM`, `CHACHA20`, ...), or
/// several joined by `+` for the suites all of them select; `-` removes
/// the word's suites, `!` removes them for good, `+` moves them to the
/// end; `@` directives are passed over, as are words that match none of
/// rustls's suites (`!MEDIUM`, `AES128-SHA256`), as OpenSSL passes over
/// names it does not know.
fn select_tls12(list: &str) -> Vec<CipherSuite> {
    let mut chosen: Vec<CipherSuite> = Vec::new();
    let mut banned: Vec<CipherSuite> = Vec::new();
    for word in list.split([':', ',', ';', ' ']).filter(|w| !w.is_empty()) {
        let (op, body) = match word.strip_prefix(['!', '-', '+']) {
            Some(body) => (word.as_bytes()[0], body),
            None => (0, word),
        };
        if body.starts_with('@') {
            continue;
        }
        let mut parts = body.split('+');
        let mut matched = tls12_matching(parts.next().unwrap_or_default());
        for part in parts {
            let also = tls12_matching(part);
            matched.retain(|id| also.contains(id));
        }
        match op {
            b'!' => {
                chosen.retain(|id| !matched.contains(id));
                banned.extend(matched);
            }
            b'-' => chosen.retain(|id| !matched.contains(id)),
            b'+' => {
                let moved: Vec<_> = chosen
                    .iter()
                    .filter(|id| matched.contains(id))
                    .copied()
                    .collect();
                chosen.retain(|id| !matched.contains(id));
                chosen.extend(moved);
            }
            _ => {
                for id in matched {
                    if !chosen.contains(&id) && !banned.contains(&id) {
                        chosen.push(id);
                    }
                }
            }
        }
    }
    chosen
}

/// The server's TLS session cache, as OpenSSL's `SSL_SESS_CACHE_SERVER`
/// with Redis's size and timeout: at most `limit` sessions (0: no limit),
/// the oldest dropped first, each resumable for `ttl` after it was stored.
#[derive(Debug)]
struct SessionCache {
    limit: usize,
    ttl: Duration,
    sessions: Mutex<Sessions>,
}

/// The cached sessions, and their keys oldest first (a key taken or
/// expired leaves the queue lazily).
#[derive(Debug, Default)]
struct Sessions {
    by_key: HashMap<Vec<u8>, (Instant, Vec<u8>)>,
    order: VecDeque<Vec<u8>>,
}

impl SessionCache {
    fn new(limit: u64, ttl: Duration) -> SessionCache {
        SessionCache {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            ttl,
            sessions: Mutex::default(),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fresh(&self, stored: Instant) -> bool {
        stored.elapsed() < self.ttl
    }
}

impl StoresServerSessions for SessionCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let mut s = self.sessions();
        if s.by_key
            .insert(key.clone(), (Instant::now(), value))
            .is_none()
        {
            s.order.push_back(key);
        }
        while self.limit != 0 && s.by_key.len() > self.limit {
            let Some(oldest) = s.order.pop_front() else {
                break;
            };
            s.by_key.remove(&oldest);
        }
        if s.order.len() > 2 * s.by_key.len() + 16 {
            let Sessions { by_key, order } = &mut *s;
            order.retain(|k| by_key.contains_key(k));
        }
        true
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut s = self.sessions();
        let (stored, value) = s.by_key.get(key)?;
        if self.fresh(*stored) {
            return Some(value.clone());
        }
        s.by_key.remove(key);
        None
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let (stored, value) = self.sessions().by_key.remove(key)?;
        self.fresh(stored).then_some(value)
    }

    fn can_cache(&self) -> bool {
        true
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_lists_pick_rustls_suites_as_openssl_would() {
        use CipherSuite::*;
        // redis.conf's example: MEDIUM matches nothing rustls has.
        assert_eq!(select_tls12("DEFAULT:!MEDIUM").len(), 6);
        assert_eq!(
            select_tls12("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"),
            [
                TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            ]
        );
        assert_eq!(
            select_tls12("ECDHE+AESGCM+aRSA"),
            [
                TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
                TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
            ]
        );
        assert_eq!(
            select_tls12("HIGH:!CHACHA20:CHACHA20").len(),
            4,
            "! is for good"
        );
        assert_eq!(select_tls12("HIGH:-CHACHA20:CHACHA20").len(), 6, "- is not");
        let last = select_tls12("HIGH:+aRSA");
        assert_eq!(last[3..], select_tls12("aRSA")[..], "+ moves to the end");
        assert!(select_tls12("RC4-SHA:AES128-SHA256").is_empty());
        assert_eq!(
            select_tls13("TLS_CHACHA20_POLY1305_SHA256:TLS_NOPE:TLS_AES_128_GCM_SHA256"),
            [TLS13_CHACHA20_POLY1305_SHA256, TLS13_AES_128_GCM_SHA256]
        );
        assert!(select_tls13("TLS_NOPE").is_empty());
    }

    #[test]
    fn cipher_parameters_shape_the_offered_suites() {
        let available = ring::default_provider().cipher_suites;
        let mut config = TlsConfig::default();
        let all = cipher_suites(&config, &available).expect("defaults");
        assert_eq!(all.len(), available.len());
        config.ciphersuites = "TLS_AES_256_GCM_SHA384".into();
        config.ciphers = "ECDHE-RSA-CHACHA20-POLY1305".into();
        let chosen: Vec<_> = cipher_suites(&config, &available)
            .expect("both")
            .iter()
            .map(|s| s.suite())
            .collect();
        assert_eq!(
            chosen,
            [
                CipherSuite::TLS13_AES_256_GCM_SHA384,
                CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
            ]
        );
        config.ciphers = "DES-CBC3-SHA".into();
        assert!(matches!(
            cipher_suites(&config, &available),
            Err(TlsError::Ciphers(_))
        ));
    }

    #[test]
    fn the_session_cache_keeps_its_size_and_timeout() {
        let cache = SessionCache::new(2, Duration::from_secs(300));
        for key in [b"a", b"b", b"c"] {
            assert!(cache.put(key.to_vec(), key.to_vec()));
        }
        assert_eq!(cache.get(b"a"), None, "the oldest is dropped");
        assert_eq!(cache.get(b"b"), Some(b"b".to_vec()));
        assert_eq!(cache.take(b"c"), Some(b"c".to_vec()));
        assert_eq!(cache.get(b"c"), None, "taken");
        let expired = SessionCache::new(0, Duration::ZERO);
        expired.put(b"k".to_vec(), b"v".to_vec());
        assert_eq!(expired.get(b"k"), None, "a timeout of 0 resumes nothing");
        let unlimited = SessionCache::new(0, Duration::from_secs(300));
        for i in 0..100u8 {
            unlimited.put(vec![i], vec![i]);
        }
        assert_eq!(unlimited.get(&[0]), Some(vec![0]), "0 is no limit");
    }
}
