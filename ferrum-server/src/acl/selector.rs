//! One ACL selector: the commands, keys and channels a set of rules
//! allows, and the one permission check every command goes through.
//!
//! As in Redis 7.0, commands are bits: one per row of the command table,
//! one per subcommand of a container (`config|get`), and one for "commands
//! added in the future" that only `+@all` sets. Rules change bits
//! (`+get`, `-@write`); `ACL GETUSER` describes the bits back as a few
//! categories and single commands, found greedily
//! ([`Selector::describe_commands`]).

use std::collections::BTreeMap;

use bytes::Bytes;
use ferrum_store::glob::glob_match;

use crate::command::category;
use crate::command::getkeys::KeyRole;
use crate::command::SUBCOMMANDS;
use crate::command::{flag, lookup, CommandSpec, COMMANDS};

/// Why a rule was refused. Each has Redis's wording in `ACL SETUSER`'s
/// error (see [`RuleError::text`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleError {
    /// No such command, subcommand or category.
    UnknownCommand,
    /// Not a rule.
    Syntax,
    /// A key pattern after `allkeys`.
    KeysAfterAll,
    /// A channel pattern after `allchannels`.
    ChannelsAfterAll,
    /// `<pass` or `!hash` of a password the user does not have.
    NoSuchPassword,
    /// A `#hash` that is not 64 lower-case hex digits.
    BadHash,
    /// `+config|get|x`: first arguments of subcommands cannot be allowed.
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's explanation, as `ACL SETUSER` appends it.
    pub(crate) fn text(self) -> &'static str {
        use crate::error::acl as e;
        match self {
            RuleError::UnknownCommand => e::UNKNOWN_COMMAND,
            RuleError::Syntax => e::SYNTAX,
            RuleError::KeysAfterAll => e::KEYS_AFTER_ALL,
            RuleError::ChannelsAfterAll => e::CHANNELS_AFTER_ALL,
            RuleError::NoSuchPassword => e::NO_SUCH_PASSWORD,
            RuleError::BadHash => e::BAD_HASH,
            RuleError::FirstArgOfSubcommand => e::FIRST_ARG_OF_SUBCOMMAND,
        }
    }
}

/// A command as ACL rules name it: a row of the command table or one of
/// the subcommands in [`SUBCOMMANDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AclCommand(usize);

impl AclCommand {
    /// The table row `spec`.
    pub(crate) fn row(spec: &'static CommandSpec) -> AclCommand {
        AclCommand(spec.index())
    }

    /// What a call runs: the subcommand when `spec` is a container and
    /// `args[1]` one of its subcommands, else the row itself.
    pub(crate) fn of_call(spec: &'static CommandSpec, args: &[Bytes]) -> AclCommand {
        category::subcommand_of_call(spec, args)
            .map_or(AclCommand::row(spec), |j| AclCommand(COMMANDS.len() + j))
    }

    /// The command named `name` (`get`, `config|get`), case-insensitively.
    fn parse(name: &[u8]) -> Option<AclCommand> {
        let mut parts = name.splitn(3, |&b| b == b'|');
        let spec = lookup(parts.next()?)?;
        match (parts.next(), parts.next()) {
            (None, _) => Some(AclCommand::row(spec)),
            (Some(sub), None) => category::subcommands_of(spec)
                .find(|(_, s)| s.name().as_bytes().eq_ignore_ascii_case(sub))
                .map(|(j, _)| AclCommand(COMMANDS.len() + j)),
            (Some(_), Some(_)) => None,
        }
    }

    /// The bit after every command's: set by `+@all` only, so that
    /// `ACL GETUSER` can tell `+@all -x` from `-@all +...`.
    fn future() -> usize {
        COMMANDS.len() + SUBCOMMANDS.len()
    }

