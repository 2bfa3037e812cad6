//! TLS on `tls-port`, beside the plain port, with certificates each test
//! makes for itself (rcgen): requests over TLS, client certificates
//! required, optional or not asked for, handshakes that fail or never
//! finish, `CONFIG SET` reloading the files, and start-up refusals.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::common::{err, resp, run, TestServer};

type TlsClient = StreamOwned<ClientConnection, TcpStream>;

/// A CA, with a certificate and key written as PEM files it signed.
struct Ca {
    key: KeyPair,
    cert: rcgen::Certificate,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Ca { key, cert }
    }

    /// A leaf certificate for `names` (DNS names or IP addresses) and its key.
    fn issue(&self, names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let params = CertificateParams::new(names).expect("leaf params");
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("leaf certificate");
        (cert.pem(), key.serialize_pem())
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }
}

/// A directory of PEM files for one test, removed when dropped.
struct Pki {
    dir: PathBuf,
    ca: Ca,
}

impl Pki {
    /// A CA, a server certificate for localhost / 127.0.0.1 and a client
    /// certificate, both signed by it.
    fn new() -> Pki {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ferrum-tls-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ca = Ca::new("FerrumKV test CA");
        let pki = Pki { dir, ca };
        pki.write("ca.crt", &pki.ca.pem());
        let (cert, key) = pki.ca.issue(&["localhost", "127.0.0.1"]);
        pki.write("server.crt", &cert);
        pki.write("server.key", &key);
        let (cert, key) = pki.ca.issue(&["client"]);
        pki.write("client.crt", &cert);
        pki.write("client.key", &key);
        pki
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write PEM");
        self.path(name)
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// A server with TLS on a free port and the given extra options.
    fn server(&self, extra: &[&str]) -> TestServer {
        let ca = self.path("ca.crt");
        let mut args = vec!["--tls-ca-cert-file", &ca];
        args.extend_from_slice(extra);
        self.server_without_ca(&args)
    }

    /// A server with TLS on a free port, its certificate and key, no CA
    /// unless `extra` names one.
    fn server_without_ca(&self, extra: &[&str]) -> TestServer {
        let port = free_port().to_string();
        let (cert, key) = (self.path("server.crt"), self.path("server.key"));
        let mut args = vec![
            "--tls-port",
            &port,
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
        ];
        args.extend_from_slice(extra);
        TestServer::start_with(&args)
    }

    /// A TLS client trusting this test's CA, with a certificate from a CA
    /// the server does not trust.
    fn rogue(&self, server: &TestServer) -> std::io::Result<TlsClient> {
        let (cert, key) = Ca::new("Someone else's CA").issue(&["client"]);
        let (cert, key) = (
            self.write("rogue.crt", &cert),
            self.write("rogue.key", &key),
        );
        connect(tls_addr(server), &self.path("ca.crt"), Some((&cert, &key)))
    }

    /// A TLS client trusting this test's CA, with its client certificate.
    fn client(&self, server: &TestServer) -> std::io::Result<TlsClient> {
        connect(
            tls_addr(server),
            &self.path("ca.crt"),
            Some((&self.path("client.crt"), &self.path("client.key"))),
        )
    }

    /// A TLS client trusting this test's CA, without a certificate.
    fn anonymous(&self, server: &TestServer) -> std::io::Result<TlsClient> {
        connect(tls_addr(server), &self.path("ca.crt"), None)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tls_addr(server: &TestServer) -> SocketAddr {
    server.tls_addr.expect("server has a TLS port")
}

/// A port nobody listens on now (the OS's pick, released for the server).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn client_config(ca_file: &str, identity: Option<(&str, &str)>) -> Arc<ClientConfig> {
    client_config_for(rustls::DEFAULT_VERSIONS, ca_file, identity)
}

/// A client offering only `versions`, trusting the CAs of `ca_file`, with
/// the certificate and key files of `identity` if given.
fn client_config_for(
    versions: &[&'static rustls::SupportedProtocolVersion],
    ca_file: &str,
    identity: Option<(&str, &str)>,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file).expect("CA file") {
        roots.add(cert.expect("CA PEM")).expect("CA certificate");
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(roots);
    let config = match identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .expect("client cert")
                .collect::<Result<Vec<_>, _>>()
                .expect("client cert PEM");
            let key = PrivateKeyDer::from_pem_file(key).expect("client key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client identity")
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// Connects and completes the handshake, then checks that the server
/// answers (with TLS 1.3 a refused client certificate shows only there).
fn connect(
    addr: SocketAddr,
    ca_file: &str,
    identity: Option<(&str, &str)>,
) -> std::io::Result<TlsClient> {
    ping(open(addr, client_config(ca_file, identity))?)
}

/// A TLS client for `addr` (the handshake runs with the first request).
fn open(addr: SocketAddr, config: Arc<ClientConfig>) -> std::io::Result<TlsClient> {
    let name = ServerName::try_from("localhost").expect("name");
    let conn = ClientConnection::new(config, name).map_err(std::io::Error::other)?;
    let socket = TcpStream::connect(addr)?;
    socket.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(StreamOwned::new(conn, socket))
}

/// The stream, once the server answered its PING.
fn ping(mut stream: TlsClient) -> std::io::Result<TlsClient> {
    let pong = request(&mut stream, &resp(&[b"PING"]), 7)?;
    if pong != b"+PONG\r\n" {
        return Err(std::io::Error::other(format!("PING answered {pong:?}")));
    }
    Ok(stream)
}

/// Sends `request` and reads `len` bytes of reply.
fn request(stream: &mut impl ReadWrite, request: &[u8], len: usize) -> std::io::Result<Vec<u8>> {
    stream.write_all(request)?;
    stream.flush()?;
    let mut reply = vec![0; len];
    stream.read_exact(&mut reply)?;
    Ok(reply)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn assert_reply(stream: &mut TlsClient, args: &[&[u8]], reply: &[u8]) {
    let got = request(stream, &resp(args), reply.len()).expect("reply");
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(reply)
    );
}

#[test]
fn ping_set_get_over_tls_beside_the_plain_port() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let mut tls = pki.client(&server).expect("TLS client with a certificate");
    assert_reply(&mut tls, &[b"SET", b"k", b"over tls"], b"+OK\r\n");
    assert_reply(&mut tls, &[b"GET", b"k"], b"$8\r\nover tls\r\n");
    // A pipeline, and a reply larger than one TLS record (16 KiB).
    let big = vec![b'x'; 100_000];
    let mut pipeline = resp(&[b"SET", b"big", &big]);
    pipeline.extend(resp(&[b"STRLEN", b"big"]));
    pipeline.extend(resp(&[b"GET", b"big"]));
    let head = b"+OK\r\n:100000\r\n$100000\r\n";
    let got = request(&mut tls, &pipeline, head.len() + big.len() + 2).expect("pipeline");
    assert_eq!(&got[..head.len()], head);
    assert_eq!(&got[head.len()..head.len() + big.len()], &big[..]);
    // The plain port serves the same keyspace.
    let mut plain = server.client();
    assert_eq!(
        run::<String>(&mut plain, &["GET", "k"]).expect("plain GET"),
        "over tls"
    );
    assert_eq!(
        run::<String>(&mut plain, &["PING"]).expect("plain PING"),
        "PONG"
    );
    // QUIT over TLS: its reply, then the end of the stream.
    assert_reply(&mut tls, &[b"QUIT"], b"+OK\r\n");
    let mut rest = Vec::new();
    assert!(tls.read_to_end(&mut rest).is_ok_and(|n| n == 0), "{rest:?}");
}

#[test]
fn client_certificate_required_by_default() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    assert!(pki.anonymous(&server).is_err(), "no client certificate");
    assert!(
        pki.rogue(&server).is_err(),
        "a certificate from an untrusted CA"
    );
    assert!(
        pki.client(&server).is_ok(),
        "the trusted client still gets in"
    );
}

#[test]
fn client_certificate_optional_or_not_asked() {
    let pki = Pki::new();
    let optional = pki.server(&["--tls-auth-clients", "optional"]);
    assert!(pki.anonymous(&optional).is_ok());
    assert!(pki.client(&optional).is_ok());
    assert!(
        pki.rogue(&optional).is_err(),
        "a presented certificate is still checked"
    );
    // With `no` no CA is needed at all.
    let open = pki.server_without_ca(&["--tls-auth-clients", "no"]);
    assert!(pki.anonymous(&open).is_ok());
}

#[test]
fn the_client_checks_the_server_certificate() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let other = Ca::new("Another CA");
    let other_ca = pki.write("other-ca.crt", &other.pem());
    let connected = connect(
        tls_addr(&server),
        &other_ca,
        Some((&pki.path("client.crt"), &pki.path("client.key"))),
    );
    assert!(
        connected.is_err(),
        "the server's certificate is not from Another CA"
    );
}

#[test]
fn bad_handshakes_do_not_disturb_other_clients() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let mut established = pki.client(&server).expect("first client");
    let addr = tls_addr(&server);
    // Clients that connect and never say anything hold their handshakes
    // open in their own tasks, not in the accept loop. (Were they awaited
    // there, each would stall it for the 10 s handshake timeout, and two
    // of them outlast the 10 s the clients below wait for a reply.)
    let silent: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(addr).expect("silent client"))
        .collect();
    // Plain RESP sent to the TLS port.
    let mut plain = TcpStream::connect(addr).expect("plaintext client");
    plain.write_all(&resp(&[b"PING"])).expect("write");
    assert!(closed_without_pong(&mut plain));
    // Garbage, and a ClientHello cut short, then gone.
    let mut garbage = TcpStream::connect(addr).expect("garbage client");
    garbage
        .write_all(&[0x16, 0x03, 0x01, 0xff, 0xff, 1, 2, 3])
        .expect("write");
    let hello = client_hello(&pki);
    for cut in [1, 5, hello.len() / 2, hello.len() - 1] {
        let mut partial = TcpStream::connect(addr).expect("partial client");
        partial.write_all(&hello[..cut]).expect("write");
    }
    // Everyone else is served meanwhile, over TLS and in plain.
    let mut fresh = pki.client(&server).expect("a client after the bad ones");
    assert_reply(&mut fresh, &[b"INCR", b"n"], b":1\r\n");
    assert_reply(&mut established, &[b"INCR", b"n"], b":2\r\n");
    assert!(closed_without_pong(&mut garbage));
    let mut con = server.client();
    assert_eq!(run::<i64>(&mut con, &["INCR", "n"]).expect("plain"), 3);
    drop(silent);
}

