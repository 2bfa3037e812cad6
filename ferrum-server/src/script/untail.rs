//! Compiled scripts whose `return redis.call(...)` keeps the script's frame,
//! so errors can name their line.
//!
//! Redis's `redis.call` is a C function, and Lua 5.1 keeps a caller's
//! frame when it tail-calls a C function: `return redis.call('nosuch')`
//! still fails `on @user_script:1.` there. FerrumKV's `redis.call` is a
//! Lua function (it packs its arguments into one table; see `call.rs`),
//! and a Lua tail call drops the caller's frame, and with it the line.
//! So in a script's bytecode each `TAILCALL` of `redis.call` or
//! `redis.pcall` (the called register last loaded by a `GETTABLE` of the
//! constant key `call` or `pcall`) becomes a `CALL`: the parser emits every
//! tail call with all results kept (`C` = 0) and follows it with `RETURN`
//! of all of them, so `CALL` with the same operands returns exactly what
//! the tail call did, one frame deeper. Other tail calls stay, so deep
//! tail recursion runs as in Redis.
//!
//! The walk follows Lua 5.1's `ldump.c` layout for the VM's own header
//! (`lundump.c` checks the same header when loading). Anything else is
//! left as compiled.

/// Opcodes of Lua 5.1's `lopcodes.h`.
const OP_GETTABLE: u32 = 6;
const OP_CALL: u32 = 28;
const OP_TAILCALL: u32 = 29;
/// Opcodes whose `A` operand is not a register they write: SETGLOBAL,
/// SETUPVAL, SETTABLE, JMP, EQ, LT, LE, TEST, RETURN, SETLIST, CLOSE.
const A_NOT_WRITTEN: [u32; 11] = [7, 8, 9, 22, 23, 24, 25, 26, 30, 34, 35];
/// An `RK` operand above this names a constant.
const BIT_RK: u32 = 1 << 8;
/// The low six bits of an instruction are its opcode.
const OPCODE_MASK: u32 = 0x3f;
/// Lua 5.1's binary header as this build writes it: signature, version
/// 5.1, official format, little endian, and the sizes of int (4),
/// size_t (8), Instruction (4) and lua_Number (8), numbers not integral.
const HEADER: [u8; 12] = [0x1b, b'L', b'u', b'a', 0x51, 0, 1, 4, 8, 4, 8, 0];

/// `chunk` (a `string.dump` of a function) with every tail call of
/// `redis.call`/`redis.pcall` made a call; `None` if it is not laid out as
/// this module expects.
pub(crate) fn without_tail_calls(chunk: &[u8]) -> Option<Vec<u8>> {
    if !chunk.starts_with(&HEADER) {
        return None;
    }
    let mut out = chunk.to_vec();
    let mut w = Walker {
        bytes: &mut out,
        pos: HEADER.len(),
    };
    w.function()?;
    (w.pos == w.bytes.len()).then_some(out)
}

/// A cursor over a dumped chunk that rewrites its instructions in place.
struct Walker<'a> {
    bytes: &'a mut [u8],
    pos: usize,
}

impl Walker<'_> {
    fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n)?;
        (end <= self.bytes.len()).then(|| self.pos = end)
    }

    fn int(&mut self) -> Option<usize> {
        let at = self.pos;
        self.skip(4)?;
        let v = u32::from_le_bytes(self.bytes[at..at + 4].try_into().ok()?);
        usize::try_from(v).ok()
    }

    fn string(&mut self) -> Option<()> {
        let at = self.pos;
        self.skip(8)?;
        let len = u64::from_le_bytes(self.bytes[at..at + 8].try_into().ok()?);
        self.skip(usize::try_from(len).ok()?)
    }

    fn instruction(&self, at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(
            self.bytes.get(at..at + 4)?.try_into().ok()?,
        ))
    }

    /// One function prototype (`DumpFunction`), then its nested ones.
    fn function(&mut self) -> Option<()> {
        self.string()?; // source
        self.skip(4 + 4 + 4)?; // linedefined, lastlinedefined, nups..maxstacksize
        let code_len = self.int()?;
        let code_at = self.pos;
        self.skip(code_len.checked_mul(4)?)?;
        let constants = (0..self.int()?)
            .map(|_| self.constant())
            .collect::<Option<Vec<_>>>()?;
        self.untail(code_at, code_len, &constants)?;
        for _ in 0..self.int()? {
            self.function()?;
        }
        let lines = self.int()?;
        self.skip(lines.checked_mul(4)?)?;
        for _ in 0..self.int()? {
            self.string()?; // local's name
            self.skip(8)?; // startpc, endpc
        }
        for _ in 0..self.int()? {
            self.string()?; // upvalue's name
        }
        Some(())
    }

    /// Makes each tail call of `redis.call`/`redis.pcall` among the
    /// `len` instructions at `at` a call.
    fn untail(&mut self, at: usize, len: usize, constants: &[Option<Vec<u8>>]) -> Option<()> {
        let code: Vec<u32> = (0..len)
            .map(|k| self.instruction(at + 4 * k))
            .collect::<Option<_>>()?;
        for (k, &i) in code.iter().enumerate() {
            if i & OPCODE_MASK == OP_TAILCALL && calls_redis(&code[..k], field_a(i), constants) {
                let call = (i & !OPCODE_MASK) | OP_CALL;
                self.bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&call.to_le_bytes());
            }
        }
        Some(())
    }

    /// One constant; a string's bytes (without Lua's trailing NUL).
    fn constant(&mut self) -> Option<Option<Vec<u8>>> {
        let at = self.pos;
        self.skip(1)?;
        match self.bytes[at] {
            0 => Some(None),
            1 => self.skip(1).map(|()| None),
            3 => self.skip(8).map(|()| None),
            4 => {
                let start = self.pos + 8;
                self.string()?;
                let text = self.bytes.get(start..self.pos)?;
                Some(Some(text.strip_suffix(b"\0").unwrap_or(text).to_vec()))
            }
            _ => None,
        }
    }
}

