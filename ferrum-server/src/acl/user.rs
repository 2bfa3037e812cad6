//! An ACL user: whether it may log in, with which passwords, and its
//! selectors; the `ACL SETUSER` rules that change it and the descriptions
//! `ACL LIST` and `ACL GETUSER` give of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::selector::{AclCommand, CallTargets, Denied, RuleError, Selector};

/// A SHA-256 digest of a password: all a user keeps of it.
pub(crate) type PasswordHash = [u8; 32];

/// The digest of `password`.
pub(crate) fn hash_password(password: &[u8]) -> PasswordHash {
    Sha256::digest(password).into()
}

/// What a user is allowed: the part `ACL SETUSER` changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// `on`: `AUTH` as this user may succeed.
    pub(crate) enabled: bool,
    /// `nopass`: any password is right.
    pub(crate) nopass: bool,
    /// `sanitize-payload` (`Some(true)`) or `skip-sanitize-payload`
    /// (`Some(false)`), shown as Redis shows them; `RESTORE` payloads are
    /// always checked here.
    sanitize: Option<bool>,
    /// Password digests, in the order they were added.
    passwords: Vec<PasswordHash>,
    /// The selector the plain rules apply to.
    pub(crate) root: Selector,
    /// `(...)` selectors: a command runs if any selector allows it.
    selectors: Vec<Selector>,
}

impl Rules {
    /// A new user's rules: off, no password, nothing allowed (every
    /// channel when `all_channels`, from `acl-pubsub-default`).
    pub(crate) fn new(all_channels: bool) -> Rules {
        Rules {
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            root: Selector::new(all_channels),
            selectors: Vec::new(),
        }
    }

