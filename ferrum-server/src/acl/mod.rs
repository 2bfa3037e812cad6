//! Access control lists, as in Redis 7.0: named users with passwords and
//! selectors of allowed commands, keys and channels; the `default` user
//! every connection starts as (`requirepass` is its password); the ACL log
//! of refusals; the ACL file.
//!
//! The registry ([`Acl`]) hands out [`User`]s behind `Arc`s: a connection
//! keeps the user it authenticated as, and `ACL SETUSER` changes that
//! user's rules in place, so the next command sees them. The check itself
//! is [`Acl::check`]; `cmd::prepare` calls it only for a user whose rules
//! do not allow everything, so the default user costs one relaxed load a
//! command.
//!
//! # Access control (design notes)
//!
//! `ferrum-server/src/acl/` holds Redis 7.0's ACL model; `cmd/acl.rs` the
//! `ACL` command and the glue to the command path.
//!
//! - **Commands are bits.** A selector (`acl/selector.rs`) keeps one bit per
//!   row of `COMMANDS`, one per row of `SUBCOMMANDS` (`command/table.rs`:
//!   Redis's subcommands of the containers served, with their categories), and a last "future commands" bit that only `+@all` sets, so
//!   that `ACL GETUSER` can tell `+@all -get` from `-@all +...`. `+@cat`
//!   flips the bits of every command whose categories include it; `+cmd`
//!   flips a container together with its subcommands, as Redis does.
//!   `ACL GETUSER`/`ACL LIST` describe the bits back with Redis's greedy
//!   best fit (categories that agree with more commands than they contradict,
//!   then single commands), so the text round-trips through `ACL SETUSER`.
//! - **Categories live in the command table.** Each `row!` carries its ACL
//!   categories, written once from Redis 7.0.15's `COMMAND INFO`; `COMMAND
//!   INFO`, `COMMAND LIST FILTERBY ACLCAT` and `ACL CAT` all read them there.
//! - **Keys by role.** `command/getkeys.rs` gives each key of a call a `KeyRole`
//!   whose flags are Redis's key-spec flags (`RO access`, `RW insert`, `OW
//!   update`...); a `%R~` pattern allows roles with `access`, `%W~` roles
//!   with `insert`/`update`/`delete`, `~` both. The same function answers
//!   `COMMAND GETKEYSANDFLAGS`, so the check and the introspection agree.
//! - **Users** (`acl/user.rs`) are `Arc<User>`: a name and its `Rules`
//!   (on/off, SHA-256 password digests, the root selector and `(...)`
//!   selectors) behind an `RwLock`. `ACL SETUSER` applies every rule to a
//!   copy and swaps it in, so a bad rule changes nothing and connections
//!   holding the `Arc` see the change at their next command.
//! - **One check.** `cmd::prepare` calls `cmd::acl::permit` after the `AUTH`
//!   check and before `MULTI` queueing; `EXEC` calls it again for each queued
//!   command (permissions may have changed), and `cmd::script_call` for each
//!   `redis.call`, with the `multi`/`lua` log context. A refusal is logged in
//!   `ACL LOG` (`acl/log.rs`, grouped as Redis groups) and worded in
//!   `error.rs`.
//!
//! **Architecture invariant:** a user whose root selector allows every
//! command, key and channel (the shipped `default` user) is checked with one
//! relaxed atomic load (`User::unrestricted`), nothing else: no lock, no key
//! extraction, no allocation. Anything slower on that path shows in
//! `scripts/instructions-per-request.sh`.
//!
//! Connections closed by ACL changes (`DELUSER`, `LOAD`, channels revoked
//! from a subscriber) leave the client registry before the command replies,
//! so the next `CLIENT LIST` no longer shows them, as in Redis.

mod file;
mod log;
mod selector;
mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;

use crate::command::CommandSpec;
use crate::config::Config;