/// Reads until the peer closes; true if it closed without a `+PONG`.
fn closed_without_pong(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return !got.windows(4).any(|w| w == b"PONG"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => {
                return e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut
            }
        }
    }
}

/// The first bytes a TLS client sends: its ClientHello.
fn client_hello(pki: &Pki) -> Vec<u8> {
    let config = client_config(&pki.path("ca.crt"), None);
    let name = ServerName::try_from("localhost").expect("name");
    let mut conn = ClientConnection::new(config, name).expect("client");
    let mut hello = Vec::new();
    conn.write_tls(&mut hello).expect("ClientHello");
    hello
}

#[test]
fn config_get_and_set_reload_the_certificate() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let mut con = server.client();
    let get = |con: &mut redis::Connection, name: &str| -> String {
        let pair: Vec<String> = run(con, &["CONFIG", "GET", name]).expect("CONFIG GET");
        pair[1].clone()
    };
    assert_eq!(
        get(&mut con, "tls-port"),
        tls_addr(&server).port().to_string()
    );
    assert_eq!(get(&mut con, "tls-cert-file"), pki.path("server.crt"));
    assert_eq!(get(&mut con, "tls-auth-clients"), "yes");
    assert_eq!(get(&mut con, "tls-protocols"), "");
    assert_eq!(get(&mut con, "tls-ca-cert-dir"), "");
    assert_eq!(
        err(&mut con, &["CONFIG", "SET", "tls-cert-file", "/nonexistent/server.crt"]),
        "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs."
    );
    assert_eq!(
        get(&mut con, "tls-cert-file"),
        pki.path("server.crt"),
        "nothing changed"
    );
    assert_eq!(
        err(&mut con, &["CONFIG", "SET", "tls-protocols", "SSLv3"]),
        "ERR CONFIG SET failed (possibly related to argument 'tls-protocols') - Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."
    );
    // A certificate from a second CA, and a directory holding that CA:
    // new handshakes use them, the open connection keeps going.
    let mut before = pki.client(&server).expect("client before the reload");
    let second = Ca::new("Second CA");
    let (cert, key) = second.issue(&["localhost"]);
    let (cert, key) = (
        pki.write("second.crt", &cert),
        pki.write("second.key", &key),
    );
    let ca_dir = pki.dir.join("cas");
    std::fs::create_dir_all(&ca_dir).expect("CA dir");
    std::fs::write(ca_dir.join("second.pem"), second.pem()).expect("CA file");
    std::fs::write(ca_dir.join("README"), "not a certificate").expect("other file");
    let (client_cert, client_key) = second.issue(&["client"]);
    let (client_cert, client_key) = (
        pki.write("second-client.crt", &client_cert),
        pki.write("second-client.key", &client_key),
    );
    let ca_dir = ca_dir.display().to_string();
    let set: String = run(
        &mut con,
        &[
            "CONFIG",
            "SET",
            "tls-cert-file",
            &cert,
            "tls-key-file",
            &key,
            "tls-ca-cert-dir",
            &ca_dir,
        ],
    )
    .expect("reload");
    assert_eq!(set, "OK");
    let second_ca = pki.write("second-ca.crt", &second.pem());
    let identity = Some((client_cert.as_str(), client_key.as_str()));
    assert!(
        connect(tls_addr(&server), &second_ca, identity).is_ok(),
        "the new certificate"
    );
    assert!(pki.client(&server).is_err(), "the old certificate is gone");
    assert_reply(&mut before, &[b"PING"], b"+PONG\r\n");
}

