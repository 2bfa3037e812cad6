//! `cjson`: Lua CJSON's API (`encode`, `decode`, `null` and the settings
//! scripts use), written for FerrumKV against its documented behaviour:
//! numbers as `%.14g`, `/` escaped, tables with only positive integer
//! keys as arrays (refused when excessively sparse), JSON `null` as the
//! `cjson.null` sentinel, nesting bounded in both directions.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use mlua::{LightUserData, Lua, Table, Value};

use super::convert::format_g;
use crate::error::{
    json_excessive_nesting, json_too_deep, json_unexpected, json_unsupported_type, JSON_BAD_KEY,
    JSON_NAN_OR_INF, JSON_SPARSE_ARRAY,
};

/// The settings a script may change; they last for the VM's life, as in
/// Redis.
struct Settings {
    encode_max_depth: AtomicUsize,
    decode_max_depth: AtomicUsize,
    encode_invalid_numbers: AtomicBool,
}

/// `cjson.null`: a light userdata holding NULL, as Lua CJSON's.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// The `cjson` table.
pub(crate) fn table(lua: &Lua) -> mlua::Result<Table> {
    let settings = Arc::new(Settings {
        encode_max_depth: AtomicUsize::new(1000),
        decode_max_depth: AtomicUsize::new(1000),
        encode_invalid_numbers: AtomicBool::new(false),
    });
    let t = lua.create_table()?;
    let s = Arc::clone(&settings);
    t.set(
        "encode",
        lua.create_function(move |_, v: Value| {
            let mut out = Vec::new();
            encode(&v, &s, 1, &mut out).map_err(mlua::Error::runtime)?;
            Ok(mlua::BString::from(out))
        })?,
    )?;
    let s = Arc::clone(&settings);
    t.set(
        "decode",
        lua.create_function(move |lua, text: mlua::String| {
            let bytes = text.as_bytes();
            let mut p = Parser {
                lua,
                s: &bytes,
                pos: 0,
                max_depth: s.decode_max_depth.load(Ordering::Relaxed),
            };
            let v = p.document().map_err(mlua::Error::runtime)?;
            Ok(v)
        })?,
    )?;
    t.set("null", null())?;
    let depth_setter = |field: fn(&Settings) -> &AtomicUsize| {
        let s = Arc::clone(&settings);
        lua.create_function(move |_, n: Option<usize>| {
            if let Some(n) = n {
                field(&s).store(n.max(1), Ordering::Relaxed);
            }
            Ok(field(&s).load(Ordering::Relaxed))
        })
    };
    t.set("encode_max_depth", depth_setter(|s| &s.encode_max_depth)?)?;
    t.set("decode_max_depth", depth_setter(|s| &s.decode_max_depth)?)?;
    let s = Arc::clone(&settings);
    t.set(
        "encode_invalid_numbers",
        lua.create_function(move |_, on: Option<bool>| {
            if let Some(on) = on {
                s.encode_invalid_numbers.store(on, Ordering::Relaxed);
            }
            Ok(s.encode_invalid_numbers.load(Ordering::Relaxed))
        })?,
    )?;
    // Settings Redis scripts call but FerrumKV's encoder has no use for.
    for name in [
        "encode_keep_buffer",
        "decode_invalid_numbers",
        "encode_sparse_array",
        "encode_number_precision",
    ] {
        t.set(name, lua.create_function(|_, v: Value| Ok(v))?)?;
    }
    Ok(t)
}

fn encode(v: &Value, s: &Settings, depth: usize, out: &mut Vec<u8>) -> Result<(), String> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(u) if u.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => out.extend_from_slice(format_g(*n as f64, 14).as_bytes()),
        Value::Number(x) => {
            if !x.is_finite() && !s.encode_invalid_numbers.load(Ordering::Relaxed) {
                return Err(JSON_NAN_OR_INF.to_owned());
            }
            out.extend_from_slice(format_g(*x, 14).as_bytes());
        }
        Value::String(st) => string(&st.as_bytes(), out),
        Value::Table(t) => {
            if depth > s.encode_max_depth.load(Ordering::Relaxed) {
                return Err(json_excessive_nesting(depth));
            }
            table_json(t, s, depth, out)?;
        }
        other => return Err(json_unsupported_type(other.type_name())),
    }
    Ok(())
}

/// The length of `t` as an array, or `None` if it is an object.
fn array_len(t: &Table) -> Result<Option<usize>, String> {
    let (mut max, mut count) = (0usize, 0usize);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair.map_err(|e| e.to_string())?;
        let index = match k {
            Value::Integer(i) if i > 0 => i as usize,
            Value::Number(x) if x > 0.0 && x.fract() == 0.0 => x as usize,
            _ => return Ok(None),
        };
        max = max.max(index);
        count += 1;
    }
    // Lua CJSON's default: refuse arrays more than half holes past 10.
    if max > 10 && max > count * 2 {
        return Err(JSON_SPARSE_ARRAY.to_owned());
    }
    Ok((count > 0).then_some(max))
}