    /// The `default` user of a fresh server: `on nopass ~* &* +@all`.
    pub(crate) fn default_user() -> Rules {
        let mut rules = Rules::new(true);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            // These rules are valid by construction.
            let _ = rules.apply(op.as_bytes(), true);
        }
        rules
    }

    /// Whether `password` logs in as this user (enabled or not).
    pub(crate) fn password_ok(&self, password: &[u8]) -> bool {
        self.nopass || self.passwords.contains(&hash_password(password))
    }

    /// Whether every command, key and channel is allowed.
    pub(crate) fn unrestricted(&self) -> bool {
        self.root.unrestricted()
    }

    /// Applies one `ACL SETUSER` rule; `all_channels` is what
    /// `acl-pubsub-default` gives new selectors.
    ///
    /// # Errors
    ///
    /// The rule is not valid; the rules may have changed in part, so
    /// callers apply rules to a copy (see [`Rules::with`]).
    pub(crate) fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize = Some(false);
        } else if is("sanitize-payload") {
            self.sanitize = Some(true);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if is("clearselectors") {
            self.selectors.clear();
        } else if is("reset") {
            *self = Rules {
                sanitize: Some(true),
                ..Rules::new(all_channels)
            };
        } else if let Some(pass) = op.strip_prefix(b">") {
            self.add_password(hash_password(pass));
        } else if let Some(hex) = op.strip_prefix(b"#") {
            self.add_password(parse_hash(hex)?);
        } else if let Some(pass) = op.strip_prefix(b"<") {
            self.remove_password(&hash_password(pass))?;
        } else if let Some(hex) = op.strip_prefix(b"!") {
            self.remove_password(&parse_hash(hex)?)?;
        } else if op.len() >= 2 && op.starts_with(b"(") && op.ends_with(b")") {
            let mut selector = Selector::new(all_channels);
            let inner = &op[1..op.len() - 1];
            for rule in inner
                .split(|b| b.is_ascii_whitespace())
                .filter(|r| !r.is_empty())
            {
                selector.apply(rule)?;
            }
            self.selectors.push(selector);
        } else {
            self.root.apply(op)?;
        }
        Ok(())
    }

    /// A copy of these rules with `ops` applied, or the first rule refused
    /// with why.
    pub(crate) fn with<'o>(
        &self,
        ops: &'o [Bytes],
        all_channels: bool,
    ) -> Result<Rules, (&'o Bytes, RuleError)> {
        let mut rules = self.clone();
        for op in ops {
            rules.apply(op, all_channels).map_err(|e| (op, e))?;
        }
        Ok(rules)
    }

    fn add_password(&mut self, hash: PasswordHash) {
        self.nopass = false;
        if !self.passwords.contains(&hash) {
            self.passwords.push(hash);
        }
    }

    fn remove_password(&mut self, hash: &PasswordHash) -> Result<(), RuleError> {
        let at = self.passwords.iter().position(|p| p == hash);
        let at = at.ok_or(RuleError::NoSuchPassword)?;
        self.passwords.remove(at);
        Ok(())
    }

    /// Every selector, the root one first.
    pub(crate) fn selectors(&self) -> impl Iterator<Item = &Selector> {
        std::iter::once(&self.root).chain(&self.selectors)
    }

    /// The `(...)` selectors.
    pub(crate) fn extra_selectors(&self) -> &[Selector] {
        &self.selectors
    }

    /// Whether some selector lets the call run. When none does, the most
    /// telling refusal, as Redis picks it: channels over keys over the
    /// command, and among equals the one furthest into the arguments.
    pub(crate) fn check(&self, cmd: AclCommand, call: &mut CallTargets<'_>) -> Result<(), Denied> {
        let mut worst = None;
        for s in self.selectors() {
            match s.check(cmd, call) {
                Ok(()) => return Ok(()),
                Err(d) => worst = worst.max(Some(d)),
            }
        }
        Err(worst.unwrap_or(Denied::Command))
    }

    /// The flags `ACL GETUSER` lists (`on`, `nopass`...).
    pub(crate) fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    /// The password digests in hex, as `ACL GETUSER` lists them.
    pub(crate) fn password_hexes(&self) -> impl Iterator<Item = String> + '_ {
        self.passwords.iter().map(|h| to_hex(h))
    }

    /// The rules as `ACL LIST` and the ACL file write them, after
    /// `user <name> `: flags, passwords, the root selector, then each
    /// `(...)` selector.
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.flags().into_iter().map(str::to_owned).collect();
        parts.extend(self.password_hexes().map(|h| format!("#{h}")));
        parts.push(self.root.describe());
        parts.extend(self.selectors.iter().map(|s| format!("({})", s.describe())));
        parts.join(" ")
    }
}

/// A `#hash` rule's digest: exactly 64 lower-case hex digits.
fn parse_hash(hex: &[u8]) -> Result<PasswordHash, RuleError> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if hex.len() != 64 {
        return Err(RuleError::BadHash);
    }
    let mut hash = [0u8; 32];
    for (byte, pair) in hash.iter_mut().zip(hex.chunks_exact(2)) {
        let (hi, lo) = (digit(pair[0]), digit(pair[1]));
        *byte = hi
            .zip(lo)
            .map(|(h, l)| h << 4 | l)
            .ok_or(RuleError::BadHash)?;
    }
    Ok(hash)
}

/// Lower-case hex of `bytes`.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `ACL SETUSER`'s arguments with each `(...)` selector split over several
/// arguments joined back into one, space-separated, as Redis joins them.
///
/// # Errors
///
/// A selector opened and never closed: the argument that opened it.
pub(crate) fn merge_selector_args(args: &[Bytes]) -> Result<Vec<Bytes>, &Bytes> {
    let mut out = Vec::with_capacity(args.len());
    let mut open: Option<(&Bytes, Vec<u8>)> = None;
    for arg in args {
        match open.take() {
            Some((start, mut joined)) => {
                joined.push(b' ');
                joined.extend_from_slice(arg);
                if arg.ends_with(b")") {
                    out.push(Bytes::from(joined));
                } else {
                    open = Some((start, joined));
                }
            }
            None if arg.starts_with(b"(") && !arg.ends_with(b")") => {
                open = Some((arg, arg.to_vec()));
            }
            None => out.push(arg.clone()),
        }
    }
    match open {
        Some((start, _)) => Err(start),
        None => Ok(out),
    }
}

