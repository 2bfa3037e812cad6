//! Function libraries (`FUNCTION LOAD`): the registry of libraries and of
//! the functions they registered, and the `#!lua name=...` metadata line.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use mlua::{Function, Table};

use super::ScriptFlags;
use crate::error::CmdError;
use crate::error::{
    engine_not_found, function_exists, invalid_metadata, library_exists, BAD_LIBRARY_NAME,
    DUPLICATE_NAME, FUNCTION_TWICE, MISSING_LIBRARY_METADATA, NO_FUNCTIONS, NO_LIBRARY_NAME,
};

/// The flags of a registered function (always declared).
pub(crate) type FunctionFlags = ScriptFlags;

/// One `redis.register_function` call, checked by the prelude.
#[derive(Clone)]
pub(crate) struct Registration {
    /// The function's name as registered.
    pub(crate) name: String,
    /// Its position in its library's registration list, whose `callback`
    /// is what `FCALL` runs (kept in Lua: see [`Library::registered`]).
    index: usize,
    /// Its flags.
    pub(crate) flags: FunctionFlags,
    /// Its description, if it gave one.
    pub(crate) description: Option<String>,
}

impl Registration {
    /// The registrations in the list `priv.load` returned, refusing a name
    /// registered twice and a library that registered nothing.
    pub(crate) fn all(list: &Table) -> mlua::Result<Vec<Registration>> {
        let mut out: Vec<Registration> = Vec::new();
        for (i, reg) in list.sequence_values::<Table>().enumerate() {
            let reg = reg?;
            let mut flags = FunctionFlags {
                declared: true,
                ..FunctionFlags::default()
            };
            for f in reg.get::<Table>("flags")?.sequence_values::<String>() {
                flags.set(&f?);
            }
            let name: String = reg.get("function_name")?;
            if out.iter().any(|r| r.name.eq_ignore_ascii_case(&name)) {
                return Err(mlua::Error::runtime(
                    FUNCTION_TWICE.trim_start_matches("ERR "),
                ));
            }
            out.push(Registration {
                name,
                index: i + 1,
                flags,
                description: reg.get("description")?,
            });
        }
        if out.is_empty() {
            return Err(mlua::Error::runtime(
                NO_FUNCTIONS.trim_start_matches("ERR "),
            ));
        }
        Ok(out)
    }
}

/// A loaded library.
#[derive(Clone)]
pub(crate) struct Library {
    /// Its code, as loaded (for `FUNCTION DUMP` and `LIST WITHCODE`).
    pub(crate) code: Bytes,
    /// What it registered, in order.
    pub(crate) functions: Vec<Registration>,
    /// The registration list its code built, callbacks included. The
    /// callbacks stay in this one Lua table: each held from Rust would
    /// take a slot of mlua's bounded reference stack.
    pub(crate) registered: Table,
}

impl Library {
    /// What `FCALL` of `reg` (one of this library's) runs.
    pub(crate) fn callback(&self, reg: &Registration) -> mlua::Result<Function> {
        self.registered
            .raw_get::<Table>(reg.index)?
            .raw_get("callback")
    }
}

/// A library and its functions, as `FUNCTION LIST` shows them.
pub(crate) struct LibraryInfo<'a> {
    /// The library's name.
    pub(crate) name: &'a str,
    /// The library.
    pub(crate) library: &'a Library,
}

/// Every library, and every function by lower-case name.
#[derive(Clone, Default)]
pub(crate) struct Libraries {
    libraries: BTreeMap<String, Library>,
    /// Lower-case function name to its library's name.
    functions: HashMap<String, String>,
}