    /// The table row, or `None` for a subcommand.
    fn spec(self) -> Option<&'static CommandSpec> {
        COMMANDS.get(self.0)
    }

    /// The name rules and errors use (`get`, `client|kill`).
    pub(crate) fn name(self) -> &'static str {
        match self.spec() {
            Some(spec) => spec.name,
            None => SUBCOMMANDS[self.0 - COMMANDS.len()].full_name,
        }
    }

    fn categories(self) -> u32 {
        match self.spec() {
            Some(spec) => spec.categories,
            None => SUBCOMMANDS[self.0 - COMMANDS.len()].categories,
        }
    }

    /// Every command and subcommand, each row followed by its subcommands
    /// (the order `ACL GETUSER` lists single commands in).
    fn all() -> impl Iterator<Item = AclCommand> {
        COMMANDS.iter().flat_map(|spec| {
            std::iter::once(AclCommand::row(spec))
                .chain(category::subcommands_of(spec).map(|(j, _)| AclCommand(COMMANDS.len() + j)))
        })
    }

    /// The subcommands of a row (none for a subcommand).
    fn subcommands(self) -> impl Iterator<Item = AclCommand> {
        self.spec()
            .into_iter()
            .flat_map(category::subcommands_of)
            .map(|(j, _)| AclCommand(COMMANDS.len() + j))
    }
}

/// Which of the rule families refused a command, with the position (among
/// the keys, or the channels, the command names) of the first one refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Denied {
    /// The command itself.
    Command,
    /// The key at this position of the command's keys.
    Key(usize),
    /// The channel at this position of the command's channels.
    Channel(usize),
}

/// One key pattern and what it allows.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyPattern {
    pattern: Bytes,
    read: bool,
    write: bool,
}

impl KeyPattern {
    /// `~p`, `%R~p` or `%W~p`, as ACL rules write it.
    fn rule(&self) -> String {
        let prefix = match (self.read, self.write) {
            (true, false) => "%R~",
            (false, true) => "%W~",
            _ => "~",
        };
        format!("{prefix}{}", String::from_utf8_lossy(&self.pattern))
    }
}

/// The keys and channels of one call, worked out once however many
/// selectors look at them.
pub(crate) struct CallTargets<'a> {
    spec: &'static CommandSpec,
    args: &'a [Bytes],
    keys: Option<Vec<(Bytes, KeyRole)>>,
}

impl<'a> CallTargets<'a> {
    /// The call `args` of `spec`, nothing worked out yet.
    pub(crate) fn new(spec: &'static CommandSpec, args: &'a [Bytes]) -> CallTargets<'a> {
        CallTargets {
            spec,
            args,
            keys: None,
        }
    }

    /// The call's keys with their roles, as `COMMAND GETKEYSANDFLAGS`
    /// finds them (none when the arguments do not parse: the command will
    /// refuse them itself).
    fn keys(&mut self) -> &[(Bytes, KeyRole)] {
        let (spec, args) = (self.spec, self.args);
        self.keys.get_or_insert_with(|| {
            crate::command::getkeys::command_keys(spec, args).unwrap_or_default()
        })
    }

    /// The key or channel at `denied`'s position, for `ACL LOG` and
    /// `ACL DRYRUN`.
    pub(crate) fn object(&mut self, denied: Denied) -> Bytes {
        match denied {
            Denied::Command => Bytes::new(),
            Denied::Key(i) => self
                .keys()
                .get(i)
                .map(|(k, _)| k.clone())
                .unwrap_or_default(),
            Denied::Channel(i) => channels(self.spec, self.args)
                .nth(i)
                .map(|(c, _)| c.clone())
                .unwrap_or_default(),
        }
    }
}

/// The channels a Pub/Sub call names, each with whether it is a pattern.
fn channels<'a>(
    spec: &CommandSpec,
    args: &'a [Bytes],
) -> impl Iterator<Item = (&'a Bytes, bool)> + 'a {
    let (range, pattern) = match spec.name {
        "publish" | "spublish" => (1..2.min(args.len()), false),
        "subscribe" | "ssubscribe" => (1..args.len(), false),
        "psubscribe" => (1..args.len(), true),
        _ => (0..0, false),
    };
    args[range].iter().map(move |c| (c, pattern))
}

/// One selector: the root one of a user, or one of its `(...)` selectors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selector {
    /// Every command, however many there are (`+@all` and no removal since).
    all_commands: bool,
    all_keys: bool,
    all_channels: bool,
    /// One bit per [`AclCommand`], plus the future bit.
    allowed: Vec<u64>,
    /// First arguments allowed of a command otherwise refused
    /// (`+select|0`), by command.
    first_args: BTreeMap<usize, Vec<Bytes>>,
    keys: Vec<KeyPattern>,
    channels: Vec<Bytes>,
}

