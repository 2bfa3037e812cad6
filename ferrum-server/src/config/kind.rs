//! A parameter's row ([`Spec`]) and its value syntax ([`Kind`]): how each
//! kind of value is checked, stored through the row's setter and rendered
//! for `CONFIG GET`, with Redis 7's reasons for what it refuses.

use ferrum_proto::parse_i64;

use super::syntax::parse_memory;
use super::{Config, Param};

/// One parameter: everything FerrumKV knows about it.
pub(super) struct Spec {
    /// The canonical name.
    pub(super) name: &'static str,
    /// What `CONFIG SET` reports it changed.
    pub(super) param: Param,
    /// Whether `CONFIG SET` may change it.
    pub(super) mutable: bool,
    /// The default, as it would be written in redis.conf.
    pub(super) default: &'static str,
    /// The value syntax, with the typed field's getter and setter.
    pub(super) kind: Kind,
}

/// A parameter's value syntax, with accessors for its typed field.
pub(super) enum Kind {
    /// `yes` or `no`. The setter may refuse one of them.
    Bool {
        get: fn(&Config) -> bool,
        set: fn(&mut Config, bool) -> Result<(), String>,
    },
    /// A decimal integer in `min..=max` that may be negative.
    SignedInt {
        min: i64,
        max: i64,
        get: fn(&Config) -> i64,
        set: fn(&mut Config, i64),
    },
    /// A decimal integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// A byte count with an optional unit, in `min..=max`.
    Memory {
        min: u64,
        max: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// One of `names`, case-insensitive; the canonical name is stored.
    Enum {
        names: &'static [&'static str],
        get: fn(&Config) -> &'static str,
        set: fn(&mut Config, &'static str),
    },
    /// One free-form argument, checked by the setter.
    Text {
        get: fn(&Config) -> String,
        set: fn(&mut Config, String) -> Result<(), String>,
    },
    /// Any number of words (Redis's `MULTI_ARG_CONFIG`).
    Words {
        get: fn(&Config) -> String,
        set: fn(&mut Config, Vec<String>) -> Result<(), String>,
    },
}

pub(super) const NOT_UTF8: &str = "argument must be valid UTF-8";

/// Why a row refused its arguments, before the caller says where they came from.
pub(super) enum Refusal {
    ArgCount,
    Invalid(String),
}

impl Kind {
    /// Validates `args` completely, then stores them; on error `config` is
    /// untouched.
    pub(super) fn apply(&self, config: &mut Config, args: Vec<String>) -> Result<(), Refusal> {
        let single = |args: Vec<String>| match <[String; 1]>::try_from(args) {
            Ok([value]) => Ok(value),
            Err(_) => Err(Refusal::ArgCount),
        };
        match *self {
            Kind::Words { set, .. } => set(config, args).map_err(Refusal::Invalid),
            Kind::Bool { set, .. } => {
                set(config, parse_bool(&single(args)?)?).map_err(Refusal::Invalid)
            }
            Kind::Int { min, max, set, .. } => {
                let n = parse_i64(single(args)?.as_bytes())
                    .ok_or_else(|| invalid("argument couldn't be parsed into an integer"))?;
                // Every bound is non-negative, so a negative number is simply out of range.
                let n = u64::try_from(n).map_err(|_| out_of_range(min, max))?;
                set(config, check_range(n, min, max)?);
                Ok(())
            }
            Kind::SignedInt { min, max, set, .. } => {
                let n = parse_i64(single(args)?.as_bytes())
                    .ok_or_else(|| invalid("argument couldn't be parsed into an integer"))?;
                if !(min..=max).contains(&n) {
                    return Err(Refusal::Invalid(format!(
                        "argument must be between {min} and {max} inclusive"
                    )));
                }
                set(config, n);
                Ok(())
            }
            Kind::Memory { min, max, set, .. } => {
                let n = parse_memory(&single(args)?)
                    .ok_or_else(|| invalid("argument must be a memory value"))?;
                set(config, check_range(n, min, max)?);
                Ok(())
            }
            Kind::Enum { names, set, .. } => {
                let value = single(args)?;
                let name = names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(&value))
                    .ok_or_else(|| {
                        Refusal::Invalid(format!(
                            "argument(s) must be one of the following: {}",
                            names.join(", ")
                        ))
                    })?;
                set(config, name);
                Ok(())
            }
            Kind::Text { set, .. } => set(config, single(args)?).map_err(Refusal::Invalid),
        }
    }

    /// The value as `CONFIG GET` prints it.
    pub(super) fn render(&self, config: &Config) -> String {
        match *self {
            Kind::Bool { get, .. } => if get(config) { "yes" } else { "no" }.to_owned(),
            Kind::Int { get, .. } | Kind::Memory { get, .. } => get(config).to_string(),
            Kind::SignedInt { get, .. } => get(config).to_string(),
            Kind::Enum { get, .. } => get(config).to_owned(),
            Kind::Text { get, .. } | Kind::Words { get, .. } => get(config),
        }
    }
}

fn invalid(reason: &str) -> Refusal {
    Refusal::Invalid(reason.to_owned())
}

fn out_of_range(min: u64, max: u64) -> Refusal {
    Refusal::Invalid(format!(
        "argument must be between {min} and {max} inclusive"
    ))
}

fn check_range(n: u64, min: u64, max: u64) -> Result<u64, Refusal> {
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(out_of_range(min, max))
    }
}

/// Narrows a value the row's bounds already keep within `u32`.
pub(super) fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

pub(super) fn refuse_yes(yes: bool, why: &str) -> Result<(), String> {
    if yes {
        Err(format!("{why}; only 'no' is accepted"))
    } else {
        Ok(())
    }
}

/// Redis's `yesnotoi`: `yes` or `no`, any case.
fn parse_bool(s: &str) -> Result<bool, Refusal> {
    if s.eq_ignore_ascii_case("yes") {
        Ok(true)
    } else if s.eq_ignore_ascii_case("no") {
        Ok(false)
    } else {
        Err(invalid("argument must be 'yes' or 'no'"))
    }
}
