//! A cluster-aware [`Route`]: the client side of the Redis Cluster
//! protocol, enough for the sharded replay, and [`form`], which makes
//! fresh cluster-mode nodes one cluster.
//!
//! # Slots
//!
//! A key belongs to one of [`SLOTS`] hash slots: CRC16 in the XMODEM
//! variant (polynomial 0x1021, initial value 0, no reflection) of the key,
//! modulo 16384. When the key holds a `{` followed later by a `}` with at
//! least one byte between them, only those bytes are hashed (the hash
//! tag), so `{user1000}.following` and `{user1000}.followers` share a
//! slot. The function is `ferrum_proto::slot`'s, which the server routes
//! by too.
//!
//! # Routing
//!
//! [`ClusterRoute`] reads the slot map from `CLUSTER SLOTS` of any node,
//! keeps one [`Client`] per node (connected on first use) and sends each
//! command to its key's owner. A node that does not own the slot answers
//! `-MOVED <slot> <host>:<port>`: the route records the new owner and
//! resends there. During a slot migration, `-ASK <slot> <host>:<port>` asks
//! for one command at the importing node: the route sends `ASKING` and the
//! command there, and keeps its map. At most [`MAX_REDIRECTS`] redirections
//! per command, then an error naming the last one.

use std::collections::hash_map::{Entry, HashMap};
use std::net::{SocketAddr, ToSocketAddrs};

pub use ferrum_proto::slot::{crc16, hash_tag, key_slot, SLOTS};
use ferrum_proto::Frame;

use crate::client::{Client, ClientError};
use crate::sharded::Route;

/// Redirections followed for one command before [`ClusterRoute::call`]
/// gives up (as Lettuce's default).
pub const MAX_REDIRECTS: usize = 5;

/// A redirection in an error reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redirect {
    /// `-MOVED`: the slot is served by `to` from now on.
    Moved { slot: u16, to: SocketAddr },
    /// `-ASK`: this one command goes to `to`, after `ASKING`.
    Ask { to: SocketAddr },
}

impl Redirect {
    /// The redirection `reply` is, if it is one (`MOVED 3999
    /// 127.0.0.1:6381`).
    fn parse(reply: &[u8]) -> Option<Redirect> {
        let text = std::str::from_utf8(reply).ok()?;
        let mut words = text.split(' ');
        let (kind, slot, addr) = (words.next()?, words.next()?, words.next()?);
        let slot: u16 = slot.parse().ok().filter(|&s| usize::from(s) < SLOTS)?;
        let (host, port) = addr.rsplit_once(':')?;
        let to = (host.trim_matches(['[', ']']), port.parse::<u16>().ok()?)
            .to_socket_addrs()
            .ok()?
            .next()?;
        match kind {
            "MOVED" => Some(Redirect::Moved { slot, to }),
            "ASK" => Some(Redirect::Ask { to }),
            _ => None,
        }
    }
}

/// Commands sent to the node serving their key's slot; see the module
/// docs.
#[derive(Debug)]
pub struct ClusterRoute {
    /// The owner of each slot, `None` where no node serves it.
    owners: Vec<Option<SocketAddr>>,
    clients: HashMap<SocketAddr, Client>,
}

impl ClusterRoute {
    /// Connects to `seed`, any node of the cluster, and reads the slot map
    /// from its `CLUSTER SLOTS`.
    ///
    /// # Errors
    ///
    /// If the node cannot be reached, refuses the command (not in cluster
    /// mode) or answers with an unexpected shape.
    pub fn connect(seed: SocketAddr) -> Result<ClusterRoute, ClientError> {
        let mut client = Client::connect(seed)?;
        let reply = client.call(&["CLUSTER", "SLOTS"])?;
        let owners = slot_owners(&reply, seed).ok_or_else(|| ClientError::Unexpected {
            command: "CLUSTER SLOTS".to_owned(),
            reply: format!("{reply:?}"),
        })?;
        Ok(ClusterRoute {
            owners,
            clients: HashMap::from([(seed, client)]),
        })
    }

    /// The node the route sends `slot`'s commands to now.
    pub fn owner(&self, slot: u16) -> Option<SocketAddr> {
        self.owners.get(usize::from(slot)).copied().flatten()
    }

