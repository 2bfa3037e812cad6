//! The `tls-*` parameters as Redis 7 names them: the TLS port, where the
//! certificate, its key and the trusted CAs are, whether clients must
//! present a certificate, and which protocol versions are offered. Only
//! values live here; `crate::tls` turns them into a rustls configuration.

use std::path::PathBuf;

/// The `tls-auth-clients` values, as Redis spells them.
pub const TLS_AUTH_CLIENTS: &[&str] = &["no", "yes", "optional"];

/// The `tls-protocols` names Redis knows, in its order.
const PROTOCOL_NAMES: [(&str, TlsProtocol); 4] = [
    ("TLSv1", TlsProtocol::Tls1_0),
    ("TLSv1.1", TlsProtocol::Tls1_1),
    ("TLSv1.2", TlsProtocol::Tls1_2),
    ("TLSv1.3", TlsProtocol::Tls1_3),
];

/// Redis's refusal of a `tls-protocols` word it does not know.
const INVALID_PROTOCOLS: &str = "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.";

/// The TLS side of the configuration; TLS is off while `port` is 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsConfig {
    /// `tls-port`: where TLS clients connect, on every `bind` address,
    /// beside the plain `port`; 0 (the default) serves no TLS.
    pub port: u16,
    /// `tls-cert-file`: the server's certificate chain (PEM), leaf first.
    pub cert_file: Option<PathBuf>,
    /// `tls-key-file`: the certificate's private key (PEM, unencrypted:
    /// PKCS#8, PKCS#1 or SEC1).
    pub key_file: Option<PathBuf>,
    /// `tls-ca-cert-file`: the CA certificates (PEM) that client
    /// certificates must chain to.
    pub ca_cert_file: Option<PathBuf>,
    /// `tls-ca-cert-dir`: a directory whose PEM files are all trusted as
    /// CAs, beside `ca_cert_file`.
    pub ca_cert_dir: Option<PathBuf>,
    /// `tls-auth-clients`, one of [`TLS_AUTH_CLIENTS`]: `yes` (the default)
    /// refuses clients without a trusted certificate, `optional` checks a
    /// certificate only if one is presented, `no` asks for none.
    pub auth_clients: &'static str,
    /// `tls-protocols` as given: space-separated names; empty means
    /// TLSv1.2 and TLSv1.3, as in Redis 7.
    pub protocols: String,
    /// `tls-ciphers`: the TLS 1.2 cipher suites, in OpenSSL's cipher-list
    /// syntax, as far as rustls has the suites (see `crate::tls`); empty
    /// means rustls's defaults.
    pub ciphers: String,
    /// `tls-ciphersuites`: the TLS 1.3 cipher suites, OpenSSL names
    /// separated by `:`; empty means rustls's defaults.
    pub ciphersuites: String,
    /// `tls-prefer-server-ciphers`: choose the cipher suite by the
    /// server's order rather than the client's.
    pub prefer_server_ciphers: bool,
    /// `tls-session-caching`: let clients resume sessions from the
    /// server's session cache.
    pub session_caching: bool,
    /// `tls-session-cache-size`: sessions the cache holds; 0 means no
    /// limit, as OpenSSL reads it.
    pub session_cache_size: u64,
    /// `tls-session-cache-timeout`: seconds a cached session can be
    /// resumed for.
    pub session_cache_timeout_secs: u64,
    /// `tls-dh-params-file`: Diffie-Hellman parameters (PEM) for the
    /// finite-field key exchange. Checked when TLS loads, as Redis loads
    /// it, but unused: rustls offers only (EC)DHE over named groups.
    pub dh_params_file: Option<PathBuf>,
    /// `tls-cluster`: TLS for the cluster bus (and, in Redis, `MIGRATE`).
    /// FerrumKV's cluster bus and `MIGRATE` stay plain; it counts only in
    /// Redis's rule that a CA must be configured.
    pub cluster: bool,
    /// `tls-replication`: TLS for replication links, which FerrumKV does
    /// not have; it counts only in Redis's rule that a CA must be
    /// configured.
    pub replication: bool,
}

impl Default for TlsConfig {
    /// Redis's defaults: TLS off, client certificates required once on.
    fn default() -> Self {
        TlsConfig {
            port: 0,
            cert_file: None,
            key_file: None,
            ca_cert_file: None,
            ca_cert_dir: None,
            auth_clients: "yes",
            protocols: String::new(),
            ciphers: String::new(),
            ciphersuites: String::new(),
            prefer_server_ciphers: false,
            session_caching: true,
            session_cache_size: 20 * 1024,
            session_cache_timeout_secs: 300,
            dh_params_file: None,
            cluster: false,
            replication: false,
        }
    }
}

/// A TLS protocol version named in `tls-protocols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsProtocol {
    /// `TLSv1`.
    Tls1_0,
    /// `TLSv1.1`.
    Tls1_1,
    /// `TLSv1.2`.
    Tls1_2,
    /// `TLSv1.3`.
    Tls1_3,
}

impl TlsConfig {
    /// The versions `tls-protocols` names, each once; TLSv1.2 and TLSv1.3
    /// when it is empty.
    pub fn protocol_versions(&self) -> Vec<TlsProtocol> {
        // The setter only stores lists that parse.
        parse_protocols(&self.protocols)
            .unwrap_or_else(|_| vec![TlsProtocol::Tls1_2, TlsProtocol::Tls1_3])
    }
}

/// Redis's `parseProtocolsConfig`: space-separated protocol names, any
/// case; nothing at all means TLSv1.2 and TLSv1.3.
///
/// # Errors
///
/// Redis's text, for an unknown name.
pub(super) fn parse_protocols(value: &str) -> Result<Vec<TlsProtocol>, String> {
    let mut versions = Vec::new();
    for word in value.split_ascii_whitespace() {
        let (_, version) = PROTOCOL_NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(word))
            .ok_or(INVALID_PROTOCOLS)?;
        if !versions.contains(version) {
            versions.push(*version);
        }
    }
    if versions.is_empty() {
        versions = vec![TlsProtocol::Tls1_2, TlsProtocol::Tls1_3];
    }
    Ok(versions)
}

/// A path parameter: empty for none.
pub(super) fn optional_path(value: String) -> Option<PathBuf> {
    (!value.is_empty()).then(|| PathBuf::from(value))
}

/// A path parameter as `CONFIG GET` prints it.
pub(super) fn render_path(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_as_redis_reads_them() {
        use TlsProtocol::*;
        assert_eq!(parse_protocols(""), Ok(vec![Tls1_2, Tls1_3]));
        assert_eq!(parse_protocols("  "), Ok(vec![Tls1_2, Tls1_3]));
        assert_eq!(parse_protocols("tlsv1.3"), Ok(vec![Tls1_3]));
        assert_eq!(
            parse_protocols("TLSv1.2 TLSv1 TLSv1.2"),
            Ok(vec![Tls1_2, Tls1_0])
        );
        assert_eq!(
            parse_protocols("TLSv1.2 SSLv3"),
            Err(INVALID_PROTOCOLS.to_owned())
        );
    }
}
