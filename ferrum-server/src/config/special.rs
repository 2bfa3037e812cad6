//! The parameters whose values have a syntax or a check of their own,
//! beyond their [`Kind`](super::table::Kind)'s: each setter validates as
//! Redis 7 does and stores the value as `CONFIG GET` prints it back.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use ferrum_proto::parse_i64;

use super::syntax::parse_memory;
use super::Config;

/// Redis's `CONFIG_BINDADDR_MAX`.
/// Who may use a feature Redis can open to local clients only
/// (`enable-debug-command`, Redis's `PROTECTED_ACTION_ALLOWED_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// Nobody.
    No,
    /// Every client.
    Yes,
    /// Clients connected from a loopback address.
    Local,
}

impl Allowed {
    /// The names, as Redis spells and `CONFIG GET` prints them.
    pub const NAMES: [&'static str; 3] = ["no", "yes", "local"];

    /// The name `CONFIG GET` prints.
    pub fn as_str(self) -> &'static str {
        Allowed::NAMES[self as usize]
    }

    /// The setting called `name` (lowercase, one of [`Allowed::NAMES`]).
    pub fn from_name(name: &str) -> Option<Allowed> {
        [Allowed::No, Allowed::Yes, Allowed::Local]
            .into_iter()
            .find(|a| a.as_str() == name)
    }

    /// Whether a client connected from `peer` may use the feature.
    pub fn permits(self, peer: IpAddr) -> bool {
        match self {
            Allowed::No => false,
            Allowed::Yes => true,
            Allowed::Local => peer.is_loopback(),
        }
    }
}

pub(super) const MAX_BIND_ADDRS: usize = 16;

/// `replicaof host port` (or `no one`), checked as Redis checks it and
/// stored: the server follows that primary from its start.
pub(super) fn set_replicaof(config: &mut Config, words: Vec<String>) -> Result<(), String> {
    // No words (the default, or `""` as `CONFIG GET` renders it): not a
    // replica.
    if words.iter().all(String::is_empty) {
        config.stored.insert("replicaof", String::new());
        return Ok(());
    }
    let [host, port] = words.as_slice() else {
        return Err("wrong number of arguments".into());
    };
    let no_one = host.eq_ignore_ascii_case("no") && port.eq_ignore_ascii_case("one");
    if !no_one && !port.parse::<i64>().is_ok_and(|p| (0..=65535).contains(&p)) {
        return Err("Invalid master port".into());
    }
    let value = if no_one {
        String::new()
    } else {
        format!("{host} {port}")
    };
    config.stored.insert("replicaof", value);
    Ok(())
}

impl Config {
    /// `maxmemory-clients` in bytes: the value, or its percentage of
    /// `maxmemory` (so `10%` of no `maxmemory` is 0, off, as in Redis).
    pub fn maxmemory_clients_bytes(&self) -> u64 {
        let value = self.stored_value("maxmemory-clients");
        match value.strip_suffix('%') {
            Some(pct) => {
                let pct = pct.parse::<u64>().unwrap_or(0);
                (u128::from(self.maxmemory_bytes) * u128::from(pct) / 100) as u64
            }
            None => parse_memory(value).unwrap_or(0),
        }
    }
}

/// `maxmemory-clients`: a memory value or a percentage of `maxmemory`
/// (Redis's `PERCENT_CONFIG`), stored as given and read back by
/// [`Config::maxmemory_clients_bytes`].
pub(super) fn set_maxmemory_clients(config: &mut Config, value: String) -> Result<(), String> {
    if let Some(pct) = value.strip_suffix('%') {
        let n = parse_i64(pct.as_bytes()).ok_or("argument must be a memory or percent value")?;
        if n < 0 {
            return Err("argument must be a memory or percent value".into());
        }
        if n > 100 {
            return Err("percentage argument must be less or equal to 100".into());
        }
    } else {
        parse_memory(&value).ok_or("argument must be a memory or percent value")?;
    }
    config.stored.insert("maxmemory-clients", value);
    Ok(())
}