    /// The connection to `addr`, made on first use.
    fn client(&mut self, addr: SocketAddr) -> Result<&mut Client, ClientError> {
        Ok(match self.clients.entry(addr) {
            Entry::Occupied(client) => client.into_mut(),
            Entry::Vacant(slot) => slot.insert(Client::connect(addr)?),
        })
    }

    /// Sends `command` to `addr`, after `ASKING` when `asking`, and returns
    /// the command's reply.
    fn send(
        &mut self,
        addr: SocketAddr,
        asking: bool,
        command: &[&[u8]],
    ) -> Result<Frame, ClientError> {
        let client = self.client(addr)?;
        if asking {
            client.queue(&[b"ASKING"]);
        }
        client.queue(command);
        client.flush()?;
        // Both replies are read before either is judged, so a refused
        // `ASKING` leaves the connection in step.
        let asked = if asking { Some(client.read()?) } else { None };
        let reply = client.read()?;
        match asked {
            Some(Frame::Error(e)) => Err(ClientError::Server(
                String::from_utf8_lossy(&e).into_owned(),
            )),
            _ => Ok(reply),
        }
    }
}

impl Route for ClusterRoute {
    fn name(&self) -> &'static str {
        "cluster"
    }

    fn call(&mut self, key: &[u8], command: &[&[u8]]) -> Result<Frame, ClientError> {
        let slot = key_slot(key);
        let mut to = self.owner(slot).ok_or(ClientError::SlotUnserved(slot))?;
        let mut asking = false;
        for _ in 0..=MAX_REDIRECTS {
            let reply = self.send(to, asking, command)?;
            let redirect = match &reply {
                Frame::Error(e) => Redirect::parse(e),
                _ => None,
            };
            match redirect {
                None => return Ok(reply),
                Some(Redirect::Moved { slot, to: owner }) => {
                    self.owners[usize::from(slot)] = Some(owner);
                    (to, asking) = (owner, false);
                }
                Some(Redirect::Ask { to: importer }) => (to, asking) = (importer, true),
            }
        }
        Err(ClientError::TooManyRedirects {
            command: String::from_utf8_lossy(command[0]).into_owned(),
            slot,
            last: to,
        })
    }
}

/// The owner of each slot in a `CLUSTER SLOTS` reply: ranges of `[start,
/// end, [host, port, id], replicas...]`. An empty host (a node that does
/// not know its own address) is `seed`'s. `None` if the reply has another
/// shape.
fn slot_owners(reply: &Frame, seed: SocketAddr) -> Option<Vec<Option<SocketAddr>>> {
    let Frame::Array(ranges) = reply else {
        return None;
    };
    let mut owners = vec![None; SLOTS];
    for range in ranges {
        let Frame::Array(fields) = range else {
            return None;
        };
        let [Frame::Integer(start), Frame::Integer(end), Frame::Array(primary), ..] = &fields[..]
        else {
            return None;
        };
        let [Frame::Bulk(host), Frame::Integer(port), ..] = &primary[..] else {
            return None;
        };
        let port = u16::try_from(*port).ok()?;
        let addr = if host.is_empty() {
            SocketAddr::new(seed.ip(), port)
        } else {
            (std::str::from_utf8(host).ok()?, port)
                .to_socket_addrs()
                .ok()?
                .next()?
        };
        let (start, end) = (usize::try_from(*start).ok()?, usize::try_from(*end).ok()?);
        owners.get_mut(start..=end)?.fill(Some(addr));
    }
    Some(owners)
}

/// Makes fresh cluster-mode `nodes` one cluster: the slots split into
/// `nodes.len()` contiguous ranges of (nearly) equal size, node `i` given
/// range `i` with `CLUSTER ADDSLOTSRANGE`, and every node told of every
/// other with `CLUSTER MEET`.
///
/// # Errors
///
/// If a node cannot be reached or refuses a command (one not in cluster
/// mode, or one that already owns slots).
pub fn form(nodes: &[SocketAddr]) -> Result<(), ClientError> {
    let mut clients = nodes
        .iter()
        .map(Client::connect)
        .collect::<Result<Vec<_>, _>>()?;
    for (client, (start, end)) in clients.iter_mut().zip(even_ranges(nodes.len())) {
        client.call(&[
            "CLUSTER",
            "ADDSLOTSRANGE",
            &start.to_string(),
            &end.to_string(),
        ])?;
    }
    for client in &mut clients {
        for node in nodes {
            client.call(&[
                "CLUSTER",
                "MEET",
                &node.ip().to_string(),
                &node.port().to_string(),
            ])?;
        }
    }
    Ok(())
}

