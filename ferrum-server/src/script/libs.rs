//! The libraries Redis gives scripts beside Lua's own: `bit` (LuaBitOp's
//! API) here; `cjson` and `cmsgpack` in their own files.

use mlua::{Lua, Table, Value, Variadic};

use crate::error::{BIT_NO_VALUE, BIT_NUMBER_EXPECTED};

/// The library tables, by global name.
pub(crate) fn tables(lua: &Lua) -> mlua::Result<Table> {
    let libs = lua.create_table()?;
    libs.set("bit", bit(lua)?)?;
    libs.set("cjson", super::cjson::table(lua)?)?;
    libs.set("cmsgpack", super::cmsgpack::table(lua)?)?;
    Ok(libs)
}

/// A Lua number as LuaBitOp reads it: wrapped to 32 bits, two's
/// complement (numbers past 2^53 lose their low bits as Lua's do).
fn tobit(v: &Value) -> mlua::Result<i32> {
    let x = match v {
        Value::Integer(n) => *n as f64,
        Value::Number(x) => *x,
        Value::String(s) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| mlua::Error::runtime(BIT_NUMBER_EXPECTED))?,
        _ => return Err(mlua::Error::runtime(BIT_NUMBER_EXPECTED)),
    };
    // LuaBitOp adds 2^52+2^51 and takes the low word: round to nearest,
    // then wrap modulo 2^32.
    Ok((x.round_ties_even() as i64 as u64 & 0xffff_ffff) as u32 as i32)
}

fn fold(lua: &Lua, f: fn(i32, i32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, args: Variadic<Value>| {
        let mut it = args.iter();
        let first = it
            .next()
            .ok_or_else(|| mlua::Error::runtime(BIT_NO_VALUE))?;
        let mut acc = tobit(first)?;
        for v in it {
            acc = f(acc, tobit(v)?);
        }
        Ok(acc)
    })
}

fn shift(lua: &Lua, f: fn(i32, u32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, (x, n): (Value, Value)| {
        Ok(f(tobit(&x)?, (tobit(&n)? & 31) as u32))
    })
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("tobit", lua.create_function(|_, x: Value| tobit(&x))?)?;
    t.set("bnot", lua.create_function(|_, x: Value| Ok(!tobit(&x)?))?)?;
    t.set("band", fold(lua, |a, b| a & b)?)?;
    t.set("bor", fold(lua, |a, b| a | b)?)?;
    t.set("bxor", fold(lua, |a, b| a ^ b)?)?;
    t.set("lshift", shift(lua, |x, n| ((x as u32) << n) as i32)?)?;
    t.set("rshift", shift(lua, |x, n| ((x as u32) >> n) as i32)?)?;
    t.set("arshift", shift(lua, |x, n| x >> n)?)?;
    t.set("rol", shift(lua, |x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.set("ror", shift(lua, |x, n| (x as u32).rotate_right(n) as i32)?)?;
    t.set(
        "bswap",
        lua.create_function(|_, x: Value| Ok(tobit(&x)?.swap_bytes()))?,
    )?;
    t.set(
        "tohex",
        lua.create_function(|_, (x, n): (Value, Option<Value>)| {
            let x = tobit(&x)? as u32;
            let n = match n {
                Some(v) => tobit(&v)?,
                None => 8,
            };
            let (upper, digits) = (n < 0, n.unsigned_abs().min(8) as usize);
            let hex = if upper {
                format!("{x:08X}")
            } else {
                format!("{x:08x}")
            };
            Ok(hex[8 - digits..].to_owned())
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_matches_luabitop() {
        let lua = Lua::new();
        lua.globals()
            .set("bit", bit(&lua).expect("bit"))
            .expect("set");
        let check = |expr: &str, want: i64| {
            let got: i64 = lua.load(expr).eval().expect(expr);
            assert_eq!(got, want, "{expr}");
        };
        check("return bit.tobit(0xffffffff)", -1);
        check("return bit.bor(1,2,4,8,16,32,64,128)", 255);
        check("return bit.bxor(1,2)", 3);
        check("return bit.lshift(1, 31)", i64::from(i32::MIN));
        check("return bit.rshift(-1, 28)", 15);
        check("return bit.arshift(-256, 4)", -16);
        check("return bit.band(bit.rshift(0x07000f, 16), 0xff)", 7);
        let hex: String = lua.load("return bit.tohex(-1, -4)").eval().expect("tohex");
        assert_eq!(hex, "FFFF");
    }
}