#[test]
fn config_set_tls_port_moves_the_tls_listener() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let mut con = server.client();
    let old = tls_addr(&server);
    let before = pki.client(&server).expect("client before the move");
    let new = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let _: () = run(
        &mut con,
        &["CONFIG", "SET", "tls-port", &new.port().to_string()],
    )
    .unwrap();
    let (ca, cert, key) = (
        pki.path("ca.crt"),
        pki.path("client.crt"),
        pki.path("client.key"),
    );
    connect(new, &ca, Some((&cert, &key))).expect("the new TLS port serves");
    assert!(
        TcpStream::connect(old).is_err(),
        "the old TLS port is closed"
    );
    ping(before).expect("a TLS connection made before the move stays");
    let taken = TcpListener::bind("127.0.0.1:0").expect("taken");
    let used = taken.local_addr().unwrap().port().to_string();
    assert_eq!(
        err(&mut con, &["CONFIG", "SET", "tls-port", &used]),
        "ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on this port. Check server logs."
    );
    connect(new, &ca, Some((&cert, &key))).expect("bound again after the failure");
}

#[test]
fn tls_protocols_limit_the_versions() {
    let pki = Pki::new();
    let (cert, key, ca) = (
        pki.path("client.crt"),
        pki.path("client.key"),
        pki.path("ca.crt"),
    );
    let tls12 = || client_config_for(&[&rustls::version::TLS12], &ca, Some((&cert, &key)));
    let both = pki.server(&[]);
    assert!(
        ping(open(tls_addr(&both), tls12()).expect("open")).is_ok(),
        "TLSv1.2 by default"
    );
    let only13 = pki.server(&["--tls-protocols", "TLSv1.3"]);
    assert!(pki.client(&only13).is_ok());
    assert!(
        ping(open(tls_addr(&only13), tls12()).expect("open")).is_err(),
        "TLSv1.2 refused"
    );
}

