//! `cluster-config-file`: the slot map in the shape of Redis's
//! `nodes.conf`, which is also what `CLUSTER NODES` prints.
//!
//! One line per node: `<id> <ip>:<port>@<bus-port> <flags> <master>
//! <ping-sent> <pong-received> <config-epoch> <link-state> <slot>...`,
//! where the node's own line has the `myself` flag and a slot is `N`,
//! `N-M`, `[N->-<id>]` (migrating to `id`) or `[N-<-<id>]` (importing
//! from `id`); then `vars currentEpoch <n> lastVoteEpoch <n>`. An operator
//! can write the whole map by hand: the same node lines on every node,
//! `myself` on each node's own.

use std::fmt::Write as _;

use super::map::{Node, NodeIndex, SlotMap, MYSELF};
use super::slot::SLOTS;

/// `CLUSTER NODES`: one line per node, this node first.
pub(crate) fn render_nodes(map: &SlotMap) -> String {
    let mut out = String::new();
    for (i, node) in map.nodes.iter().enumerate() {
        let flags = if i == MYSELF {
            "myself,master"
        } else {
            "master"
        };
        let _ = write!(
            out,
            "{} {}:{}@{}",
            node.id, node.ip, node.port, node.bus_port
        );
        if !node.hostname.is_empty() {
            let _ = write!(out, ",{}", node.hostname);
        }
        let _ = write!(out, " {flags} - 0 0 {} connected", node.epoch);
        for (a, b) in map.ranges_of(i) {
            if a == b {
                let _ = write!(out, " {a}");
            } else {
                let _ = write!(out, " {a}-{b}");
            }
        }
        if i == MYSELF {
            for (slot, to) in &map.migrating {
                let _ = write!(out, " [{slot}->-{}]", map.nodes[*to].id);
            }
            for (slot, from) in &map.importing {
                let _ = write!(out, " [{slot}-<-{}]", map.nodes[*from].id);
            }
        }
        out.push('\n');
    }
    out
}

/// The file's text: the node lines and the `vars` line.
pub(crate) fn render_file(map: &SlotMap) -> String {
    let mut out = render_nodes(map);
    let _ = writeln!(
        out,
        "vars currentEpoch {} lastVoteEpoch 0",
        map.current_epoch
    );
    out
}

