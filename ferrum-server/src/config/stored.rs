//! The row builders for parameters kept only in [`Config::stored`]
//! (`stored_bool!`, `stored_int!`, `stored_memory!`, `stored_enum!`...):
//! each makes a [`Spec`](super::kind::Spec) whose getter and setter read
//! and write the value as `CONFIG GET` prints it, keyed by the canonical
//! name (`name => canonical` for a stored alias). [`super::table`] uses
//! them for the parameters that change nothing in FerrumKV, or that the
//! server reads by name.
//!
//! [`Config::stored`]: super::Config::stored

/// A row for a parameter kept only in [`Config::stored`]: `name` or
/// `alias => canonical`, then the value syntax's bounds, the default and
/// whether `CONFIG SET` may change it.
macro_rules! stored_row {
    ($name:literal, $key:literal, $default:literal, $mutable:expr, $kind:expr) => {
        Spec {
            name: $name,
            param: Param::Stored,
            mutable: $mutable,
            default: $default,
            kind: $kind,
        }
    };
}

macro_rules! stored_bool {
    ($name:literal => $key:literal, $default:literal, $mutable:expr) => {
        stored_row!($name, $key, $default, $mutable, Kind::Bool {
            get: |c| c.stored_value($key) == "yes",
            set: |c, v| { c.stored.insert($key, if v { "yes" } else { "no" }.to_owned()); Ok(()) } })
    };
    ($name:literal, $default:literal, $mutable:expr) => { stored_bool!($name => $name, $default, $mutable) };
}

/// A numeric row kept in `Config::stored`; `$variant` is the [`Kind`]:
/// `Int`, `SignedInt` or `Memory`.
macro_rules! stored_number {
    ($variant:ident, $name:literal => $key:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $key,
            $default,
            $mutable,
            Kind::$variant {
                min: $min,
                max: $max,
                get: |c| c.stored_value($key).parse().unwrap_or(0),
                set: |c, v| {
                    c.stored.insert($key, v.to_string());
                }
            }
        )
    };
}
macro_rules! stored_int {
    ($name:literal => $key:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_number!(Int, $name => $key, $min, $max, $default, $mutable)
    };
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_number!(Int, $name => $name, $min, $max, $default, $mutable)
    };
}
macro_rules! stored_signed {
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_number!(SignedInt, $name => $name, $min, $max, $default, $mutable)
    };
}
macro_rules! stored_memory {
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_number!(Memory, $name => $name, $min, $max, $default, $mutable)
    };
}
macro_rules! stored_text {
    ($name:literal => $key:literal, $default:literal, $mutable:expr) => {
        stored_row!($name, $key, $default, $mutable, Kind::Text {
            get: |c| c.stored_value($key).to_owned(),
            set: |c, v| { c.stored.insert($key, v); Ok(()) } })
    };
    ($name:literal, $default:literal, $mutable:expr) => { stored_text!($name => $name, $default, $mutable) };
}

macro_rules! stored_words {
    ($name:literal, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Words {
                get: |c| c.stored_value($name).to_owned(),
                set: |c, v| {
                    c.stored.insert($name, v.join(" "));
                    Ok(())
                }
            }
        )
    };
}

macro_rules! stored_enum {
    ($name:literal, $names:expr, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Enum {
                names: $names,
                get: |c| {
                    let v = c.stored_value($name);
                    $names.iter().find(|n| **n == v).copied().unwrap_or("")
                },
                set: |c, v| {
                    c.stored.insert($name, v.to_owned());
                }
            }
        )
    };
}