fn table_json(t: &Table, s: &Settings, depth: usize, out: &mut Vec<u8>) -> Result<(), String> {
    if let Some(len) = array_len(t)? {
        out.push(b'[');
        for i in 1..=len {
            if i > 1 {
                out.push(b',');
            }
            let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
            encode(&v, s, depth + 1, out)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    for (n, pair) in t.pairs::<Value, Value>().enumerate() {
        let (k, v) = pair.map_err(|e| e.to_string())?;
        if n > 0 {
            out.push(b',');
        }
        match &k {
            Value::String(key) => string(&key.as_bytes(), out),
            Value::Integer(i) => string(format_g(*i as f64, 14).as_bytes(), out),
            Value::Number(x) => string(format_g(*x, 14).as_bytes(), out),
            _ => return Err(JSON_BAD_KEY.to_owned()),
        }
        out.push(b':');
        encode(&v, s, depth + 1, out)?;
    }
    out.push(b'}');
    Ok(())
}

fn string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x20 || b == 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

/// A recursive-descent JSON reader building Lua values.
struct Parser<'a> {
    lua: &'a Lua,
    s: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl Parser<'_> {
    fn document(&mut self) -> Result<Value, String> {
        let v = self.value(1)?;
        self.skip_ws();
        if self.pos < self.s.len() {
            return Err(self.unexpected("the end"));
        }
        Ok(v)
    }

    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|b| b" \t\r\n".contains(b)) {
            self.pos += 1;
        }
    }

    fn unexpected(&self, what: &str) -> String {
        json_unexpected(what, self.pos + 1)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_ws();
        let lua_err = |e: mlua::Error| e.to_string();
        match self.s.get(self.pos) {
            Some(b'{') | Some(b'[') if depth > self.max_depth => {
                Err(json_too_deep(depth, self.pos + 1))
            }
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let s = self.string()?;
                Ok(Value::String(self.lua.create_string(s).map_err(lua_err)?))
            }
            Some(b't') => self.word(b"true", Value::Boolean(true)),
            Some(b'f') => self.word(b"false", Value::Boolean(false)),
            Some(b'n') => self.word(b"null", null()),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.unexpected("value")),
        }
    }

    fn word(&mut self, word: &[u8], v: Value) -> Result<Value, String> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.unexpected("value"))
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b"+-0123456789.eE".contains(b))
        {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .map(Value::Number)
            .ok_or_else(|| {
                self.pos = start;
                self.unexpected("value")
            })
    }

    fn string(&mut self) -> Result<Vec<u8>, String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.pos) else {
                return Err(self.unexpected("string end"));
            };
            self.pos += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos) else {
                        return Err(self.unexpected("string end"));
                    };
                    self.pos += 1;
                    match e {
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => self.unicode(&mut out)?,
                        other => out.push(other),
                    }
                }
                b => out.push(b),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.pos..self.pos + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.pos += 4;
        Some(v)
    }

    fn unicode(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let bad = |p: &Self| json_unexpected("escape sequence", p.pos + 1);
        let hi = self.hex4().ok_or_else(|| bad(self))?;
        let code = if (0xd800..0xdc00).contains(&hi) && self.s[self.pos..].starts_with(b"\\u") {
            self.pos += 2;
            let lo = self.hex4().ok_or_else(|| bad(self))?;
            0x10000 + ((hi - 0xd800) << 10) + (lo.wrapping_sub(0xdc00) & 0x3ff)
        } else {
            hi
        };
        let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let t = self.lua.create_table().map_err(|e| e.to_string())?;
        self.skip_ws();
        if self.s.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Table(t));
        }
        for i in 1.. {
            let v = self.value(depth + 1)?;
            t.raw_set(i, v).map_err(|e| e.to_string())?;
            self.skip_ws();
            match self.s.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected("comma or array end")),
            }
        }
        Ok(Value::Table(t))
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let t = self.lua.create_table().map_err(|e| e.to_string())?;
        self.skip_ws();
        if self.s.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Table(t));
        }
        loop {
            self.skip_ws();
            if self.s.get(self.pos) != Some(&b'"') {
                return Err(self.unexpected("object key string"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.s.get(self.pos) != Some(&b':') {
                return Err(self.unexpected("colon"));
            }
            self.pos += 1;
            let v = self.value(depth + 1)?;
            let key = self.lua.create_string(key).map_err(|e| e.to_string())?;
            t.raw_set(key, v).map_err(|e| e.to_string())?;
            self.skip_ws();
            match self.s.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected("comma or object end")),
            }
        }
        Ok(Value::Table(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(code: &str) -> String {
        let lua = Lua::new();
        lua.globals()
            .set("cjson", table(&lua).expect("cjson"))
            .expect("set");
        lua.load(code).eval::<String>().expect(code)
    }

    #[test]
    fn encodes_and_decodes_as_lua_cjson() {
        assert_eq!(
            eval(
                r#"return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")"#
            ),
            "0 -5000 -1 0.0003 1023.2 0"
        );
        assert_eq!(
            eval(r#"return cjson.encode({1, 2, "a/b"})"#),
            r#"[1,2,"a\/b"]"#
        );
        assert_eq!(eval(r#"return cjson.encode({x = {}})"#), r#"{"x":{}}"#);
        assert_eq!(eval(r#"return cjson.decode('{"k": "\\u00e9"}').k"#), "é");
        assert_eq!(
            eval(r#"return tostring(pcall(cjson.encode, {[false] = 1}))"#),
            "false"
        );
    }
}
