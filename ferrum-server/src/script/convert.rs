//! Redis's conversion rules between RESP replies and Lua values, both ways.
//!
//! A command's reply reaches a script as Lua: integers as numbers, bulk
//! strings as strings, nil as `false` (RESP2) or `nil` (RESP3), arrays as
//! tables, status replies as `{ok=...}` and errors as `{err=...}`, and with
//! `redis.setresp(3)` maps as `{map={...}}`, sets as `{set={...}}`, doubles
//! as `{double=n}`, big numbers as `{big_number=s}`. A script's return
//! value goes back the other way; tables are read with raw access only, so
//! no metamethod of the script's runs while its reply is built.

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};
use mlua::{Lua, Table, Value};

use crate::error::{err_text, LUA_STACK_LIMIT};

/// How deep a script's reply may nest before it is cut with an error, as
/// Redis cuts it when the Lua stack runs out.
const MAX_DEPTH: usize = 1000;

/// A command's reply as the Lua value a script sees, under the script's
/// RESP version (`redis.setresp`). Error replies are converted too (to
/// `{err=...}`); the caller decides whether to raise them.
pub(crate) fn frame_to_lua(lua: &Lua, frame: Frame, resp3: bool) -> mlua::Result<Value> {
    Ok(match frame {
        Frame::Integer(n) => Value::Integer(n),
        Frame::Bulk(b) => Value::String(lua.create_string(&b)?),
        Frame::Simple(s) => single(lua, "ok", Value::String(lua.create_string(&s)?))?,
        Frame::Error(e) => single(lua, "err", Value::String(lua.create_string(&e)?))?,
        Frame::Null | Frame::NullArray if resp3 => Value::Nil,
        Frame::Null | Frame::NullArray => Value::Boolean(false),
        Frame::Array(items) | Frame::Push(items) => array(lua, items, resp3)?,
        // A script sees values: the pre-encoded reply as the frames it
        // stands for.
        Frame::Bulks(bulks) => frame_to_lua(lua, bulks.into_frame(), resp3)?,
        Frame::Map(pairs) if resp3 => {
            let map = lua.create_table_with_capacity(0, pairs.len())?;
            for (k, v) in pairs {
                map.raw_set(frame_to_lua(lua, k, resp3)?, frame_to_lua(lua, v, resp3)?)?;
            }
            single(lua, "map", Value::Table(map))?
        }
        Frame::Map(pairs) => {
            let flat = pairs.into_iter().flat_map(|(k, v)| [k, v]).collect();
            array(lua, flat, resp3)?
        }
        Frame::Set(items) if resp3 => {
            let set = lua.create_table_with_capacity(0, items.len())?;
            for item in items {
                set.raw_set(frame_to_lua(lua, item, resp3)?, true)?;
            }
            single(lua, "set", Value::Table(set))?
        }
        Frame::Set(items) => array(lua, items, resp3)?,
        Frame::Double(d) if resp3 => single(lua, "double", Value::Number(d))?,
        Frame::Boolean(b) if resp3 => Value::Boolean(b),
        Frame::Boolean(b) => Value::Integer(i64::from(b)),
        Frame::BigNumber(n) if resp3 => {
            single(lua, "big_number", Value::String(lua.create_string(&n)?))?
        }
        Frame::Verbatim { format, text } if resp3 => {
            let v = lua.create_table()?;
            v.raw_set("format", lua.create_string(format)?)?;
            v.raw_set("string", lua.create_string(&text)?)?;
            single(lua, "verbatim_string", Value::Table(v))?
        }
        // RESP2 shapes of the RESP3-only types: what the encoder would send.
        other => Value::String(lua.create_string(resp2_text(&other))?),
    })
}

/// The bytes of a RESP3 scalar as RESP2 sends it (a bulk string).
fn resp2_text(frame: &Frame) -> Vec<u8> {
    let mut buf = bytes::BytesMut::new();
    frame.encode(Protocol::Resp2, &mut buf);
    // `$<len>\r\n<text>\r\n`: the text between the first CRLF and the last.
    let start = buf.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let end = buf.len().saturating_sub(2).max(start);
    buf[start..end].to_vec()
}

fn single(lua: &Lua, key: &str, value: Value) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set(key, value)?;
    Ok(Value::Table(t))
}

fn array(lua: &Lua, items: Vec<Frame>, resp3: bool) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.into_iter().enumerate() {
        t.raw_set(i + 1, frame_to_lua(lua, item, resp3)?)?;
    }
    Ok(Value::Table(t))
}