fn field_a(i: u32) -> u32 {
    (i >> 6) & 0xff
}

/// Whether register `a`, called by the instruction after `before`, was
/// last loaded by a `GETTABLE` of the constant key `call` or `pcall`.
fn calls_redis(before: &[u32], a: u32, constants: &[Option<Vec<u8>>]) -> bool {
    let loaded = before
        .iter()
        .rev()
        .find(|&&i| field_a(i) == a && !A_NOT_WRITTEN.contains(&(i & OPCODE_MASK)));
    let Some(&i) = loaded else {
        return false;
    };
    let c = (i >> 14) & 0x1ff;
    i & OPCODE_MASK == OP_GETTABLE
        && c & BIT_RK != 0
        && constants
            .get((c & !BIT_RK) as usize)
            .and_then(Option::as_deref)
            .is_some_and(|k| k == b"call" || k == b"pcall")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{ChunkMode, Function, Lua};

    fn untailed(lua: &Lua, code: &str) -> Function {
        let f = lua
            .load(code)
            .set_name("=t")
            .into_function()
            .expect("compiles");
        let chunk = without_tail_calls(&f.dump(false)).expect("a Lua 5.1 chunk");
        lua.load(&chunk[..])
            .set_mode(ChunkMode::Binary)
            .into_function()
            .expect("loads")
    }

    /// The source of the frame that called the Lua function calling it.
    fn install_probe(lua: &Lua) {
        let probe = lua
            .create_function(|lua, ()| {
                Ok(lua.inspect_stack(2, |d| d.source().short_src.map(|s| s.into_owned())))
            })
            .expect("function");
        lua.globals().set("callers_source", probe).expect("set");
    }

    #[test]
    fn a_tail_call_of_redis_call_keeps_its_callers_frame_and_results() {
        let lua = Lua::new();
        install_probe(&lua);
        let redis = lua.create_table().expect("table");
        let call = lua
            .load("return function(...) local s = callers_source() return s, select('#', ...) end")
            .eval::<Function>()
            .expect("call");
        redis.set("call", call).expect("set");
        lua.globals().set("redis", redis).expect("set");
        let code = "return redis.call('a', 'b')";
        let tailed = lua
            .load(code)
            .set_name("=t")
            .into_function()
            .expect("compiles");
        let lost: (Option<String>, i64) = tailed.call(()).expect("runs");
        assert_eq!(lost, (Some("(tail call)".to_owned()), 2));
        let kept: (Option<String>, i64) = untailed(&lua, code).call(()).expect("runs");
        assert_eq!(kept, (Some("t".to_owned()), 2));
    }

    #[test]
    fn other_tail_calls_stay_so_deep_tail_recursion_runs() {
        let lua = Lua::new();
        let f = untailed(
            &lua,
            "local function down(n) if n == 0 then return 'done' end return down(n - 1) end
             return down(100000)",
        );
        assert_eq!(f.call::<String>(()).expect("runs"), "done");
    }

    #[test]
    fn other_input_is_left_alone() {
        assert_eq!(without_tail_calls(b"return 1"), None);
        assert_eq!(without_tail_calls(&HEADER), None);
    }
}
