//! Why a configuration is refused: [`ConfigError`], for startup (the
//! file and the command line) and for `CONFIG SET`, and the report
//! redis-server prints before it exits on one.

use std::path::PathBuf;

use crate::error::{
    config_set_failed, config_set_unknown, CONFIG_DUPLICATE, CONFIG_IMMUTABLE, CONFIG_PROTECTED,
};

/// Why the configuration was refused.
///
/// Startup errors name the option and the bad value. The `Set*` variants are
/// what [`Config::set`](super::Config::set) returns: their `Display` is the complete Redis error
/// line, `ERR` code included, ready to send as `-{error}\r\n`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `-h` / `--help`: not a failure; print [`USAGE`](super::USAGE) and exit 0.
    #[error("help requested")]
    Help,
    /// `-v` / `--version`: not a failure; print the version and exit 0.
    #[error("version requested")]
    Version,
    /// The configuration file could not be read.
    #[error("can't open config file '{}': {error}", path.display())]
    Read {
        /// The path as given on the command line.
        path: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// `-` (read the configuration from standard input) is not supported.
    #[error("reading the configuration from standard input ('-') is not supported")]
    Stdin,
    /// A command-line word that is neither an option nor an option's value.
    #[error("unexpected argument '{arg}': options are written --name value, as in --port 6380")]
    UnexpectedArgument {
        /// The offending word.
        arg: String,
    },
    /// An error on a line of the configuration file.
    #[error("{}:{line}: {error}", path.display())]
    InFile {
        /// The configuration file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line, trimmed, as Redis shows it.
        text: String,
        /// What is wrong with that line.
        error: Box<ConfigError>,
    },
    /// An error in a directive of the command line (`--name value...`).
    #[error("command line, '{text}': {error}")]
    OnCommandLine {
        /// Its line number in Redis's reckoning: redis-server appends the
        /// command line to the file's text, a line per option, after an
        /// empty line.
        line: usize,
        /// The directive as Redis shows it: the name, then each value in
        /// `sdscatrepr` quotes (`port "6379" "6380"`).
        text: String,
        /// What is wrong with it.
        error: Box<ConfigError>,
    },
    /// `rename-command` of an unknown command or to a name already taken.
    #[error("{0}")]
    RenameCommand(&'static str),
    /// A quote is not closed, or a closing quote is followed by more text.
    #[error("unbalanced quotes in configuration line")]
    UnbalancedQuotes,
    /// `include` is a Redis directive FerrumKV does not implement.
    #[error("'include' is not supported: put every directive in one file")]
    Include,
    /// No such parameter.
    #[error("unknown option '{name}'")]
    UnknownOption {
        /// The name as written, lowercased.
        name: String,
    },
    /// A single-value parameter was given no value or several.
    #[error("wrong number of arguments for '{name}'")]
    ArgCount {
        /// The parameter.
        name: &'static str,
    },
    /// A value the parameter does not accept.
    #[error("invalid argument '{value}' for '{name}': {reason}")]
    InvalidValue {
        /// The parameter.
        name: &'static str,
        /// The value as given (several words joined by spaces).
        value: String,
        /// Redis's wording of what is wrong.
        reason: String,
    },
    /// `CONFIG SET` of an unknown parameter.
    #[error("{}", config_set_unknown(name))]
    SetUnknown {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` of a parameter that only takes effect at startup.
    #[error("{}", config_set_failed(name, CONFIG_IMMUTABLE))]
    SetImmutable {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` of a parameter `enable-protected-configs` guards, by a
    /// client it does not allow.
    #[error("{}", config_set_failed(name, CONFIG_PROTECTED))]
    SetProtected {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` named the same parameter twice.
    #[error("{}", config_set_failed(name, CONFIG_DUPLICATE))]
    SetDuplicate {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` with a value the parameter does not accept.
    #[error("{}", config_set_failed(name, reason))]
    SetInvalid {
        /// The parameter's canonical name.
        name: &'static str,
        /// Redis's wording of what is wrong.
        reason: String,
    },
}

impl ConfigError {
    /// What redis-server prints to standard error before it exits 1 on
    /// this error. A directive's error is Redis's block: the banner, the
    /// line number, the line and Redis's reason, which is what scripts
    /// (Redis's own test suite among them) match.
    pub fn fatal_report(&self) -> String {
        match self {
            ConfigError::InFile {
                line, text, error, ..
            }
            | ConfigError::OnCommandLine { line, text, error } => format!(
                "{}Reading the configuration file, at line {line}\n>>> '{text}'\n{}",
                fatal_banner(),
                error.reason()
            ),
            ConfigError::Read { .. } => format!("Fatal error, {self}"),
            other => format!("{}{}", fatal_banner(), other.reason()),
        }
    }

    /// The reason as Redis words it for a directive it refuses.
    fn reason(&self) -> String {
        match self {
            ConfigError::UnknownOption { .. } => BAD_DIRECTIVE.to_owned(),
            ConfigError::ArgCount { .. } => WRONG_ARG_COUNT.to_owned(),
            ConfigError::InvalidValue { reason, .. } => reason.clone(),
            ConfigError::UnbalancedQuotes => UNBALANCED_QUOTES.to_owned(),
            other => other.to_string(),
        }
    }
}

/// Redis's reason for a directive it does not know, or a special one
/// (`rename-command`) with the wrong number of words.
const BAD_DIRECTIVE: &str = "Bad directive or wrong number of arguments";

/// Redis's reason for a parameter given too few or too many values.
const WRONG_ARG_COUNT: &str = "wrong number of arguments";

/// Redis's reason for a line `sdssplitargs` cannot split.
const UNBALANCED_QUOTES: &str = "Unbalanced quotes in configuration line";

/// The first lines of redis-server's report of a configuration it refuses.
fn fatal_banner() -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\n",
        crate::REDIS_VERSION
    )
}
