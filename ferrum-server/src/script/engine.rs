//! The Lua VM: its sandbox (`prelude.lua`), the `EVAL` script cache, the
//! function libraries, and running one script with a connection's context.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use ferrum_proto::Frame;
use mlua::{ChunkMode, Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};

use super::call::{acl_check, dispatch, CallState, Caller};
use super::convert::{error_message, lua_to_frame};
use super::library::{Libraries, Registration};
use super::untail::without_tail_calls;
use super::{libs, sha1_hex, Kind, Running, ScriptFlags, COUNTED};
use crate::error::CmdError;
use crate::error::{
    bad_engine_shebang, bad_flag_shebang, bad_option_shebang, err_text, registering_failed,
    COMPILE_FUNCTION, COMPILE_SCRIPT,
};

/// The chunk name of `EVAL` scripts, which error positions show
/// (`user_script:1:`), as in Redis.
const SCRIPT_CHUNK: &str = "@user_script";
/// The chunk name of function libraries.
const LIBRARY_CHUNK: &str = "@user_function";
/// Instructions between two checks for `SCRIPT KILL` and load timeouts.
const HOOK_EVERY: u32 = 10_000;
/// How long a library's code may run at `FUNCTION LOAD`, as in Redis.
const LOAD_TIMEOUT_MS: u64 = 500;
/// Scripts run between two steps of the garbage collector, as in Redis:
/// without them garbage would grow to twice what is live before Lua's own
/// collector ran.
const GC_PERIOD: u32 = 50;
/// The size of that step, in Lua's KB units. Redis steps 50; a run here
/// leaves more garbage (its `KEYS`/`ARGV` tables and the `redis.call`
/// closure of the run), so the step is larger.
const GC_STEP_KB: i32 = 200;
/// The version scripts see in `redis.REDIS_VERSION`: the one FerrumKV
/// answers `INFO` with.
const VERSION: &str = "7.0.15";
const VERSION_NUM: i64 = 0x07_00_0f;

/// One run of a script or function.
pub(crate) struct Invocation<'a> {
    /// The compiled script or the function's callback.
    pub(crate) func: Function,
    /// Its flags.
    pub(crate) flags: ScriptFlags,
    /// `KEYS`.
    pub(crate) keys: &'a [Bytes],
    /// `ARGV`.
    pub(crate) argv: &'a [Bytes],
    /// `EVAL` or `FCALL`.
    pub(crate) kind: Kind,
    /// The SHA-1 or function name, for error texts and `FUNCTION STATS`.
    pub(crate) name: String,
    /// Called as `EVAL_RO`/`FCALL_RO`.
    pub(crate) read_only: bool,
    /// The whole command, for `FUNCTION STATS`.
    pub(crate) command: &'a [Bytes],
}

/// What a script run left for its caller to apply to its connection.
pub(crate) struct Outcome {
    /// The script's reply.
    pub(crate) reply: Frame,
    /// Whether the reply is an error a command counted already in
    /// `errorstats` (`Ctx::error_counted`); `None` when the run failed
    /// before the script returned.
    pub(crate) counted: Option<bool>,
    /// The script called a read-only command: a tracking caller tracks
    /// its declared keys.
    pub(crate) read: bool,
    /// The server is shutting down: the caller's connection closes.
    pub(crate) shutting_down: bool,
}
/// The VM and everything compiled in it.
pub(crate) struct Engine {
    lua: Lua,
    /// The table shared with `prelude.lua` only.
    private: Table,
    /// The global environment scripts see (a read-only view).
    env: Table,
    running: Arc<Running>,
    /// The cached scripts' flags, by SHA-1.
    scripts: HashMap<String, ScriptFlags>,
    /// The compiled scripts, by SHA-1: a Lua table, because every function
    /// held from Rust would take a slot of mlua's reference stack (about
    /// 8,000), and the cache has no such bound.
    compiled: Table,
    script_bytes: usize,
    /// Scripts run since the last collector step.
    runs_since_gc: std::cell::Cell<u32>,
    /// The loaded function libraries.
    pub(crate) libraries: Libraries,
}

impl Engine {
    /// A VM with Redis's libraries and sandbox.
    pub(crate) fn new(running: Arc<Running>) -> Engine {
        // `prelude.lua` is ours and is tested: failing to run it is a bug
        // in this file, not input from the network.
        Self::build(running).expect("the Lua sandbox sets up")
    }