pub(crate) use file::{add_user_line, UserSet};
pub(crate) use log::{AclLog, Context, Event, Reason};
pub(crate) use selector::{AclCommand, CallTargets, Denied, Selector};
pub(crate) use user::{merge_selector_args, to_hex, Rules, User};

/// The name of the user every connection starts as.
pub(crate) const DEFAULT_USER: &str = "default";

/// A refused call: which rule family refused it and what it named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// What refused it.
    pub(crate) denied: Denied,
    /// The command as rules name it (`get`, `client|kill`).
    pub(crate) command: &'static str,
    /// The key or channel refused; empty for the command itself.
    pub(crate) object: Bytes,
}

impl Refusal {
    /// `ACL LOG`'s reason for this refusal.
    pub(crate) fn reason(&self) -> Reason {
        match self.denied {
            Denied::Command => Reason::Command,
            Denied::Key(_) => Reason::Key,
            Denied::Channel(_) => Reason::Channel,
        }
    }

    /// `ACL LOG`'s object: the command, key or channel refused.
    pub(crate) fn object_text(&self) -> String {
        match self.denied {
            Denied::Command => self.command.to_owned(),
            _ => String::from_utf8_lossy(&self.object).into_owned(),
        }
    }
}

/// Every user, and the log. One per server, in `Shared`.
#[derive(Debug)]
pub(crate) struct Acl {
    users: RwLock<BTreeMap<String, Arc<User>>>,
    /// The `default` user, which can be changed but never removed.
    default: Arc<User>,
    /// The default user has a password or is off: connections start
    /// unauthenticated. Read on every command, so cached here.
    requires_auth: AtomicBool,
    /// `ACL LOG`.
    pub(crate) log: AclLog,
}

impl Default for Acl {
    fn default() -> Acl {
        let default = Arc::new(User::new(DEFAULT_USER.to_owned(), Rules::default_user()));
        let users = BTreeMap::from([(DEFAULT_USER.to_owned(), default.clone())]);
        Acl {
            users: RwLock::new(users),
            default,
            requires_auth: AtomicBool::new(false),
            log: AclLog::default(),
        }
    }
}

impl Acl {
    /// The users a server starts with: the default user with
    /// `requirepass`, then the configuration's `user` lines or the ACL
    /// file (not both, as in Redis).
    ///
    /// # Errors
    ///
    /// Both are configured, or a line is refused.
    pub(crate) fn from_config(config: &Config) -> Result<Acl, String> {
        let acl = Acl::default();
        acl.set_default_password(config.requirepass.as_deref());
        let all_channels = all_channels_by_default(config);
        let aclfile = acl_file_path(config);
        if !config.users.is_empty() {
            if aclfile.is_some() {
                return Err(crate::error::acl::USERS_AND_ACLFILE.to_owned());
            }
            let mut users = UserSet::new();
            for words in &config.users {
                let words: Vec<Bytes> = words.iter().map(|w| Bytes::from(w.clone())).collect();
                add_user_line(&mut users, &words, all_channels)?;
            }
            acl.replace(users);
        } else if let Some(path) = aclfile {
            load_file(&acl, &path, all_channels)?;
        }
        Ok(acl)
    }

    /// Whether new connections must authenticate first.
    pub(crate) fn requires_auth(&self) -> bool {
        self.requires_auth.load(Ordering::Relaxed)
    }

    /// The `default` user.
    pub(crate) fn default_user(&self) -> Arc<User> {
        self.default.clone()
    }

    /// The user called `name`.
    pub(crate) fn get(&self, name: &[u8]) -> Option<Arc<User>> {
        let users = self.read();
        std::str::from_utf8(name)
            .ok()
            .and_then(|n| users.get(n).cloned())
    }

    /// Every user name, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Every user as `ACL LIST` (and the ACL file) writes it.
    pub(crate) fn list(&self) -> Vec<String> {
        self.read()
            .values()
            .map(|u| format!("user {} {}", u.name, u.rules().describe()))
            .collect()
    }