/// Reads a file written by [`render_file`], by Redis, or by hand.
///
/// # Errors
/// A message naming the line that does not parse, or saying that no line
/// (or more than one) is `myself`.
pub(crate) fn parse(text: &str) -> Result<SlotMap, String> {
    let lines: Vec<(usize, Vec<&str>)> = text
        .lines()
        .enumerate()
        .map(|(n, l)| (n + 1, l.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    let mut map: Option<SlotMap> = None;
    let mut others = Vec::new();
    let mut current_epoch = 0;
    for (n, words) in &lines {
        if words[0] == "vars" {
            current_epoch = parse_vars(words).ok_or_else(|| bad_line(*n))?;
            continue;
        }
        let node = parse_node(words).ok_or_else(|| bad_line(*n))?;
        if words[2].split(',').any(|f| f == "myself") {
            if map.is_some() {
                return Err(format!("line {n}: a second node flagged myself"));
            }
            map = Some(SlotMap::new(node));
        } else {
            others.push(node);
        }
    }
    let mut map = map.ok_or("no node is flagged myself")?;
    for n in others {
        let i = map.learn(&n.id, &n.ip, n.port, n.bus_port);
        map.nodes[i].epoch = n.epoch;
        map.nodes[i].hostname = n.hostname;
    }
    map.current_epoch = current_epoch;
    for (n, words) in &lines {
        if words[0] == "vars" {
            continue;
        }
        let owner = map.find(words[0].as_bytes()).ok_or_else(|| bad_line(*n))?;
        for word in &words[8..] {
            apply_slot(&mut map, owner, word).ok_or_else(|| bad_line(*n))?;
        }
    }
    Ok(map)
}

fn bad_line(n: usize) -> String {
    format!("line {n} is not a nodes.conf line")
}

/// `vars currentEpoch <n> lastVoteEpoch <n>`: the current epoch.
fn parse_vars(words: &[&str]) -> Option<u64> {
    let mut epoch = None;
    for pair in words[1..].chunks(2) {
        if let [name, value] = pair {
            let value: u64 = value.parse().ok()?;
            if *name == "currentEpoch" {
                epoch = Some(value);
            }
        }
    }
    epoch.or(Some(0))
}

/// A node line's first eight fields.
fn parse_node(words: &[&str]) -> Option<Node> {
    if words.len() < 8 || !is_node_id(words[0].as_bytes()) {
        return None;
    }
    // `ip:port@bus-port[,hostname]`; the ip may be empty, and an IPv6
    // address holds colons of its own.
    let (addr, hostname) = words[1].split_once(',').unwrap_or((words[1], ""));
    let (ip_port, bus) = addr.split_once('@')?;
    let (ip, port) = ip_port.rsplit_once(':')?;
    Some(Node {
        id: words[0].to_owned(),
        ip: ip.to_owned(),
        port: port.parse().ok()?,
        bus_port: bus.parse().ok()?,
        hostname: hostname.to_owned(),
        epoch: words[6].parse().ok()?,
    })
}

/// Applies one slot field of `owner`'s line.
fn apply_slot(map: &mut SlotMap, owner: NodeIndex, word: &str) -> Option<()> {
    if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
        let (slot, arrow, id) = if let Some((s, id)) = inner.split_once("->-") {
            (s, true, id)
        } else {
            let (s, id) = inner.split_once("-<-")?;
            (s, false, id)
        };
        let slot = parse_slot(slot)?;
        let peer = map.find(id.as_bytes())?;
        if owner == MYSELF {
            let side = if arrow {
                &mut map.migrating
            } else {
                &mut map.importing
            };
            side.insert(slot, peer);
        }
        return Some(());
    }
    let (a, b) = match word.split_once('-') {
        Some((a, b)) => (parse_slot(a)?, parse_slot(b)?),
        None => (parse_slot(word)?, parse_slot(word)?),
    };
    if a > b {
        return None;
    }
    for slot in a..=b {
        map.assign(slot, Some(owner));
    }
    Some(())
}

/// A slot number, `0..16384`.
pub(crate) fn parse_slot(s: &str) -> Option<u16> {
    s.parse::<u16>().ok().filter(|s| usize::from(*s) < SLOTS)
}

/// Whether `id` has the shape of a node id: 40 hex characters.
pub(crate) fn is_node_id(id: &[u8]) -> bool {
    id.len() == 40 && id.iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "e67b60988dac42652bdd8782dd2cfb5e6c6570d1";
    const B: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_file_redis_wrote_reads_back() {
        let text = format!("{A} :42100@52100 myself,master - 0 0 0 connected 0-5000\nvars currentEpoch 0 lastVoteEpoch 0\n");
        let map = parse(&text).expect("parses");
        assert_eq!(map.myself().id, A);
        assert_eq!(map.myself().port, 42100);
        assert_eq!(map.assigned(), 5001);
        assert_eq!(render_file(&map), text);
    }

    #[test]
    fn peers_and_migrations_round_trip() {
        let text = format!(
            "{A} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-99 101 [100->-{B}] [200-<-{B}]\n\
             {B} 127.0.0.1:7001@17001,node-b.example master - 0 0 2 connected 100 200-16383\n\
             vars currentEpoch 2 lastVoteEpoch 0\n"
        );
        let map = parse(&text).expect("parses");
        assert_eq!(map.nodes.len(), 2);
        assert_eq!(map.owner(100), Some(1));
        assert_eq!(map.migrating.get(&100), Some(&1));
        assert_eq!(map.importing.get(&200), Some(&1));
        assert_eq!(map.current_epoch, 2);
        assert_eq!(render_file(&map), text);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert_eq!(parse("").unwrap_err(), "no node is flagged myself");
        let line = format!("{A} :1@2 myself,master - 0 0 0 connected");
        let twice = format!("{line}\n{line}\n");
        assert_eq!(
            parse(&twice).unwrap_err(),
            "line 2: a second node flagged myself"
        );
        let bad_slot = format!("{A} :1@2 myself,master - 0 0 0 connected 16384");
        assert_eq!(
            parse(&bad_slot).unwrap_err(),
            "line 1 is not a nodes.conf line"
        );
        assert!(parse("xyz :1@2 myself,master - 0 0 0 connected").is_err());
        let unknown_peer = format!("{A} :1@2 myself,master - 0 0 0 connected [5->-{B}]");
        assert!(parse(&unknown_peer).is_err());
    }
}