    fn build(running: Arc<Running>) -> mlua::Result<Engine> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::default(),
        )?;
        let private = lua.create_table()?;
        private.set("version", VERSION)?;
        private.set("version_num", VERSION_NUM)?;
        private.set("libraries", libs::tables(&lua)?)?;
        private.set(
            "sha1hex",
            lua.create_function(|_, s: mlua::String| Ok(sha1_hex(&s.as_bytes())))?,
        )?;
        private.set("handler", lua.create_function(error_handler)?)?;
        let watch = Arc::clone(&running);
        private.set(
            "killed",
            lua.create_function(move |_, ()| Ok(watch.killed()))?,
        )?;
        lua.load(include_str!("prelude.lua"))
            .set_name("=prelude")
            .call::<()>(private.clone())?;
        let env: Table = private.get("env")?;
        let hook = Arc::clone(&running);
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| match hook.interruption() {
                Some(why) => Err(mlua::Error::runtime(why)),
                None => Ok(VmState::Continue),
            },
        )?;
        Ok(Engine {
            compiled: lua.create_table()?,
            lua,
            private,
            env,
            running,
            scripts: HashMap::new(),
            script_bytes: 0,
            runs_since_gc: std::cell::Cell::new(0),
            libraries: Libraries::default(),
        })
    }

    /// Compiles `body` into the cache (`EVAL`, `SCRIPT LOAD`) unless it is
    /// there already; returns its SHA-1.
    pub(crate) fn load_script(&mut self, body: &[u8]) -> Result<String, CmdError> {
        let sha = sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let (flags, code) = script_shebang(body)?;
        let func = self
            .compile(&code, SCRIPT_CHUNK)
            .map_err(|e| compile_error(COMPILE_SCRIPT, &e))?;
        self.compiled
            .raw_set(sha.as_str(), func)
            .map_err(|e| compile_error(COMPILE_SCRIPT, &e))?;
        self.script_bytes += body.len() + sha.len();
        self.scripts.insert(sha.clone(), flags);
        Ok(sha)
    }

    /// The cached script of this SHA-1 (any case), and its flags.
    pub(crate) fn cached(&self, sha: &[u8]) -> Option<(Function, ScriptFlags)> {
        let sha = std::str::from_utf8(sha).ok()?.to_ascii_lowercase();
        let flags = *self.scripts.get(&sha)?;
        let func = self.compiled.raw_get::<Function>(sha.as_str()).ok()?;
        Some((func, flags))
    }

    /// Whether running `args` (an `EVAL`, `EVALSHA` or `FCALL` line) may
    /// write, as Redis 7.0 decides it for `CLIENT PAUSE WRITE`: unless the
    /// script or function declares `no-writes`. A script not cached yet is
    /// judged by its shebang; an unknown SHA-1 or function may write.
    pub(crate) fn may_write(&self, kind: Kind, args: &[Bytes]) -> bool {
        !self
            .flags_of(kind, args)
            .is_some_and(|f| f.declared && f.no_writes)
    }

    /// The flags of the script or function the `EVAL`/`EVALSHA`/`FCALL`
    /// line `args` runs, if it is known; a function's always count as
    /// declared (functions have no compatibility mode).
    pub(crate) fn flags_of(&self, kind: Kind, args: &[Bytes]) -> Option<ScriptFlags> {
        let name = args.get(1)?;
        match kind {
            Kind::Function => self.libraries.function(name).map(|(reg, _)| ScriptFlags {
                declared: true,
                ..reg.flags
            }),
            Kind::Eval if args[0].len() == 4 => {
                let cached = self.scripts.get(&sha1_hex(name)).copied();
                cached.or_else(|| script_shebang(name).ok().map(|(flags, _)| flags))
            }
            Kind::Eval => std::str::from_utf8(name)
                .ok()
                .and_then(|sha| self.scripts.get(&sha.to_ascii_lowercase()).copied()),
        }
    }

    /// Whether the script of this SHA-1 (any case) is cached.
    pub(crate) fn is_cached(&self, sha: &[u8]) -> bool {
        std::str::from_utf8(sha).is_ok_and(|s| self.scripts.contains_key(&s.to_ascii_lowercase()))
    }

    /// `SCRIPT FLUSH`: empties the cache and collects what it held. Redis
    /// starts a new VM here; collecting until the heap stops shrinking
    /// comes close (each cycle also halves Lua's string table, which a
    /// script with many strings left large).
    pub(crate) fn flush_scripts(&mut self) {
        self.scripts.clear();
        let _ = self.compiled.clear();
        self.script_bytes = 0;
        let mut used = self.lua.used_memory();
        for _ in 0..16 {
            let _ = self.lua.gc_collect();
            let now = self.lua.used_memory();
            if now >= used {
                break;
            }
            used = now;
        }
    }

    /// What the VM holds now.
    pub(crate) fn stats(&self) -> super::EngineStats {
        let (libraries, functions) = self.libraries.counts();
        let library_bytes = self.libraries.code_bytes();
        super::EngineStats {
            lua_bytes: self.lua.used_memory(),
            script_bytes: self.script_bytes,
            library_bytes,
            scripts: self.scripts.len(),
            libraries,
            functions,
            held_bytes: self.script_bytes + library_bytes,
        }
    }

    /// Compiles `code` as chunk `chunk` in the sandbox, its tail calls
    /// made calls (see `untail.rs`) so that errors keep their line.
    fn compile(&self, code: &[u8], chunk: &str) -> mlua::Result<Function> {
        let func = self
            .lua
            .load(code)
            .set_name(chunk)
            .set_mode(ChunkMode::Text)
            .into_function()?;
        let load = |bytes: &[u8], mode| {
            self.lua
                .load(bytes)
                .set_name(chunk)
                .set_mode(mode)
                .set_environment(self.env.clone())
                .into_function()
        };
        match without_tail_calls(&func.dump(false)) {
            Some(untailed) => load(&untailed, ChunkMode::Binary),
            None => load(code, ChunkMode::Text),
        }
    }

    /// Compiles a library's code and runs it to collect what it registers
    /// (`FUNCTION LOAD`), within the load timeout: the registrations, and
    /// the Lua list they came from (which holds their callbacks).
    pub(crate) fn register(&self, code: &[u8]) -> Result<(Vec<Registration>, Table), CmdError> {
        let func = self
            .compile(&uncommented_shebang(code), LIBRARY_CHUNK)
            .map_err(|e| compile_error(COMPILE_FUNCTION, &e))?;
        let load: Function = self.private.get("load").map_err(internal)?;
        self.running.set_load_deadline(Some(LOAD_TIMEOUT_MS));
        let result = load.call::<(bool, Value)>(func);
        self.running.set_load_deadline(None);
        match result.map_err(internal)? {
            (true, Value::Table(list)) => {
                let functions = Registration::all(&list).map_err(internal)?;
                Ok((functions, list))
            }
            (_, e) => Err(CmdError::msg(registering_failed(
                error_text(&e).trim_start_matches("ERR "),
            ))),
        }
    }

    /// Runs a script with `caller` as the client its `redis.call`s run
    /// as. The caller holds the transaction gate's write side, and sets
    /// up and restores its own connection's state around the run.
    pub(crate) fn run(&self, caller: &mut dyn Caller, inv: Invocation<'_>) -> Outcome {
        let _running = self.running.start(inv.kind, inv.name.clone(), inv.command);
        let mut st = CallState {
            read_only: inv.read_only || inv.flags.no_writes,
            allow_oom: inv.flags.allow_oom,
            wrote: false,
            read: false,
            resp3: false,
            running: &self.running,
            slot: inv.keys.first().map(|k| crate::cluster::slot::key_slot(k)),
            cross_slot_ok: !inv.flags.declared || inv.flags.allow_cross_slot,
        };
        let outcome = super::off_worker(|| self.call(caller, &mut st, &inv));
        let read = st.read;
        let _ = self.private.raw_set("dispatch", Value::Nil);
        self.collect_now_and_then();
        let (reply, counted) = match outcome {
            Ok((frame, counted)) => (frame, Some(counted)),
            Err(e) => (Frame::Error(Bytes::from(err_text(error_message(&e)))), None),
        };
        Outcome {
            reply,
            counted,
            read,
            shutting_down: self.running.shutting_down(),
        }
    }

    /// Every [`GC_PERIOD`] runs, a collector step of [`GC_STEP_KB`].
    fn collect_now_and_then(&self) {
        let runs = self.runs_since_gc.get() + 1;
        if runs < GC_PERIOD {
            self.runs_since_gc.set(runs);
            return;
        }
        self.runs_since_gc.set(0);
        let _ = self.lua.gc_step_kbytes(GC_STEP_KB);
    }

    fn call(
        &self,
        caller: &mut dyn Caller,
        st: &mut CallState<'_>,
        inv: &Invocation<'_>,
    ) -> mlua::Result<(Frame, bool)> {
        let keys = self.strings(inv.keys)?;
        let argv = self.strings(inv.argv)?;
        let run: Function = self.private.get("run")?;
        let private = &self.private;
        self.lua.scope(|scope| {
            let f = scope.create_function_mut(
                |lua, (n, args, check): (usize, Table, Option<bool>)| {
                    if check == Some(true) {
                        return acl_check(lua, caller, (n, args));
                    }
                    st.resp3 = private.raw_get::<i64>("resp").unwrap_or(2) == 3;
                    dispatch(lua, caller, st, (n, args))
                },
            )?;
            private.raw_set("dispatch", f)?;
            let (ok, value) = run.call::<(bool, Value)>((
                inv.func.clone(),
                keys,
                argv,
                inv.kind == Kind::Function,
            ))?;
            let resp3 = private.raw_get::<i64>("resp").unwrap_or(2) == 3;
            // An error a command counted already is not counted again,
            // whether the script failed with it or returned it (the
            // table `redis.pcall` gave).
            let counted = match &value {
                Value::Table(t) => t.raw_get::<bool>(COUNTED).unwrap_or(false),
                _ => false,
            };
            if ok {
                return Ok((lua_to_frame(&value, resp3), counted));
            }
            Ok((failure(&value, &inv.name), counted))
        })
    }

    fn strings(&self, items: &[Bytes]) -> mlua::Result<Table> {
        let t = self.lua.create_table_with_capacity(items.len(), 0)?;
        for (i, item) in items.iter().enumerate() {
            t.raw_set(i + 1, self.lua.create_string(item)?)?;
        }
        Ok(t)
    }
}