    /// The user `AUTH name password` logs in as: it exists, is on, and the
    /// password is one of its own (or it has `nopass`).
    pub(crate) fn login(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        let user = self.get(name)?;
        let ok = {
            let rules = user.rules();
            rules.enabled && rules.password_ok(password)
        };
        ok.then_some(user)
    }

    /// `requirepass`: the default user's one password, or `nopass` when
    /// none is set.
    pub(crate) fn set_default_password(&self, password: Option<&str>) {
        let mut rules = self.default.rules().clone();
        let op = match password {
            Some(p) => format!(">{p}"),
            None => "nopass".to_owned(),
        };
        // `resetpass` and a `>` or `nopass` rule are always valid.
        let _ = rules.apply(b"resetpass", false);
        let _ = rules.apply(op.as_bytes(), false);
        self.default.set_rules(rules);
        self.sync_default();
    }

    /// `ACL SETUSER name rules...`: creates the user or changes it, all
    /// rules or none. Returns the user and, for a user that existed, its
    /// rules before the change.
    ///
    /// # Errors
    ///
    /// Redis's text for a bad name or the first bad rule.
    pub(crate) fn set_user(
        &self,
        name: &[u8],
        args: &[Bytes],
        all_channels: bool,
    ) -> Result<(Arc<User>, Option<Rules>), String> {
        use crate::error::acl as e;
        let name = valid_name(name).ok_or_else(|| e::BAD_USERNAME.to_owned())?;
        let ops = merge_selector_args(args).map_err(|at| e::unmatched_parenthesis(at))?;
        let mut users = self.write();
        let existing = users.get(&name).cloned();
        let before = existing.as_ref().map(|u| u.rules().clone());
        let base = before.clone().unwrap_or_else(|| Rules::new(all_channels));
        let rules = base
            .with(&ops, all_channels)
            .map_err(|(op, err)| e::bad_rule(&String::from_utf8_lossy(op), err.text()))?;
        let user = match existing {
            Some(user) => {
                user.set_rules(rules);
                user
            }
            None => {
                let user = Arc::new(User::new(name.clone(), rules));
                users.insert(name, user.clone());
                user
            }
        };
        drop(users);
        self.sync_default();
        Ok((user, before))
    }

    /// `ACL DELUSER name`: the user removed, if there was one. The default
    /// user is never removed (the caller refuses it first).
    pub(crate) fn delete(&self, name: &[u8]) -> Option<Arc<User>> {
        if name == DEFAULT_USER.as_bytes() {
            return None;
        }
        let name = std::str::from_utf8(name).ok()?;
        self.write().remove(name)
    }

    /// Replaces every user with `users` (`ACL LOAD`, the ACL file at
    /// start). The default user keeps its identity, so its connections
    /// stay; it gets the rules `users` gives it, or stays as it is if
    /// `users` has none for it. Returns the users that were replaced.
    pub(crate) fn replace(&self, mut users: UserSet) -> Vec<Arc<User>> {
        if let Some(rules) = users.remove(DEFAULT_USER) {
            self.default.set_rules(rules);
        }
        let mut fresh = BTreeMap::from([(DEFAULT_USER.to_owned(), self.default.clone())]);
        for (name, rules) in users {
            fresh.insert(name.clone(), Arc::new(User::new(name, rules)));
        }
        let old = std::mem::replace(&mut *self.write(), fresh);
        self.sync_default();
        old.into_values()
            .filter(|u| !Arc::ptr_eq(u, &self.default))
            .collect()
    }

    /// Whether `user` may run `args` (a call of `spec`), and if not why.
    pub(crate) fn check(
        user: &User,
        spec: &'static CommandSpec,
        args: &[Bytes],
    ) -> Result<(), Refusal> {
        let cmd = AclCommand::of_call(spec, args);
        let mut call = CallTargets::new(spec, args);
        let result = user.rules().check(cmd, &mut call);
        result.map_err(|denied| Refusal {
            denied,
            command: cmd.name(),
            object: call.object(denied),
        })
    }

