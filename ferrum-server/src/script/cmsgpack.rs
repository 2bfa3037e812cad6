//! `cmsgpack`: lua-cmsgpack's API (`pack`, `unpack`, `unpack_one`,
//! `unpack_limit`), written for FerrumKV from the MessagePack spec and
//! lua-cmsgpack's documented choices: integral numbers in the smallest
//! integer form, others as float32 when exact else float64, tables whose
//! keys are exactly 1..n as arrays, nesting cut at 16 levels with nil.

use mlua::{Lua, MultiValue, Table, Value, Variadic};

/// Tables nested deeper than this are packed as nil.
const MAX_NESTING: usize = 16;

/// The `cmsgpack` table.
pub(crate) fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|_, args: Variadic<Value>| {
            if args.is_empty() {
                return Err(mlua::Error::runtime("MessagePack pack needs input."));
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
        .ok_or_else(|| mlua::Error::runtime("Start offset greater than input length"))?;
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
    let pairs: Vec<(Value, Value)> = t.pairs::<Value, Value>().collect::<mlua::Result<_>>()?;
    let is_array = pairs.iter().all(|(k, _)| match k {
        Value::Integer(i) => *i >= 1 && *i as usize <= pairs.len(),
        _ => false,
    });
    if is_array {
        header(
            pairs.len(),
            Some((0x90, 16)),
            [None, Some(0xdc), Some(0xdd)],
            out,
        );
        for i in 1..=pairs.len() {
            pack(&t.raw_get::<Value>(i)?, depth + 1, out)?;
        }
    } else {
        header(
            pairs.len(),
            Some((0x80, 16)),
            [None, Some(0xde), Some(0xdf)],
            out,
        );
        for (k, v) in &pairs {
            pack(k, depth + 1, out)?;
            pack(v, depth + 1, out)?;
        }
    }
    Ok(())
}

/// Decodes up to `limit` objects (0: all) from `pos`; returns where it
/// stopped and the values.
fn unpack(lua: &Lua, s: &[u8], pos: usize, limit: usize) -> mlua::Result<(usize, Vec<Value>)> {
    let mut r = Reader { lua, s, pos };
    let mut values = Vec::new();
    while r.pos < s.len() && (limit == 0 || values.len() < limit) {
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
        let end = end.ok_or_else(|| mlua::Error::runtime("Missing bytes in input."))?;
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

    fn value(&mut self) -> mlua::Result<Value> {
        let b = self.take(1)?[0];
        let v = match b {
            0x00..=0x7f => Value::Integer(i64::from(b)),
            0x80..=0x8f => self.map(usize::from(b & 0x0f))?,
            0x90..=0x9f => self.array(usize::from(b & 0x0f))?,
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
            0xdc => {
                let n = self.uint(2)? as usize;
                self.array(n)?
            }
            0xdd => {
                let n = self.uint(4)? as usize;
                self.array(n)?
            }
            0xde => {
                let n = self.uint(2)? as usize;
                self.map(n)?
            }
            0xdf => {
                let n = self.uint(4)? as usize;
                self.map(n)?
            }
            0xe0..=0xff => Value::Integer(i64::from(b as i8)),
            _ => return Err(mlua::Error::runtime("Bad data format in input.")),
        };
        Ok(v)
    }

    fn str(&mut self, n: usize) -> mlua::Result<Value> {
        let b = self.take(n)?;
        let s = self.lua.create_string(b)?;
        Ok(Value::String(s))
    }

    fn array(&mut self, n: usize) -> mlua::Result<Value> {
        let t = self.lua.create_table_with_capacity(n.min(1 << 16), 0)?;
        for i in 1..=n {
            let v = self.value()?;
            t.raw_set(i, v)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, n: usize) -> mlua::Result<Value> {
        let t = self.lua.create_table_with_capacity(0, n.min(1 << 16))?;
        for _ in 0..n {
            let k = self.value()?;
            let v = self.value()?;
            if !matches!(k, Value::Nil) {
                t.raw_set(k, v)?;
            }
        }
        Ok(Value::Table(t))
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
}