#[test]
fn maxclients_refusal_arrives_over_tls() {
    let pki = Pki::new();
    let server = pki.server(&["--maxclients", "1"]);
    let _only = pki.client(&server).expect("the one client");
    let identity = Some((pki.path("client.crt"), pki.path("client.key")));
    let identity = identity.as_ref().map(|(c, k)| (c.as_str(), k.as_str()));
    let config = client_config(&pki.path("ca.crt"), identity);
    let mut refused = open(tls_addr(&server), config).expect("open");
    let mut line = Vec::new();
    refused
        .read_to_end(&mut line)
        .expect("the refusal, then the end");
    assert_eq!(
        String::from_utf8_lossy(&line),
        "-ERR max number of clients reached\r\n"
    );
}

#[test]
fn start_up_refuses_an_incomplete_tls_configuration() {
    let pki = Pki::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let refusal = |args: &[&str]| -> String {
        let port = free_port().to_string();
        let head = ["--port", "0", "--tls-port", &port];
        let all = head.iter().chain(args);
        let config =
            ferrum_server::Config::from_args(all.map(|s| s.to_string())).expect("valid syntax");
        match rt.block_on(ferrum_server::Server::bind(config)) {
            Ok(_) => panic!("{args:?} was accepted"),
            Err(e) => format!("{e:#}"),
        }
    };
    let (cert, key) = (pki.path("server.crt"), pki.path("server.key"));
    assert_eq!(
        refusal(&["--tls-key-file", &key]),
        "Failed to configure TLS: No tls-cert-file configured!"
    );
    assert_eq!(
        refusal(&["--tls-cert-file", &cert]),
        "Failed to configure TLS: No tls-key-file configured!"
    );
    assert_eq!(
        refusal(&["--tls-cert-file", &cert, "--tls-key-file", &key]),
        "Failed to configure TLS: Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"
    );
    let missing = pki.path("missing.key");
    let text = refusal(&[
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &missing,
        "--tls-auth-clients",
        "no",
    ]);
    assert!(
        text.starts_with(&format!(
            "Failed to configure TLS: tls-key-file '{missing}': "
        )),
        "{text}"
    );
    // The certificate's own key is the only one that fits.
    let text = refusal(&[
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &pki.path("client.key"),
        "--tls-auth-clients",
        "no",
    ]);
    assert!(text.starts_with("Failed to configure TLS: "), "{text}");
    assert_eq!(
        refusal(&[
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-auth-clients",
            "no",
            "--tls-protocols",
            "TLSv1 TLSv1.1"
        ]),
        "Failed to configure TLS: tls-protocols: FerrumKV offers TLSv1.2 and TLSv1.3 only"
    );
}

