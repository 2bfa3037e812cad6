//! Startup: redis-server's command line (an optional configuration file,
//! then `--name value` overrides) and redis.conf files, each directive
//! applied through its row, with errors that name the file's line or the
//! command line's directive as redis-server reports them.

use std::path::{Path, PathBuf};

use super::kind::Kind;
use ferrum_proto::split_args;

use super::syntax::{lossy, push_repr, trim};
use super::table::lookup;
use super::{Config, ConfigError, Param, Refusal, NOT_UTF8};

impl Config {
    /// Parses redis-server's command line (without the program name): an
    /// optional configuration file path (a first argument not starting with
    /// `-`), then `--name value...` overrides applied after the file. Every
    /// word up to the next `--name` belongs to the current option, and the
    /// word right after a bare `--name` is always its value, even if it starts
    /// with `--`. `--save` with no value means `--save ""`. A single word
    /// holding both name and values (`"--port 6380"`) is split.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Help`] / [`ConfigError::Version`] for `-h`/`--help` and
    /// `-v`/`--version` as the first argument (exit 0 after printing); any
    /// other variant means startup must stop, and its message names the
    /// option, the value and, for the file, `path:line`.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Config, ConfigError> {
        let args: Vec<String> = args.into_iter().collect();
        let mut config = Config::default();
        let mut overrides = args.as_slice();
        let mut file_lines = 0;
        if let Some(first) = args.first() {
            match first.as_str() {
                "-h" | "--help" => return Err(ConfigError::Help),
                "-v" | "--version" => return Err(ConfigError::Version),
                "-" => return Err(ConfigError::Stdin),
                _ => {}
            }
            if !first.starts_with('-') {
                let path = PathBuf::from(first);
                let text = std::fs::read(&path).map_err(|error| ConfigError::Read {
                    path: path.clone(),
                    error,
                })?;
                config.apply_file(&path, &text)?;
                file_lines = text.iter().filter(|&&b| b == b'\n').count();
                config.config_file = Some(std::path::absolute(&path).unwrap_or(path));
                overrides = &args[1..];
            }
        }
        for (index, directive) in split_overrides(overrides)?.into_iter().enumerate() {
            let text = shown_directive(&directive);
            config
                .apply_directive(directive)
                .map_err(|error| ConfigError::OnCommandLine {
                    line: file_lines + 2 + index,
                    text,
                    error: Box::new(error),
                })?;
        }
        Ok(config)
    }

    /// Applies a redis.conf file's contents: one directive per line, `#`
    /// comment lines, blank lines, `sdssplitargs` quoting; later lines win.
    pub(super) fn apply_file(&mut self, path: &Path, text: &[u8]) -> Result<(), ConfigError> {
        for (index, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = trim(line);
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let at = |error| ConfigError::InFile {
                path: path.to_owned(),
                line: index + 1,
                text: lossy(line),
                error: Box::new(error),
            };
            let words = split_args(line).map_err(|_| at(ConfigError::UnbalancedQuotes))?;
            if !words.is_empty() {
                self.apply_directive(words).map_err(at)?;
            }
        }
        Ok(())
    }

    /// Applies one directive, name first, from the file or the command line.
    pub(super) fn apply_directive(&mut self, words: Vec<Vec<u8>>) -> Result<(), ConfigError> {
        let mut words = words.into_iter();
        let name = lossy(&words.next().unwrap_or_default()).to_ascii_lowercase();
        if name == "include" {
            return Err(ConfigError::Include);
        }
        if name == "rename-command" {
            let [from, to] = <[Vec<u8>; 2]>::try_from(words.collect::<Vec<_>>())
                .map_err(|_| ConfigError::UnknownOption { name })?;
            return self
                .renamed_commands
                .rename(&from, &to)
                .map_err(ConfigError::RenameCommand);
        }
        if name == "user" {
            // ACL rules are checked when the server builds its users.
            let words = words.map(|w| lossy(&w)).collect();
            self.users.push(words);
            return Ok(());
        }
        let spec = lookup(name.as_bytes()).ok_or(ConfigError::UnknownOption { name })?;
        let words: Vec<Vec<u8>> = words.collect();
        let shown = words.iter().map(|w| lossy(w)).collect::<Vec<_>>().join(" ");
        let invalid = |reason: &str| ConfigError::InvalidValue {
            name: spec.name,
            value: shown.clone(),
            reason: reason.to_owned(),
        };
        let mut args = words
            .into_iter()
            .map(String::from_utf8)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid(NOT_UTF8))?;
        // Like Redis, a multi-word option given as one quoted word is split
        // again, so `--save "900 1"` means `save 900 1`; an empty word stays.
        if matches!(spec.kind, Kind::Words { .. }) && args.len() == 1 && !args[0].is_empty() {
            let split = split_args(args[0].as_bytes()).map_err(|_| invalid("unbalanced quotes"))?;
            args = split
                .into_iter()
                .map(String::from_utf8)
                .collect::<Result<_, _>>()
                .map_err(|_| invalid(NOT_UTF8))?;
        }
        if spec.param == Param::Save {
            args = self.loaded_save(args);
        }
        spec.kind
            .apply(self, args)
            .map_err(|refusal| match refusal {
                Refusal::ArgCount => ConfigError::ArgCount { name: spec.name },
                Refusal::Invalid(reason) => invalid(&reason),
            })
    }

    /// What a `save` directive read at startup sets, by Redis's rule: the
    /// first replaces the default, later ones add their pairs, and an
    /// empty one (`save ""`) clears the list.
    fn loaded_save(&mut self, words: Vec<String>) -> Vec<String> {
        let clears = words.iter().all(String::is_empty);
        let first = !std::mem::replace(&mut self.loading.save_read, true);
        if clears || first {
            return words;
        }
        self.save
            .split_whitespace()
            .map(str::to_owned)
            .chain(words)
            .collect()
    }
}