/// A user as connections hold it: its name and its rules, which
/// `ACL SETUSER` changes in place so connections see the change at once.
#[derive(Debug)]
pub(crate) struct User {
    /// The user name.
    pub(crate) name: String,
    rules: RwLock<Rules>,
    /// The rules allow everything: the one load the command path pays.
    unrestricted: AtomicBool,
}

impl User {
    /// A user called `name` with `rules`.
    pub(crate) fn new(name: String, rules: Rules) -> User {
        let unrestricted = AtomicBool::new(rules.unrestricted());
        User {
            name,
            rules: RwLock::new(rules),
            unrestricted,
        }
    }

    /// Whether every command, key and channel is allowed: checked before
    /// anything else, so the default user costs one relaxed load.
    pub(crate) fn unrestricted(&self) -> bool {
        self.unrestricted.load(Ordering::Relaxed)
    }

    /// Reads the rules.
    pub(crate) fn rules(&self) -> std::sync::RwLockReadGuard<'_, Rules> {
        self.rules.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the rules.
    pub(crate) fn set_rules(&self, rules: Rules) {
        let unrestricted = rules.unrestricted();
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = rules;
        self.unrestricted.store(unrestricted, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(ops: &str) -> Result<Rules, RuleError> {
        let ops: Vec<Bytes> = ops
            .split(' ')
            .map(|o| Bytes::copy_from_slice(o.as_bytes()))
            .collect();
        let ops = merge_selector_args(&ops).expect("balanced");
        Rules::new(false).with(&ops, false).map_err(|(_, e)| e)
    }

    #[test]
    fn passwords_plain_and_hashed() {
        let r = rules("on >p1 >p2").expect("valid");
        assert!(r.password_ok(b"p1") && r.password_ok(b"p2") && !r.password_ok(b"p3"));
        let r = rules("on >p1 <p1").expect("valid");
        assert!(!r.password_ok(b"p1"));
        let hash = to_hex(&hash_password(b"p4"));
        let r = rules(&format!("#{hash}")).expect("valid");
        assert!(r.password_ok(b"p4"));
        assert_eq!(rules(&format!("!{hash}")), Err(RuleError::NoSuchPassword));
        assert_eq!(rules("#abc"), Err(RuleError::BadHash));
        assert_eq!(
            rules(&format!("#{}", hash.to_uppercase())),
            Err(RuleError::BadHash)
        );
        assert!(rules("nopass").expect("valid").password_ok(b"anything"));
        assert!(!rules("nopass resetpass").expect("valid").password_ok(b""));
    }

    #[test]
    fn lists_as_redis_does() {
        let r = rules("on nopass resetchannels &foo +@all").expect("valid");
        assert_eq!(r.describe(), "on nopass resetchannels &foo +@all");
        let r = rules("reset (~a +get) %R~x").expect("valid");
        assert_eq!(
            r.describe(),
            "off sanitize-payload %R~x resetchannels -@all (~a resetchannels -@all +get)"
        );
        assert_eq!(Rules::default_user().describe(), "on nopass ~* &* +@all");
    }

    #[test]
    fn selector_arguments_are_merged() {
        let args: Vec<Bytes> = ["on", "(~a", "+get", ")", "(~b)"].map(Bytes::from).to_vec();
        let merged = merge_selector_args(&args).expect("balanced");
        assert_eq!(merged, ["on", "(~a +get )", "(~b)"].map(Bytes::from));
        let open: Vec<Bytes> = ["(~a"].map(Bytes::from).to_vec();
        assert_eq!(merge_selector_args(&open), Err(&open[0]));
        assert_eq!(rules("(this-is-invalid)"), Err(RuleError::Syntax));
    }
}