impl Selector {
    /// A selector that allows nothing, except every channel when
    /// `all_channels` (`acl-pubsub-default allchannels`).
    pub(crate) fn new(all_channels: bool) -> Selector {
        Selector {
            all_commands: false,
            all_keys: false,
            all_channels,
            allowed: vec![0; AclCommand::future() / 64 + 1],
            first_args: BTreeMap::new(),
            keys: Vec::new(),
            channels: Vec::new(),
        }
    }

    /// Whether this selector allows every command on every key and channel:
    /// the check can be skipped.
    pub(crate) fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }

    /// Whether the selector names any channel (or all of them).
    pub(crate) fn all_channels(&self) -> bool {
        self.all_channels
    }

    fn bit(&self, id: usize) -> bool {
        self.allowed[id / 64] & (1 << (id % 64)) != 0
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if on {
            self.allowed[id / 64] |= 1 << (id % 64);
        } else {
            self.allowed[id / 64] &= !(1 << (id % 64));
            self.all_commands = false;
        }
    }

    /// Allows or refuses `cmd` and, for a container, each subcommand.
    fn change(&mut self, cmd: AclCommand, on: bool) {
        self.first_args.remove(&cmd.0);
        self.set_bit(cmd.0, on);
        for sub in cmd.subcommands() {
            self.set_bit(sub.0, on);
        }
    }

    /// Allows or refuses every command in the category `cat`.
    fn change_category(&mut self, cat: u32, on: bool) {
        for cmd in AclCommand::all().filter(|c| c.categories() & cat != 0) {
            self.change(cmd, on);
        }
    }

    /// Applies one rule (`+get`, `~key*`, `&chan`, `allkeys`...).
    ///
    /// # Errors
    ///
    /// The rule is not valid here; nothing changed.
    pub(crate) fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.all_commands = true;
            self.allowed.fill(u64::MAX);
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.all_commands = false;
            self.allowed.fill(0);
            self.first_args.clear();
        } else if let Some(rest) = op.strip_prefix(b"+@").or_else(|| op.strip_prefix(b"-@")) {
            let cat = category::by_name(rest).ok_or(RuleError::UnknownCommand)?;
            self.change_category(cat, op[0] == b'+');
        } else if let Some(name) = op.strip_prefix(b"+") {
            self.allow_command(name)?;
        } else if let Some(name) = op.strip_prefix(b"-") {
            let cmd = AclCommand::parse(name).ok_or(RuleError::UnknownCommand)?;
            self.change(cmd, false);
        } else if op.starts_with(b"~") || op.starts_with(b"%") {
            self.add_key_pattern(op)?;
        } else if let Some(chan) = op.strip_prefix(b"&") {
            if self.all_channels {
                return Err(RuleError::ChannelsAfterAll);
            }
            if !self.channels.iter().any(|c| c[..] == *chan) {
                self.channels.push(Bytes::copy_from_slice(chan));
            }
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// `+cmd`, `+container|sub`, or `+cmd|firstarg` for a command without
    /// subcommands (`+select|0`).
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let cmd = AclCommand::parse(name).ok_or(RuleError::UnknownCommand)?;
            self.change(cmd, true);
            return Ok(());
        };
        let (base, first_arg) = (&name[..bar], &name[bar + 1..]);
        let cmd = AclCommand::parse(base).ok_or(RuleError::UnknownCommand)?;
        let Some(spec) = cmd.spec() else {
            return Err(RuleError::FirstArgOfSubcommand);
        };
        if first_arg.is_empty() {
            return Err(RuleError::Syntax);
        }
        if category::subcommands_of(spec).next().is_some() {
            let sub = AclCommand::parse(name).ok_or(RuleError::UnknownCommand)?;
            self.change(sub, true);
        } else {
            let allowed = self.first_args.entry(cmd.0).or_default();
            if !allowed.iter().any(|a| a.eq_ignore_ascii_case(first_arg)) {
                allowed.push(Bytes::copy_from_slice(first_arg));
            }
        }
        Ok(())
    }

    /// `~pattern` or `%R~`/`%W~`/`%RW~pattern`.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeysAfterAll);
        }
        let (read, write, pattern) = match op.strip_prefix(b"%") {
            None => (true, true, &op[1..]),
            Some(rest) => {
                let tilde = rest
                    .iter()
                    .position(|&b| b == b'~')
                    .ok_or(RuleError::Syntax)?;
                let (mut read, mut write) = (false, false);
                for &c in &rest[..tilde] {
                    match c.to_ascii_uppercase() {
                        b'R' if !read => read = true,
                        b'W' if !write => write = true,
                        _ => return Err(RuleError::Syntax),
                    }
                }
                (read, write, &rest[tilde + 1..])
            }
        };
        if pattern == b"*" && read && write {
            self.all_keys = true;
            self.keys.clear();
            return Ok(());
        }
        match self.keys.iter_mut().find(|p| p.pattern[..] == *pattern) {
            Some(p) => {
                p.read |= read;
                p.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern: Bytes::copy_from_slice(pattern),
                read,
                write,
            }),
        }
        Ok(())
    }

    /// Whether this selector lets `cmd` run with the call's arguments.
    ///
    /// # Errors
    ///
    /// What refused it first: the command, then its keys, then its channels.
    pub(crate) fn check(&self, cmd: AclCommand, call: &mut CallTargets<'_>) -> Result<(), Denied> {
        if !self.all_commands && !call.spec.has(flag::NO_AUTH) && !self.bit(cmd.0) {
            let first_arg = call.args.get(if cmd.spec().is_some() { 1 } else { 2 });
            let allowed = self.first_args.get(&cmd.0).zip(first_arg);
            if !allowed.is_some_and(|(list, a)| list.iter().any(|f| f.eq_ignore_ascii_case(a))) {
                return Err(Denied::Command);
            }
        }
        if !self.all_keys {
            let refused = call
                .keys()
                .iter()
                .position(|(key, role)| !self.key_allowed(key, *role));
            if let Some(i) = refused {
                return Err(Denied::Key(i));
            }
        }
        if !self.all_channels {
            let refused = channels(call.spec, call.args)
                .position(|(chan, pattern)| !self.channel_allowed(chan, pattern));
            if let Some(i) = refused {
                return Err(Denied::Channel(i));
            }
        }
        Ok(())
    }

    /// Whether a pattern allows what `role` does to `key`.
    fn key_allowed(&self, key: &[u8], role: KeyRole) -> bool {
        let (read, write) = (role.reads(), role.writes());
        self.all_keys
            || self.keys.iter().any(|p| {
                (p.read || !read) && (p.write || !write) && glob_match(&p.pattern, key, false)
            })
    }

    /// Whether `chan` may be published or subscribed to; a pattern
    /// subscription must be allowed literally, as in Redis.
    pub(crate) fn channel_allowed(&self, chan: &[u8], pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if pattern {
                    p[..] == *chan
                } else {
                    glob_match(p, chan, false)
                }
            })
    }

    /// Whether the selector reads every key (a `%R~*`-like pattern, or
    /// `allkeys`) with `cmd`: what `SORT ... BY/GET` asks of the user.
    pub(crate) fn reads_every_key(&self, cmd: AclCommand, call: &mut CallTargets<'_>) -> bool {
        self.check(cmd, call).is_ok()
            && (self.all_keys || self.keys.iter().any(|p| p.read && p.pattern[..] == *b"*"))
    }

    /// The key patterns as `ACL GETUSER` shows them (`~a %R~b`, `~*`).
    pub(crate) fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".to_owned();
        }
        let rules: Vec<String> = self.keys.iter().map(KeyPattern::rule).collect();
        rules.join(" ")
    }

    /// The channel patterns as `ACL GETUSER` shows them (`&a &b`, `&*`).
    pub(crate) fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".to_owned();
        }
        let rules: Vec<String> = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        rules.join(" ")
    }

    /// The whole selector as `ACL LIST` writes it: keys, channels, commands.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            out.push_str(&keys);
            out.push(' ');
        }
        if !self.all_channels {
            out.push_str("resetchannels ");
        }
        let channels = self.describe_channels();
        if !channels.is_empty() {
            out.push_str(&channels);
            out.push(' ');
        }
        out.push_str(&self.describe_commands());
        out
    }

    /// The command rules that give this selector's bits, as Redis 7.0
    /// writes them: `+@all` or `-@all`, then the categories that fit best
    /// (each agreeing with more commands than it contradicts, the fewest
    /// contradictions first), then single commands for what is left, then
    /// allowed first arguments.
    pub(crate) fn describe_commands(&self) -> String {
        let additive = !self.bit(AclCommand::future());
        let mut rules = vec![if additive { "-@all" } else { "+@all" }.to_owned()];
        // `fake` is what the rules so far give; `temp` is what the
        // categories have not yet accounted for.
        let mut fake = Selector::new(false);
        if !additive {
            fake.allowed.fill(u64::MAX);
        }
        let mut temp = self.clone();
        let mut applied = vec![false; category::NAMES.len()];
        loop {
            let mut best = None;
            let (mut min_diff, mut max_same) = (usize::MAX, 0);
            for (j, &(cat, _)) in category::NAMES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = temp.count_category(cat);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                    best = Some(j);
                    (min_diff, max_same) = (diff, same);
                }
            }
            let Some(j) = best else { break };
            let (cat, name) = category::NAMES[j];
            fake.change_category(cat, additive);
            temp.change_category(cat, !additive);
            rules.push(format!("{}@{name}", if additive { '+' } else { '-' }));
            applied[j] = true;
        }
        for cmd in AclCommand::all() {
            let on = self.bit(cmd.0);
            if on != fake.bit(cmd.0) {
                rules.push(format!("{}{}", if on { '+' } else { '-' }, cmd.name()));
                fake.change(cmd, on);
            }
            if let (false, Some(args)) = (on, self.first_args.get(&cmd.0)) {
                for a in args {
                    rules.push(format!("+{}|{}", cmd.name(), String::from_utf8_lossy(a)));
                }
            }
        }
        rules.join(" ")
    }

    /// How many commands of `cat` are allowed and how many are not.
    fn count_category(&self, cat: u32) -> (usize, usize) {
        AclCommand::all()
            .filter(|c| c.categories() & cat != 0)
            .fold((0, 0), |(on, off), c| {
                if self.bit(c.0) {
                    (on + 1, off)
                } else {
                    (on, off + 1)
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(rules: &str) -> Selector {
        let mut s = Selector::new(false);
        for op in rules.split(' ').filter(|r| !r.is_empty()) {
            s.apply(op.as_bytes()).expect(op);
        }
        s
    }

    fn args(line: &str) -> Vec<Bytes> {
        line.split(' ')
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect()
    }

    fn check(s: &Selector, line: &str) -> Result<(), Denied> {
        let argv = args(line);
        let spec = lookup(&argv[0]).expect("a command");
        s.check(
            AclCommand::of_call(spec, &argv),
            &mut CallTargets::new(spec, &argv),
        )
    }

    #[test]
    fn commands_categories_and_subcommands() {
        let s = selector("+@all -@string -client|kill ~*");
        assert_eq!(check(&s, "get k"), Err(Denied::Command));
        assert_eq!(check(&s, "sadd s a"), Ok(()));
        assert_eq!(check(&s, "client id"), Ok(()));
        assert_eq!(check(&s, "client kill 1.2.3.4:5"), Err(Denied::Command));
        let s = selector("-@all +select|0 ~*");
        assert_eq!(check(&s, "select 0"), Ok(()));
        assert_eq!(check(&s, "select 1"), Err(Denied::Command));
        // AUTH and friends are never refused.
        assert_eq!(check(&s, "auth a b"), Ok(()));
    }

    #[test]
    fn keys_by_pattern_and_access() {
        let s = selector("+@all %R~read* %W~write* ~rw*");
        assert_eq!(check(&s, "get read1"), Ok(()));
        assert_eq!(check(&s, "get write1"), Err(Denied::Key(0)));
        assert_eq!(check(&s, "lpush write1 a"), Ok(()));
        assert_eq!(check(&s, "exists write1"), Ok(()));
        assert_eq!(check(&s, "exists other"), Err(Denied::Key(0)));
        assert_eq!(check(&s, "copy read1 write1"), Ok(()));
        assert_eq!(check(&s, "copy write1 read1"), Err(Denied::Key(0)));
        assert_eq!(check(&s, "mget rw1 read2 write3"), Err(Denied::Key(2)));
        assert_eq!(check(&s, "set write1 v"), Ok(()));
        assert_eq!(check(&s, "set write1 v get"), Err(Denied::Key(0)));
    }

    #[test]
    fn channels_literal_for_patterns() {
        let s = selector("+@all ~* &news.* &exact");
        assert_eq!(check(&s, "publish news.1 m"), Ok(()));
        assert_eq!(check(&s, "subscribe exact other"), Err(Denied::Channel(1)));
        assert_eq!(check(&s, "psubscribe news.*"), Ok(()));
        assert_eq!(check(&s, "psubscribe news.1*"), Err(Denied::Channel(0)));
    }

    #[test]
    fn rule_errors() {
        let mut s = Selector::new(false);
        assert_eq!(s.apply(b"+nosuch"), Err(RuleError::UnknownCommand));
        assert_eq!(s.apply(b"+@nosuch"), Err(RuleError::UnknownCommand));
        assert_eq!(
            s.apply(b"+config|get|x"),
            Err(RuleError::FirstArgOfSubcommand)
        );
        assert_eq!(s.apply(b"+config|nosuch"), Err(RuleError::UnknownCommand));
        assert_eq!(s.apply(b"+get|a|b"), Err(RuleError::UnknownCommand));
        assert_eq!(s.apply(b"%X~k"), Err(RuleError::Syntax));
        assert_eq!(s.apply(b"bogus"), Err(RuleError::Syntax));
        s.apply(b"allkeys").expect("allkeys");
        assert_eq!(s.apply(b"~k"), Err(RuleError::KeysAfterAll));
        s.apply(b"&*").expect("allchannels");
        assert_eq!(s.apply(b"&c"), Err(RuleError::ChannelsAfterAll));
    }

    #[test]
    fn descriptions_read_back_as_redis_writes_them() {
        assert_eq!(
            selector("+@all -client|kill").describe_commands(),
            "+@all -client|kill"
        );
        assert_eq!(
            selector("-@all +memory|doctor").describe_commands(),
            "-@all +memory|doctor"
        );
        assert_eq!(
            selector("-@all +memory|doctor +memory").describe_commands(),
            "-@all +memory"
        );
        assert_eq!(
            selector("-@all +memory +@all +client|id").describe_commands(),
            "+@all"
        );
        assert_eq!(selector("%R~a %W~a %R~b ~c").describe_keys(), "~a %R~b ~c");
        assert_eq!(selector("-@all").describe(), "resetchannels -@all");
        for &(_, name) in category::NAMES {
            let minus = selector(&format!("+@all -@{name}")).describe_commands();
            assert_eq!(minus, format!("+@all -@{name}"));
            let plus = selector(&format!("-@all +@{name}")).describe_commands();
            assert_eq!(plus, format!("-@all +@{name}"));
        }
    }

    #[test]
    fn unrestricted_only_with_everything() {
        assert!(selector("+@all ~* &*").unrestricted());
        assert!(!selector("+@all ~* &* -get").unrestricted());
        assert!(!selector("+@all ~a &*").unrestricted());
    }
}