/// `n` contiguous, inclusive slot ranges covering every slot, their sizes
/// differing by at most one.
fn even_ranges(n: usize) -> Vec<(u16, u16)> {
    let slots = SLOTS;
    (0..n)
        .map(|i| {
            let (start, end) = (i * slots / n, (i + 1) * slots / n - 1);
            // Both are below SLOTS, so they fit.
            (start as u16, end as u16)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster_keyslot() {
        // `CLUSTER KEYSLOT` as Redis 7.0.15 answers it.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"hello"), 866);
        assert_eq!(key_slot(b"key:000001"), 5493);
        assert_eq!(key_slot(b"a{b}c{d}"), 3300);
        assert_eq!(key_slot(b"{user1000}.following"), 3443);
        assert_eq!(key_slot(b"{user1000}.followers"), 3443);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn crc16_is_the_xmodem_check_value() {
        assert_eq!(crc16(b"123456789"), 0x31c3);
    }

    #[test]
    fn the_hash_tag_is_between_the_first_braces_when_not_empty() {
        assert_eq!(hash_tag(b"{user1}.name"), b"user1");
        assert_eq!(hash_tag(b"a{b}c{d}"), b"b");
        assert_eq!(hash_tag(b"{a{b}c}"), b"a{b");
        assert_eq!(hash_tag(b"}{x}"), b"x");
        assert_eq!(hash_tag(b"{}x"), b"{}x");
        assert_eq!(hash_tag(b"{}{x}"), b"{}{x}");
        assert_eq!(hash_tag(b"x{y"), b"x{y");
    }

    #[test]
    fn redirections_parse_and_anything_else_does_not() {
        let to: SocketAddr = "127.0.0.1:6381".parse().unwrap();
        assert_eq!(
            Redirect::parse(b"MOVED 3999 127.0.0.1:6381"),
            Some(Redirect::Moved { slot: 3999, to })
        );
        assert_eq!(
            Redirect::parse(b"ASK 3999 127.0.0.1:6381"),
            Some(Redirect::Ask { to })
        );
        for reply in [
            "OOM command not allowed when used memory > 'maxmemory'.",
            "MOVED 16384 127.0.0.1:6381",
            "MOVED 1 127.0.0.1",
            "MOVED x 127.0.0.1:1",
            "TRYAGAIN Multiple keys request during rehashing of slot",
        ] {
            assert_eq!(Redirect::parse(reply.as_bytes()), None, "{reply}");
        }
    }

    #[test]
    fn even_ranges_cover_every_slot_once() {
        assert_eq!(even_ranges(1), [(0, 16383)]);
        assert_eq!(even_ranges(3), [(0, 5460), (5461, 10921), (10922, 16383)]);
        for n in 1..=7 {
            let ranges = even_ranges(n);
            assert_eq!(ranges[0].0, 0);
            assert_eq!(usize::from(ranges[n - 1].1), SLOTS - 1);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].1 + 1, pair[1].0);
            }
        }
    }

    #[test]
    fn a_slots_reply_maps_every_range_to_its_primary() {
        let seed: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let range = |a: i64, b: i64, host: &str, port: i64| {
            Frame::Array(vec![
                Frame::Integer(a),
                Frame::Integer(b),
                Frame::Array(vec![
                    Frame::bulk(host.to_owned()),
                    Frame::Integer(port),
                    Frame::bulk("id".to_owned()),
                ]),
            ])
        };
        let reply = Frame::Array(vec![
            range(0, 99, "127.0.0.1", 7001),
            range(100, 16383, "", 7002),
        ]);
        let owners = slot_owners(&reply, seed).unwrap();
        assert_eq!(owners[99], Some("127.0.0.1:7001".parse().unwrap()));
        assert_eq!(owners[100], Some("127.0.0.1:7002".parse().unwrap()));
        assert_eq!(slot_owners(&Frame::Integer(1), seed), None);
        assert_eq!(
            slot_owners(&Frame::Array(vec![range(0, 16384, "h", 1)]), seed),
            None
        );
    }
}