/// A script's return value as the reply frame. `resp3` is the script's
/// `redis.setresp` version, which decides what booleans become.
pub(crate) fn lua_to_frame(value: &Value, resp3: bool) -> Frame {
    to_frame(value, resp3, 0)
}

fn to_frame(value: &Value, resp3: bool, depth: usize) -> Frame {
    match value {
        Value::String(s) => Frame::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(n) => Frame::Integer(*n),
        Value::Number(n) => Frame::Integer(*n as i64),
        Value::Boolean(b) if resp3 => Frame::Boolean(*b),
        Value::Boolean(true) => Frame::Integer(1),
        Value::Table(t) if depth >= MAX_DEPTH => {
            let _ = t;
            Frame::error(LUA_STACK_LIMIT)
        }
        Value::Table(t) => table_to_frame(t, resp3, depth),
        Value::Error(e) => Frame::Error(one_line(&err_text(error_message(e)))),
        _ => Frame::Null,
    }
}

fn table_to_frame(t: &Table, resp3: bool, depth: usize) -> Frame {
    let field = |name: &str| t.raw_get::<Value>(name).unwrap_or(Value::Nil);
    if let Value::String(e) = field("err") {
        return Frame::Error(one_line(&e.to_string_lossy()));
    }
    if let Value::String(s) = field("ok") {
        return Frame::Simple(one_line(&s.to_string_lossy()));
    }
    if let Value::Number(d) = field("double") {
        return Frame::Double(d);
    }
    if let Value::Integer(d) = field("double") {
        return Frame::Double(d as f64);
    }
    if let Value::String(n) = field("big_number") {
        return Frame::BigNumber(one_line(&n.to_string_lossy()));
    }
    if let Value::Table(m) = field("map") {
        let pairs = m
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| {
                (
                    to_frame(&k, resp3, depth + 1),
                    to_frame(&v, resp3, depth + 1),
                )
            })
            .collect();
        return Frame::Map(pairs);
    }
    if let Value::Table(s) = field("set") {
        let items = s
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, _)| to_frame(&k, resp3, depth + 1))
            .collect();
        return Frame::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_frame(&v, resp3, depth + 1)),
        }
    }
    Frame::Array(items)
}

/// Newlines become spaces: a status or error line cannot carry them.
fn one_line(text: &str) -> Bytes {
    Bytes::from(text.replace(['\r', '\n'], " "))
}

/// The message of a Rust error raised into Lua (SCRIPT KILL, a callback's
/// argument error), without mlua's wrapping.
pub(crate) fn error_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(msg) => msg.clone(),
        mlua::Error::CallbackError { cause, .. } => error_message(cause),
        mlua::Error::ExternalError(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// A Lua number as Redis passes it to a command: `%.17g`, the shortest
/// form that loses no precision.
pub(crate) fn format_number(x: f64) -> String {
    format_g(x, 17)
}

/// C's `%.<precision>g`.
pub(crate) fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_fraction(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_fraction(&format!("{x:.decimals$}")).to_owned()
    }
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_c() {
        assert_eq!(format_number(9007199254740991.0), "9007199254740991");
        assert_eq!(format_number(0.1), "0.10000000000000001");
        assert_eq!(format_number(100.5), "100.5");
        assert_eq!(format_number(1e20), "1e+20");
        assert_eq!(format_number(-2.5e-7), "-2.4999999999999999e-07");
        assert_eq!(format_g(1023.2, 14), "1023.2");
        assert_eq!(format_g(0.0003, 14), "0.0003");
        assert_eq!(format_g(-5000.0, 14), "-5000");
    }

    #[test]
    fn replies_round_trip_through_lua() {
        let lua = Lua::new();
        let frame = Frame::Array(vec![
            Frame::Integer(1),
            Frame::bulk("a"),
            Frame::Simple(Bytes::from_static(b"OK")),
            Frame::Null,
        ]);
        let v = frame_to_lua(&lua, frame, false).expect("convert");
        let back = lua_to_frame(&v, false);
        // RESP2 nil is false in Lua, and false is a nil reply again; the
        // array ends at it, as Lua's length does.
        assert_eq!(
            back,
            Frame::Array(vec![
                Frame::Integer(1),
                Frame::bulk("a"),
                Frame::Simple(Bytes::from_static(b"OK")),
                Frame::Null,
            ])
        );
    }
}
