//! `cmsgpack`: lua-cmsgpack's API (`pack`, `unpack`, `unpack_one`,
//! `unpack_limit`), written for FerrumKV from the MessagePack spec and
//! lua-cmsgpack's documented choices: integral numbers in the smallest
//! integer form, others as float32 when exact else float64, tables whose
//! keys are exactly 1..n as arrays, nesting cut at 16 levels with nil.
//!
//! Nothing here holds more Lua values at once than the nesting depth (or
//! the values one `unpack` returns): every value held from Rust takes a
//! slot of mlua's reference stack, which is as bounded as Lua's own, so
//! a table of 100,000 pairs is walked pair by pair, never collected.
//! Decoding bounds its nesting and its results as lua-cmsgpack's stack
//! checks do, with its error texts.

use mlua::{Lua, MultiValue, Table, Value, Variadic};

use crate::error::{
    msgpack_bad_offset, MSGPACK_BAD_FORMAT, MSGPACK_MISSING_BYTES, MSGPACK_NEEDS_INPUT,
    MSGPACK_NESTING, MSGPACK_TOO_MANY_RESULTS,
};

/// Tables nested deeper than this are packed as nil.
const MAX_NESTING: usize = 16;
/// Input nested deeper than this is refused when unpacking: Lua's stack
/// ends lua-cmsgpack's decoding a few thousand levels down, and each open
/// level holds up to two of mlua's references here.
const MAX_UNPACK_NESTING: usize = 1_000;
/// The most values one `unpack` returns (Lua's stack holds about 8,000;
/// lua-cmsgpack stops where it is full).
const MAX_RESULTS: usize = 4_000;

/// The `cmsgpack` table.
pub(crate) fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|_, args: Variadic<Value>| {
            if args.is_empty() {
                return Err(mlua::Error::runtime(MSGPACK_NEEDS_INPUT));
            }
            let mut out = Vec::new();
            for v in args.iter() {
                pack(v, 0, &mut out)?;
            }
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| {
            let (_, values) = unpack(lua, &s.as_bytes(), 0, 0)?;
            Ok(MultiValue::from_iter(values))
        })?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            unpack_counted(lua, &s.as_bytes(), 1, offset.unwrap_or(0))
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(
            |lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
                unpack_counted(
                    lua,
                    &s.as_bytes(),
                    limit.max(0) as usize,
                    offset.unwrap_or(0),
                )
            },
        )?,
    )?;
    Ok(t)
}

/// `unpack_limit`'s reply: the offset to continue from (-1 at the end),
/// then the values.
fn unpack_counted(lua: &Lua, s: &[u8], limit: usize, offset: i64) -> mlua::Result<MultiValue> {
    let offset = usize::try_from(offset)
        .ok()
        .filter(|&o| o <= s.len())
        .ok_or_else(|| mlua::Error::runtime(msgpack_bad_offset(offset, s.len())))?;
    let (end, values) = unpack(lua, s, offset, limit)?;
    let next = if end >= s.len() { -1 } else { end as i64 };
    Ok(std::iter::once(Value::Integer(next))
        .chain(values)
        .collect())
}

fn pack(v: &Value, depth: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => int(*n, out),
        Value::Number(x) => number(*x, out),
        Value::String(s) => string(&s.as_bytes(), out),
        Value::Table(t) if depth < MAX_NESTING => table_pack(t, depth, out)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn number(x: f64, out: &mut Vec<u8>) {
    if x.fract() == 0.0 && x.abs() < 9.2e18 {
        return int(x as i64, out);
    }
    let f = x as f32;
    if f64::from(f) == x {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&x.to_be_bytes());
    }
}

