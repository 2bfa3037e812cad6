//! `CLUSTER MEET`'s handshake: with no cluster bus, a node learns a peer by
//! asking it `CLUSTER NODES` over the peer's client port, once, with the
//! blocking sockets `MIGRATE` uses.

use std::time::Duration;

use super::conf;
use super::map::SlotMap;
use crate::migrate::Link;

/// How long the peer may take to accept and to answer.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The peer's own map, as its `CLUSTER NODES` prints it; its
/// [`SlotMap::myself`] is the peer.
///
/// # Errors
/// Why the peer could not be asked or did not answer as a cluster node.
pub(crate) fn ask_peer(ip: &str, port: u16) -> Result<SlotMap, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut link = Link::connect(ip, &port.to_string(), TIMEOUT).map_err(io)?;
    link.write_all(b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nNODES\r\n", TIMEOUT)
        .map_err(io)?;
    let head = link.read_line(TIMEOUT).map_err(io)?;
    if head.first() != Some(&b'$') {
        return Err(String::from_utf8_lossy(head.strip_prefix(b"-").unwrap_or(&head)).into_owned());
    }
    // The bulk string's lines end in LF, the string itself in CRLF: an
    // empty line ends it.
    let mut text = String::new();
    loop {
        let line = link.read_line(TIMEOUT).map_err(io)?;
        if line.is_empty() {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&line));
        text.push('\n');
    }
    conf::parse(&text)
}