/// The suite and handshake kind of a connection that answered its PING.
fn negotiated(stream: &TlsClient) -> (String, Option<rustls::HandshakeKind>) {
    let suite = stream
        .conn
        .negotiated_cipher_suite()
        .map(|s| format!("{:?}", s.suite()))
        .unwrap_or_default();
    (suite, stream.conn.handshake_kind())
}

#[test]
fn cipher_and_session_parameters_take_effect() {
    let pki = Pki::new();
    let (cert, key, ca) = (
        pki.path("client.crt"),
        pki.path("client.key"),
        pki.path("ca.crt"),
    );
    let identity = Some((cert.as_str(), key.as_str()));
    let server = pki.server(&["--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"]);
    let tls = pki.client(&server).expect("TLS 1.3 client");
    assert_eq!(negotiated(&tls).0, "TLS13_CHACHA20_POLY1305_SHA256");
    let mut con = server.client();
    let _: () = run(&mut con, &["CONFIG", "SET", "tls-ciphers", "ECDHE+AES256"]).expect("set");
    let tls12 = client_config_for(&[&rustls::version::TLS12], &ca, identity);
    let stream = ping(open(tls_addr(&server), tls12).expect("open")).expect("TLS 1.2 client");
    assert!(
        negotiated(&stream).0.contains("AES_256_GCM"),
        "{:?}",
        negotiated(&stream)
    );
    assert_eq!(
        err(&mut con, &["CONFIG", "SET", "tls-ciphers", "DES-CBC3-SHA"]),
        "ERR CONFIG SET failed (possibly related to argument 'tls-ciphers') - Unable to update TLS configuration. Check server logs."
    );
    // A session is resumed from the server's cache, unless caching is off.
    let resumes = |con: &mut redis::Connection, caching: &str| {
        let _: () = run(con, &["CONFIG", "SET", "tls-session-caching", caching]).expect("set");
        let config = client_config(&ca, identity);
        let first = ping(open(tls_addr(&server), config.clone()).expect("open")).expect("first");
        drop(first);
        let second = ping(open(tls_addr(&server), config).expect("open")).expect("second");
        negotiated(&second).1 == Some(rustls::HandshakeKind::Resumed)
    };
    assert!(resumes(&mut con, "yes"));
    assert!(!resumes(&mut con, "no"));
}

/// A pipeline written whole before any reply is read, over TLS: the
/// stream's writes go through rustls and its flush, not the plain socket's
/// `write_now`, and must not stop the connection reading either.
#[test]
fn a_pipeline_written_whole_over_tls_gets_every_reply() {
    let pki = Pki::new();
    let server = pki.server(&[]);
    let mut tls = pki.client(&server).expect("handshake");
    tls.sock
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    tls.sock
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let echo = vec![b'e'; 2000];
    let pairs = 8_000;
    let batch = resp(&[b"ECHO", &echo]).repeat(100);
    for sent in (0..pairs).step_by(100) {
        tls.write_all(&batch)
            .unwrap_or_else(|e| panic!("the server stopped reading after {sent}: {e}"));
    }
    tls.flush().unwrap();
    let mut expected = b"$2000\r\n".to_vec();
    expected.extend_from_slice(&echo);
    expected.extend_from_slice(b"\r\n");
    let mut reply = vec![0u8; expected.len()];
    for i in 0..pairs {
        tls.read_exact(&mut reply)
            .unwrap_or_else(|e| panic!("reply {i} did not arrive: {e}"));
        assert!(reply == expected, "reply {i} differs");
    }
}