/// The error table the prelude's `xpcall` gets for an error: Redis's
/// `{err=..., source=..., line=...}`, the position being that of the
/// innermost frame of the script's own code.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Table> {
    let t = match err {
        Value::Table(t) => t,
        other => {
            let t = lua.create_table()?;
            t.raw_set("err", err_text(error_text(&other)))?;
            t
        }
    };
    for level in 1..32 {
        let Some(found) = lua.inspect_stack(level, |d| {
            let source = d.source().source.map(|s| s.into_owned());
            (source, d.current_line())
        }) else {
            break;
        };
        if let (Some(source), Some(line)) = found {
            if source == SCRIPT_CHUNK || source == LIBRARY_CHUNK {
                t.raw_set("source", source)?;
                t.raw_set("line", line)?;
                break;
            }
        }
    }
    Ok(t)
}

/// The text of any error value.
fn error_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Error(e) => error_message(e),
        Value::Table(t) => t
            .raw_get::<mlua::String>("err")
            .map(|s| s.to_string_lossy())
            .unwrap_or_else(|_| "execution failure".to_owned()),
        Value::Nil => "execution failure".to_owned(),
        other => format!("{other:?}"),
    }
}

/// The reply to a script that failed: the error's text, then where, as
/// Redis words it (`... script: <sha>, on @user_script:1.`).
fn failure(value: &Value, name: &str) -> Frame {
    let mut text = error_text(value);
    if let Value::Table(t) = value {
        if let (Ok(source), Ok(line)) = (
            t.raw_get::<mlua::String>("source"),
            t.raw_get::<i64>("line"),
        ) {
            text.push_str(&format!(
                " script: {name}, on {}:{line}.",
                source.to_string_lossy()
            ));
        }
    }
    Frame::Error(Bytes::from(text.replace(['\r', '\n'], " ")))
}