fn int(n: i64, out: &mut Vec<u8>) {
    match n {
        0..=127 => out.push(n as u8),
        -32..=-1 => out.push(n as i8 as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        256..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        n if n > 0 => {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
        -128..=-33 => out.extend_from_slice(&[0xd0, n as i8 as u8]),
        -32768..=-129 => {
            out.push(0xd1);
            out.extend_from_slice(&(n as i16).to_be_bytes());
        }
        -2_147_483_648..=-32769 => {
            out.push(0xd2);
            out.extend_from_slice(&(n as i32).to_be_bytes());
        }
        n => {
            out.push(0xd3);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// A header: the fix form below `fix_max`, else the 8/16/32-bit forms.
fn header(len: usize, fix: Option<(u8, usize)>, codes: [Option<u8>; 3], out: &mut Vec<u8>) {
    if let Some((base, max)) = fix {
        if len < max {
            out.push(base | len as u8);
            return;
        }
    }
    match (len, codes) {
        (0..=0xff, [Some(c), _, _]) => out.extend_from_slice(&[c, len as u8]),
        (0..=0xffff, [_, Some(c), _]) => {
            out.push(c);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        (_, [_, _, Some(c)]) => {
            out.push(c);
            out.extend_from_slice(&(len as u32).to_be_bytes());
        }
        _ => {}
    }
}

fn string(s: &[u8], out: &mut Vec<u8>) {
    header(
        s.len(),
        Some((0xa0, 32)),
        [Some(0xd9), Some(0xda), Some(0xdb)],
        out,
    );
    out.extend_from_slice(s);
}

fn table_pack(t: &Table, depth: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    let (len, is_array) = shape(t)?;
    if is_array {
        header(len, Some((0x90, 16)), [None, Some(0xdc), Some(0xdd)], out);
        for i in 1..=len {
            pack(&t.raw_get::<Value>(i)?, depth + 1, out)?;
        }
    } else {
        header(len, Some((0x80, 16)), [None, Some(0xde), Some(0xdf)], out);
        for pair in t.pairs::<Value, Value>() {
            let (k, v) = pair?;
            pack(&k, depth + 1, out)?;
            pack(&v, depth + 1, out)?;
        }
    }
    Ok(())
}

/// How many pairs `t` has, and whether it is an array as lua-cmsgpack
/// sees one: every key a positive integer, the largest equal to the
/// count (so the keys are exactly 1..n).
fn shape(t: &Table) -> mlua::Result<(usize, bool)> {
    let (mut count, mut max, mut positive_ints) = (0usize, 0i64, true);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        count += 1;
        match k {
            Value::Integer(i) if i >= 1 => max = max.max(i),
            _ => positive_ints = false,
        }
    }
    Ok((count, positive_ints && max as usize == count))
}

/// Decodes up to `limit` objects (0: all) from `pos`; returns where it
/// stopped and the values.
fn unpack(lua: &Lua, s: &[u8], pos: usize, limit: usize) -> mlua::Result<(usize, Vec<Value>)> {
    let mut r = Reader { lua, s, pos };
    let mut values = Vec::new();
    while r.pos < s.len() && (limit == 0 || values.len() < limit) {
        if values.len() == MAX_RESULTS {
            return Err(mlua::Error::runtime(MSGPACK_TOO_MANY_RESULTS));
        }
        values.push(r.value()?);
    }
    Ok((r.pos, values))
}

struct Reader<'a> {
    lua: &'a Lua,
    s: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> mlua::Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.s.len());
        let end = end.ok_or_else(|| mlua::Error::runtime(MSGPACK_MISSING_BYTES))?;
        let b = &self.s[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    fn uint(&mut self, n: usize) -> mlua::Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
    }

    /// Reads one object, its arrays and maps through an explicit stack
    /// of the ones still open, so hostile nesting cannot recurse.
    fn value(&mut self) -> mlua::Result<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            let mut done = match self.item()? {
                Item::Scalar(v) => v,
                Item::Array(0) | Item::Map(0) => Value::Table(self.lua.create_table()?),
                Item::Array(_) | Item::Map(_) if open.len() == MAX_UNPACK_NESTING => {
                    return Err(mlua::Error::runtime(MSGPACK_NESTING));
                }
                Item::Array(len) => {
                    let table = self.lua.create_table_with_capacity(len.min(1 << 16), 0)?;
                    open.push(Open {
                        table,
                        left: len,
                        array_next: Some(1),
                        key: None,
                    });
                    continue;
                }
                Item::Map(len) => {
                    let table = self.lua.create_table_with_capacity(0, len.min(1 << 16))?;
                    open.push(Open {
                        table,
                        left: len,
                        array_next: None,
                        key: None,
                    });
                    continue;
                }
            };
            // Put the finished value in its container; a container that
            // is full is finished in turn.
            loop {
                let Some(mut top) = open.pop() else {
                    return Ok(done);
                };
                if !top.add(done)? {
                    open.push(top);
                    break;
                }
                done = Value::Table(top.table);
            }
        }
    }

    /// The next object's header: a whole scalar, or how many elements
    /// (pairs) an array (map) has.
    fn item(&mut self) -> mlua::Result<Item> {
        let b = self.take(1)?[0];
        let v = match b {
            0x00..=0x7f => Value::Integer(i64::from(b)),
            0x80..=0x8f => return Ok(Item::Map(usize::from(b & 0x0f))),
            0x90..=0x9f => return Ok(Item::Array(usize::from(b & 0x0f))),
            0xa0..=0xbf => self.str(usize::from(b & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xc4 | 0xd9 => {
                let n = self.uint(1)? as usize;
                self.str(n)?
            }
            0xc5 | 0xda => {
                let n = self.uint(2)? as usize;
                self.str(n)?
            }
            0xc6 | 0xdb => {
                let n = self.uint(4)? as usize;
                self.str(n)?
            }
            0xca => Value::Number(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => Value::Number(f64::from_bits(self.uint(8)?)),
            0xcc => Value::Integer(self.uint(1)? as i64),
            0xcd => Value::Integer(self.uint(2)? as i64),
            0xce => Value::Integer(self.uint(4)? as i64),
            0xcf => Value::Number(self.uint(8)? as f64),
            0xd0 => Value::Integer(i64::from(self.uint(1)? as u8 as i8)),
            0xd1 => Value::Integer(i64::from(self.uint(2)? as u16 as i16)),
            0xd2 => Value::Integer(i64::from(self.uint(4)? as u32 as i32)),
            0xd3 => Value::Integer(self.uint(8)? as i64),
            0xdc => return Ok(Item::Array(self.uint(2)? as usize)),
            0xdd => return Ok(Item::Array(self.uint(4)? as usize)),
            0xde => return Ok(Item::Map(self.uint(2)? as usize)),
            0xdf => return Ok(Item::Map(self.uint(4)? as usize)),
            0xe0..=0xff => Value::Integer(i64::from(b as i8)),
            _ => return Err(mlua::Error::runtime(MSGPACK_BAD_FORMAT)),
        };
        Ok(Item::Scalar(v))
    }

    fn str(&mut self, n: usize) -> mlua::Result<Value> {
        let b = self.take(n)?;
        let s = self.lua.create_string(b)?;
        Ok(Value::String(s))
    }
}

/// What an object starts with.
enum Item {
    Scalar(Value),
    Array(usize),
    Map(usize),
}

/// An array or map being decoded.
struct Open {
    table: Table,
    /// Elements (pairs) still to come.
    left: usize,
    /// For an array, the index of the next element.
    array_next: Option<usize>,
    /// For a map, the key read whose value comes next.
    key: Option<Value>,
}

impl Open {
    /// Adds the next element (a map's key or value); `true` once full.
    fn add(&mut self, v: Value) -> mlua::Result<bool> {
        if let Some(i) = self.array_next.as_mut() {
            self.table.raw_set(*i, v)?;
            *i += 1;
        } else {
            let Some(k) = self.key.take() else {
                self.key = Some(v);
                return Ok(false);
            };
            if !matches!(k, Value::Nil) {
                self.table.raw_set(k, v)?;
            }
        }
        self.left -= 1;
        Ok(self.left == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(code: &str) -> String {
        let lua = Lua::new();
        lua.globals()
            .set("cmsgpack", table(&lua).expect("cmsgpack"))
            .expect("set");
        let packed: mlua::String = lua.load(code).eval().expect(code);
        packed
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn packs_as_lua_cmsgpack() {
        assert_eq!(hex("return cmsgpack.pack(0.1)"), "cb3fb999999999999a");
        assert_eq!(
            hex("return cmsgpack.pack(-1099511627776)"),
            "d3ffffff0000000000"
        );
        assert_eq!(hex("return cmsgpack.pack({1, 2})"), "920102");
        assert_eq!(hex("return cmsgpack.pack('ab', true)"), "a26162c3");
        let lua = Lua::new();
        lua.globals()
            .set("cmsgpack", table(&lua).expect("cmsgpack"))
            .expect("set");
        let ok: bool = lua
            .load("local t = cmsgpack.unpack(cmsgpack.pack({a = {1, 2}, b = 'x'})) return t.a[2] == 2 and t.b == 'x'")
            .eval()
            .expect("round trip");
        assert!(ok);
    }

    fn lua() -> Lua {
        let lua = Lua::new();
        lua.globals()
            .set("cmsgpack", table(&lua).expect("cmsgpack"))
            .expect("set");
        lua
    }

    /// Redis's smoke test packs a 100,000-element array and map: they
    /// must not overflow mlua's reference stack.
    #[test]
    fn packs_and_unpacks_tables_of_100k_pairs() {
        let ok: bool = lua()
            .load(
                "local a, m = {}, {}
                 for i = 1, 100000 do a[i] = i; m[tostring(i)] = i end
                 local da = cmsgpack.unpack(cmsgpack.pack(a))
                 local dm = cmsgpack.unpack(cmsgpack.pack({a = a, m = m}))
                 return #da == 100000 and da[100000] == 100000
                    and #dm.a == 100000 and dm.m['99999'] == 99999",
            )
            .eval()
            .expect("round trip");
        assert!(ok);
    }

    #[test]
    fn deep_or_long_input_is_refused_with_lua_cmsgpacks_errors() {
        let lua = lua();
        let deep = format!(
            "return cmsgpack.unpack(string.rep('\\145', {}) .. '\\1')",
            100_000
        );
        let e = lua.load(&deep).exec().expect_err("too deep");
        assert!(e.to_string().contains(MSGPACK_NESTING), "{e}");
        let ok: bool = lua
            .load(
                "local t = cmsgpack.unpack(string.rep('\\145', 999) .. '\\1')
                   for _ = 1, 998 do t = t[1] end return t[1] == 1",
            )
            .eval()
            .expect("999 levels decode");
        assert!(ok);
        let many = "return cmsgpack.unpack(string.rep('\\1', 100000))";
        let e = lua.load(many).exec().expect_err("too many results");
        assert!(e.to_string().contains(MSGPACK_TOO_MANY_RESULTS), "{e}");
        let n: i64 = lua
            .load("return select('#', cmsgpack.unpack(string.rep('\\1', 1000)))")
            .eval()
            .expect("1000 results");
        assert_eq!(n, 1000);
    }
}
