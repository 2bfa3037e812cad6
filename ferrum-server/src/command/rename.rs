//! `rename-command`: the names clients call commands by once the
//! configuration renamed or hid some, as Redis's `server.commands` is left
//! by its `rename-command` lines. Clients, `MULTI` queues and scripts'
//! `redis.call` look commands up here; ACL rules, `INFO commandstats` and
//! `CLIENT LIST`'s `cmd` keep the original names, as Redis's
//! `orig_commands` and `cmd->fullname` do.
//!
//! # rename-command (design notes)
//!
//! **rename-command** (`command/rename.rs`). The configuration builds a
//! `CommandNames`, the few names `rename-command` changed, and `Shared`
//! keeps it (startup only, as in Redis). Every lookup of a name a client
//! sent (`prepare`, `EXEC`'s queue, `redis.call`) goes through
//! `Shared::command`, which scans that short list before the static table;
//! ACL rules, stats and `CLIENT LIST` keep the command's own name, as
//! Redis's `orig_commands` and `cmd->fullname` do.

use super::{lookup, CommandSpec, COMMANDS};

/// `rename-command` of a name no command answers to.
pub(crate) const NO_SUCH_COMMAND: &str = "No such command in rename-command";
/// `rename-command` to a name a command already answers to.
pub(crate) const TARGET_EXISTS: &str = "Target command name already exists";

/// The command names `rename-command` changed, in the order applied. Empty
/// (every command under its own name) unless the configuration renames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommandNames {
    /// A name as written (compared case-insensitively) and the row of
    /// `COMMANDS` it now calls, or `None` for a name renamed away or
    /// disabled. Configurations rename a handful of commands, so a scan
    /// beats hashing, and it needs no lower-cased copy of the name.
    changed: Vec<(Box<[u8]>, Option<usize>)>,
}

impl CommandNames {
    /// The command `name` calls, case-insensitively: a renamed one under
    /// its new name, none under a name renamed away.
    pub(crate) fn resolve(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        match self.find(name) {
            Some(i) => self.changed[i].1.map(|row| &COMMANDS[row]),
            None => lookup(name),
        }
    }

    /// `rename-command from to`: the command `from` calls answers to `to`
    /// instead, or to nothing when `to` is empty.
    ///
    /// # Errors
    ///
    /// Redis's reasons: [`NO_SUCH_COMMAND`] when `from` calls nothing (a
    /// subcommand, `config|get`, is not a name clients call), and
    /// [`TARGET_EXISTS`] when `to` already calls a command. Either way the
    /// server must not start, so what `from` called is left hidden.
    pub(crate) fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), &'static str> {
        let row = self.resolve(from).ok_or(NO_SUCH_COMMAND)?.index();
        self.set(from, None);
        if to.is_empty() {
            return Ok(());
        }
        if self.resolve(to).is_some() {
            return Err(TARGET_EXISTS);
        }
        self.set(to, Some(row));
        Ok(())
    }

    fn find(&self, name: &[u8]) -> Option<usize> {
        self.changed
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn set(&mut self, name: &[u8], row: Option<usize>) {
        match self.find(name) {
            Some(i) => self.changed[i].1 = row,
            None => self.changed.push((name.into(), row)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(names: &CommandNames, name: &str) -> Option<&'static str> {
        names.resolve(name.as_bytes()).map(|s| s.name)
    }

    #[test]
    fn a_renamed_command_answers_only_to_its_new_name() {
        let mut names = CommandNames::default();
        names.rename(b"FlushDB", b"badger").expect("renamed");
        assert_eq!(name_of(&names, "BADGER"), Some("flushdb"));
        assert_eq!(name_of(&names, "flushdb"), None);
        assert_eq!(name_of(&names, "get"), Some("get"));
        // Renamed again under its new name, and back.
        names.rename(b"badger", b"flushdb").expect("renamed back");
        assert_eq!(name_of(&names, "flushdb"), Some("flushdb"));
        assert_eq!(name_of(&names, "badger"), None);
    }

    #[test]
    fn an_empty_target_disables_the_command() {
        let mut names = CommandNames::default();
        names.rename(b"config", b"").expect("disabled");
        assert_eq!(name_of(&names, "config"), None);
        assert_eq!(names.rename(b"config", b"cfg"), Err(NO_SUCH_COMMAND));
    }

    #[test]
    fn unknown_sources_and_taken_targets_are_refused() {
        let mut names = CommandNames::default();
        assert_eq!(names.rename(b"nosuch", b"x"), Err(NO_SUCH_COMMAND));
        assert_eq!(names.rename(b"config|get", b"x"), Err(NO_SUCH_COMMAND));
        assert_eq!(names.rename(b"get", b"SET"), Err(TARGET_EXISTS));
    }
}