/// Whether Redis would accept `template` as `proc-title-template`: its
/// `sdstemplate` syntax (`{name}` variables of Redis's list, `{{` and `}}`
/// for braces), expanding (with an empty title) to something other than
/// spaces.
pub(super) fn proc_title_template_ok(template: &str) -> bool {
    let mut expanded = String::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("{{") {
            expanded.push('{');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("}}") {
            expanded.push('}');
            rest = r;
        } else if let Some(r) = rest.strip_prefix('{') {
            let Some(end) = r.find('}') else {
                return false;
            };
            match &r[..end] {
                "title" | "server-mode" | "unixsocket" => {}
                "listen-addr" | "port" | "tls-port" | "config-file" => expanded.push('x'),
                _ => return false,
            }
            rest = &r[end + 1..];
        } else if c == '}' {
            return false;
        } else {
            expanded.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    !expanded.trim_matches(' ').is_empty()
}

/// Redis's `NET_HOST_STR_LEN`: a hostname is shorter.
const HOST_STR_LEN: usize = 256;

/// Redis's `isValidAnnouncedHostname` (`cluster-announce-hostname`):
/// letters, digits, `-` and `.`, shorter than [`HOST_STR_LEN`]; empty
/// means none.
pub(super) fn announced_hostname_ok(name: &str) -> Result<(), String> {
    if name.len() >= HOST_STR_LEN {
        return Err(format!(
            "Hostnames must be less than {HOST_STR_LEN} characters"
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into());
    }
    Ok(())
}

/// The flags of `shutdown-on-sigint`/`-sigterm`, in Redis's order.
const SHUTDOWN_FLAGS: [&str; 5] = ["default", "save", "nosave", "now", "force"];

/// Redis's multi-argument enum for `shutdown-on-sigint`/`-sigterm`: one or
/// more of [`SHUTDOWN_FLAGS`] (any case), not both `save` and `nosave`,
/// kept as Redis prints them back (`default` alone, else the flags set in
/// table order).
pub(super) fn shutdown_flags(words: &[String]) -> Result<String, String> {
    let one_of = || {
        format!(
            "argument(s) must be one of the following: {}",
            SHUTDOWN_FLAGS.join(", ")
        )
    };
    let mut set = [false; SHUTDOWN_FLAGS.len()];
    for word in words {
        let i = SHUTDOWN_FLAGS
            .iter()
            .position(|f| f.eq_ignore_ascii_case(word))
            .ok_or_else(one_of)?;
        set[i] = true;
    }
    if words.is_empty() {
        return Err(one_of());
    }
    if set[1] && set[2] {
        return Err("shutdown can't have both 'save' and 'nosave' flags".into());
    }
    let named: Vec<&str> = SHUTDOWN_FLAGS
        .iter()
        .zip(set)
        .skip(1)
        .filter_map(|(f, on)| on.then_some(*f))
        .collect();
    Ok(if named.is_empty() {
        "default".to_owned()
    } else {
        named.join(" ")
    })
}

/// Redis's `latency-tracking-info-percentiles`: numbers in 0..=100, kept
/// as Redis prints them back (`%f` without trailing zeros: `50.0` is `50`).
pub(super) fn set_latency_percentiles(
    config: &mut Config,
    words: Vec<String>,
) -> Result<(), String> {
    let mut kept = Vec::with_capacity(words.len());
    for word in &words {
        let p: f64 = word
            .parse()
            .ok()
            .filter(|p: &f64| !p.is_nan())
            .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
        if !(0.0..=100.0).contains(&p) {
            return Err(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    .into(),
            );
        }
        kept.push(trim_double(&format!("{p:.6}")).to_owned());
    }
    config
        .stored
        .insert("latency-tracking-info-percentiles", kept.join(" "));
    Ok(())
}

/// Redis's `trimDoubleString`: `%f`'s output without trailing zeros, and
/// without the point when nothing follows it.
fn trim_double(fixed: &str) -> &str {
    if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.')
    } else {
        fixed
    }
}

/// Redis's `isValidDBfilename`: a file name, not a path.
pub(super) fn set_dbfilename(config: &mut Config, name: String) -> Result<(), String> {
    if name.contains('/') {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    config.dbfilename = name;
    Ok(())
}

/// `dir`, kept absolute as Redis reports it (Redis changes into it and
/// answers `getcwd`), so that `CONFIG REWRITE` and `CONFIG GET` agree
/// wherever the server is restarted from: resolved when it exists, else
/// joined to the current directory. FerrumKV writes nothing there, so
/// unlike Redis it does not refuse a directory that does not exist.
pub(super) fn set_dir(config: &mut Config, dir: String) -> Result<(), String> {
    let path = Path::new(&dir);
    let absolute = std::fs::canonicalize(path).or_else(|_| std::path::absolute(path));
    config.dir = absolute.map_or(dir, |p| p.to_string_lossy().into_owned());
    Ok(())
}

pub(super) fn set_bind(config: &mut Config, addrs: Vec<String>) -> Result<(), String> {
    if addrs.iter().all(String::is_empty) {
        return Err("at least one address is required".into());
    }
    if addrs.len() > MAX_BIND_ADDRS {
        return Err("Too many bind addresses specified.".into());
    }
    // As in Redis, an address is only checked when it is bound: a bad one
    // fails start-up, or the `CONFIG SET`, with the bind's own error.
    config.bind = addrs;
    Ok(())
}

/// `metrics-addr`: empty for none, `ip:port`, or a bare port on 127.0.0.1
/// (DESIGN.md: the exporter binds to loopback unless told otherwise).
pub(super) fn parse_metrics_addr(value: &str) -> Result<Option<SocketAddr>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    if let Ok(port) = value.parse::<u16>() {
        return Ok(Some(SocketAddr::from(([127, 0, 0, 1], port))));
    }
    value
        .parse()
        .map(Some)
        .map_err(|_| "argument must be an address such as 127.0.0.1:9121, or a port".to_owned())
}