    fn sync_default(&self) {
        let open = {
            let rules = self.default.rules();
            rules.enabled && rules.nopass
        };
        self.requires_auth.store(!open, Ordering::Relaxed);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<User>>> {
        self.users.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<User>>> {
        self.users.write().unwrap_or_else(|p| p.into_inner())
    }
}

/// The ACL file's path (`aclfile`), relative to `dir` as Redis, which
/// changes into `dir`, reads it; `None` without one.
pub(crate) fn acl_file_path(config: &Config) -> Option<String> {
    let file = config.stored_value("aclfile");
    if file.is_empty() {
        return None;
    }
    let path = std::path::Path::new(&config.dir).join(file);
    Some(path.to_string_lossy().into_owned())
}

/// Whether new users and selectors may use every channel
/// (`acl-pubsub-default allchannels`).
pub(crate) fn all_channels_by_default(config: &Config) -> bool {
    config.stored_value("acl-pubsub-default") == "allchannels"
}

/// `name` as a user name: Redis refuses spaces and NUL bytes.
pub(crate) fn valid_name(name: &[u8]) -> Option<String> {
    let bad = name.iter().any(|&b| b == 0 || b.is_ascii_whitespace());
    (!bad).then(|| String::from_utf8_lossy(name).into_owned())
}

/// Loads the ACL file at `path` (`ACL LOAD`).
///
/// # Errors
///
/// The file is unreadable or has bad lines; nothing changed.
pub(crate) fn load_file(
    acl: &Acl,
    path: &str,
    all_channels: bool,
) -> Result<Vec<Arc<User>>, String> {
    let users = file::load(path, all_channels)?;
    Ok(acl.replace(users))
}

/// Writes every user to the ACL file at `path` (`ACL SAVE`).
///
/// # Errors
///
/// The file could not be written.
pub(crate) fn save_file(acl: &Acl, path: &str) -> std::io::Result<()> {
    file::save(acl, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Vec<Bytes> {
        words
            .split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    #[test]
    fn users_log_in_with_their_passwords_when_on() {
        let acl = Acl::default();
        assert!(!acl.requires_auth());
        acl.set_user(b"u", &args(">pw"), false).expect("valid");
        assert!(acl.login(b"u", b"pw").is_none(), "new users start off");
        acl.set_user(b"u", &args("on"), false).expect("valid");
        assert!(acl.login(b"u", b"pw").is_some());
        assert!(acl.login(b"u", b"other").is_none());
        assert!(acl.login(b"nosuch", b"pw").is_none());
        acl.set_default_password(Some("secret"));
        assert!(acl.requires_auth());
        assert!(acl.login(b"default", b"secret").is_some());
        acl.set_default_password(None);
        assert!(!acl.requires_auth());
    }

    #[test]
    fn set_user_is_all_or_nothing() {
        let acl = Acl::default();
        let err = acl
            .set_user(b"u", &args("on +nosuch"), false)
            .expect_err("bad rule");
        assert!(err.contains("'+nosuch'"), "{err}");
        assert!(acl.get(b"u").is_none());
        assert!(acl.set_user(b"a b", &[], false).is_err());
        assert!(acl.set_user(b"u", &args("(~a"), false).is_err());
    }

    #[test]
    fn replace_keeps_the_default_user() {
        let acl = Acl::default();
        let default = acl.default_user();
        acl.set_user(b"old", &args("on"), false).expect("valid");
        let mut users = UserSet::new();
        add_user_line(&mut users, &args("default on nopass ~* -@all"), false).expect("valid");
        add_user_line(&mut users, &args("new on"), false).expect("valid");
        let replaced = acl.replace(users);
        assert_eq!(
            replaced.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(),
            ["old"]
        );
        assert!(Arc::ptr_eq(&default, &acl.default_user()));
        assert_eq!(acl.names(), ["default", "new"]);
        assert_eq!(acl.default_user().rules().root.describe_commands(), "-@all");
    }
}