fn compile_error(what: &str, e: &mlua::Error) -> CmdError {
    let msg = match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => error_message(other),
    };
    CmdError::msg(err_text(format_args!("{what}: {msg}")))
}

fn internal(e: mlua::Error) -> CmdError {
    CmdError::msg(err_text(error_message(&e)))
}

/// An `EVAL` script's flags from its `#!lua flags=...` line, and the code
/// to compile (the shebang turned into a comment, so lines keep their
/// numbers). Without a shebang, the compatibility flags.
fn script_shebang(body: &[u8]) -> Result<(ScriptFlags, Vec<u8>), CmdError> {
    if !body.starts_with(b"#!") {
        return Ok((ScriptFlags::default(), body.to_vec()));
    }
    let line_end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    let line = String::from_utf8_lossy(&body[2..line_end]).into_owned();
    let mut parts = line.split(' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or("");
    if engine != "lua" {
        return Err(CmdError::msg(bad_engine_shebang(engine)));
    }
    let mut flags = ScriptFlags {
        declared: true,
        ..ScriptFlags::default()
    };
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(CmdError::msg(bad_option_shebang(part)));
        };
        for name in list.split(',').filter(|f| !f.is_empty()) {
            if !flags.set(name) {
                return Err(CmdError::msg(bad_flag_shebang(name)));
            }
        }
    }
    Ok((flags, uncommented_shebang(body)))
}

/// The code with its `#!` line turned into a Lua comment, which keeps
/// line numbers as they are.
fn uncommented_shebang(code: &[u8]) -> Vec<u8> {
    let mut code = code.to_vec();
    if code.starts_with(b"#!") {
        code[..2].copy_from_slice(b"--");
    }
    code
}