/// A command-line directive as redis-server shows it in a startup error:
/// the name, then each value quoted by `sdscatrepr`.
fn shown_directive(words: &[Vec<u8>]) -> String {
    let mut text = words.first().map(|w| lossy(w)).unwrap_or_default();
    for word in words.iter().skip(1) {
        text.push(' ');
        push_repr(&mut text, word);
    }
    text
}

/// Groups the command-line overrides into directives, by redis-server's rules
/// (see [`Config::from_args`]).
fn split_overrides(args: &[String]) -> Result<Vec<Vec<Vec<u8>>>, ConfigError> {
    let mut directives: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut needs_value = false;
    for (i, arg) in args.iter().enumerate() {
        let unexpected = || ConfigError::UnexpectedArgument { arg: arg.clone() };
        match arg.strip_prefix("--") {
            Some(option) if !needs_value => {
                let mut words = split_args(option.as_bytes())
                    .ok()
                    .filter(|w| !w.is_empty())
                    .ok_or_else(unexpected)?;
                needs_value = words.len() == 1;
                // redis-server reads a bare `--save` before another option or
                // at the end as `--save ""`, for scripts that build the line
                // from a possibly empty list.
                let next_is_option = args.get(i + 1).is_none_or(|next| next.starts_with("--"));
                if needs_value && arg.eq_ignore_ascii_case("--save") && next_is_option {
                    words.push(Vec::new());
                    needs_value = false;
                }
                directives.push(words);
            }
            _ => {
                match directives.last_mut() {
                    Some(directive) => directive.push(arg.clone().into_bytes()),
                    // Words before the first option are a line of their
                    // own, as redis-server appends them (`loglevel verbose`).
                    None if !arg.starts_with('-') => {
                        directives.push(vec![arg.clone().into_bytes()])
                    }
                    None => return Err(unexpected()),
                }
                needs_value = false;
            }
        }
    }
    Ok(directives)
}