impl Libraries {
    /// The function called `name` (any case), and its library.
    pub(crate) fn function(&self, name: &[u8]) -> Option<(&Registration, &Library)> {
        let key = String::from_utf8_lossy(name).to_ascii_lowercase();
        let library = self.libraries.get(self.functions.get(&key)?)?;
        let reg = library
            .functions
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(&key))?;
        Some((reg, library))
    }

    /// Adds a library; with `replace`, one of the same name goes first.
    /// Refuses a name that exists (without `replace`) and a function name
    /// another library has.
    pub(crate) fn add(
        &mut self,
        name: String,
        library: Library,
        replace: bool,
        quoted_error: bool,
    ) -> Result<(), CmdError> {
        if self.libraries.contains_key(&name) && !replace {
            return Err(CmdError::msg(library_exists(&name, quoted_error)));
        }
        for f in &library.functions {
            let key = f.name.to_ascii_lowercase();
            if self.functions.get(&key).is_some_and(|owner| *owner != name) {
                return Err(CmdError::msg(function_exists(&f.name)));
            }
        }
        self.delete(&name);
        for f in &library.functions {
            self.functions
                .insert(f.name.to_ascii_lowercase(), name.clone());
        }
        self.libraries.insert(name, library);
        Ok(())
    }

    /// Removes a library and its functions; whether it existed.
    pub(crate) fn delete(&mut self, name: &str) -> bool {
        let Some(lib) = self.libraries.remove(name) else {
            return false;
        };
        for f in &lib.functions {
            self.functions.remove(&f.name.to_ascii_lowercase());
        }
        true
    }

    /// `FUNCTION FLUSH`.
    pub(crate) fn clear(&mut self) {
        self.libraries.clear();
        self.functions.clear();
    }

    /// The libraries, by name.
    pub(crate) fn iter(&self) -> impl Iterator<Item = LibraryInfo<'_>> {
        self.libraries
            .iter()
            .map(|(name, library)| LibraryInfo { name, library })
    }

    /// Bytes of the libraries' code.
    pub(crate) fn code_bytes(&self) -> usize {
        self.libraries.values().map(|l| l.code.len()).sum()
    }

    /// How many libraries and functions are loaded.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.libraries.len(), self.functions.len())
    }
}

/// The library name from a library's first line, `#!lua name=<name>`.
///
/// # Errors
/// Redis's texts for a missing shebang, another engine, unknown metadata,
/// a missing, repeated or badly formed name.
pub(crate) fn library_name(code: &[u8]) -> Result<String, CmdError> {
    if !code.starts_with(b"#!") {
        return Err(CmdError::msg(MISSING_LIBRARY_METADATA));
    }
    let end = code.iter().position(|&b| b == b'\n').unwrap_or(code.len());
    let line = String::from_utf8_lossy(&code[2..end]).into_owned();
    let mut parts = line.split(' ').filter(|p| !p.is_empty());
    let engine = if line.starts_with(' ') {
        ""
    } else {
        parts.next().unwrap_or("")
    };
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(CmdError::msg(engine_not_found(engine)));
    }
    let mut name = None;
    for part in parts {
        let Some(value) = part.strip_prefix("name=") else {
            return Err(CmdError::msg(invalid_metadata(part)));
        };
        if name.is_some() {
            return Err(CmdError::msg(DUPLICATE_NAME));
        }
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        name = Some(value.to_owned());
    }
    let name = name.ok_or_else(|| CmdError::msg(NO_LIBRARY_NAME))?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(CmdError::msg(BAD_LIBRARY_NAME));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_follow_redis_rules() {
        assert_eq!(
            library_name(b"#!lua name=lib1\ncode").ok().as_deref(),
            Some("lib1")
        );
        assert_eq!(
            library_name(b"#!LUA name=\"q\"\n").ok().as_deref(),
            Some("q")
        );
        let err = |code: &[u8]| library_name(code).err().map(|e| e.to_string());
        assert_eq!(err(b"#!lua\n").as_deref(), Some(NO_LIBRARY_NAME));
        assert_eq!(
            err(b"#! name=x\n").as_deref(),
            Some("ERR Engine '' not found")
        );
        assert_eq!(
            err(b"#!lua name=a name=b\n").as_deref(),
            Some(DUPLICATE_NAME)
        );
        assert_eq!(
            err(b"#!lua name=t foo=bar\n").as_deref(),
            Some("ERR Invalid metadata value given: foo=bar")
        );
        assert_eq!(err(b"#!lua name=a-b\n").as_deref(), Some(BAD_LIBRARY_NAME));
    }
}
