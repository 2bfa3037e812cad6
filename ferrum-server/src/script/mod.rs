//! Lua scripting: `EVAL` scripts and `FUNCTION` libraries, run by one Lua
//! 5.1 VM per server.
//!
//! The VM (`engine::Engine`) sits behind a mutex in [`Scripting`]; a script
//! runs on the calling connection's task, with the transaction gate's
//! write side held (the dispatcher takes it for commands flagged
//! `flag::EXCLUSIVE`), so nothing interleaves with it, as in Redis. What
//! other clients must see while it runs (is a script running, since when,
//! has it written, was it killed) is in [`Running`], plain atomics outside
//! the mutex: `SCRIPT KILL` and the `-BUSY` replies never wait for the VM.
//!
//! # Lua scripting (design notes)
//!
//! `script/` holds one Lua 5.1 VM per server (`mlua`, vendored Lua, feature
//! `send`), `script/engine.rs`, behind a `std::sync::Mutex` in
//! `Shared::scripting`; `cmd/script.rs` (EVAL*, SCRIPT) and
//! `cmd/function.rs` (FUNCTION, FCALL*) are its commands.
//!
//! - **Who owns the VM, and why.** A script runs on the calling connection's
//!   task, inside `tokio::task::block_in_place` (so the worker's other tasks
//!   move to another thread while it runs), holding the VM mutex and the
//!   transaction gate's *write* side. `redis.call` then needs the caller's
//!   `Ctx` (its `&mut ConnState`: db, protocol), which a closure created in
//!   `Lua::scope` can borrow for exactly one run; a dedicated Lua thread
//!   would have had to ship every call and its reply across a channel and
//!   hold the caller's state by `Arc`. `send` is what lets the `Lua` value
//!   sit in a `Mutex` shared by all workers; with the gate's write side held
//!   only one script runs at a time anyway.
//! - **Atomicity.** `EVAL`/`FCALL` rows carry `flag::EXCLUSIVE`; the
//!   dispatcher (`cmd/gate.rs`, `enter_gate`) takes the write side for them, the
//!   read side for everything else. Inside `EXEC` (which holds the write
//!   side) they just run. Expiry ticks skip while the gate is held.
//! - **Hot path.** Every other command enters the gate with `try_read`, the
//!   cost of the `read` it replaced, and checks one more flag bit. Only
//!   when `try_read` fails does it look at `script::Running` (atomics): no
//!   script: poll every 20 µs (a transaction holds the gate for
//!   microseconds); a script: poll each millisecond, off the worker, and
//!   past `busy-reply-threshold` answer `-BUSY`, except `SCRIPT KILL`,
//!   `FUNCTION KILL`, `FUNCTION STATS` and `SHUTDOWN`, which run beside the
//!   script without the gate. It never blocks on the lock: a script takes
//!   the gate a moment before `Running` marks it, and a command blocked in
//!   that moment would have waited for the whole script.
//! - **KILL and shutdown.** An instruction-count hook (every 10,000) raises
//!   once `Running` says killed or shutting down (or a library load passed
//!   500 ms); the sandbox's `pcall`/`xpcall` re-raise after either, so a
//!   loop of pcalls ends too. A script that called a write command is
//!   `UNKILLABLE` by `SCRIPT KILL`; `Server::run` marks scripting as
//!   shutting down once `SHUTDOWN` or a signal fired, which stops any
//!   script at its next hook (as `SHUTDOWN NOSAVE` does in Redis), so a
//!   busy script never holds up the exit. A plain `SHUTDOWN` while a script
//!   is busy gets `-BUSY`.
//! - **mlua's reference stack.** Every Lua value held from Rust (a
//!   `Function`, a `Table`, a `String`) takes a slot of mlua's auxiliary
//!   stack, which is bounded like Lua's own (about 8,000 slots) and panics
//!   when full. So nothing unbounded is held from Rust: the script cache
//!   keeps compiled scripts in one Lua table keyed by SHA-1, `redis.call`
//!   takes its arguments as one table and reads them one at a time, and
//!   `cmsgpack` walks tables pair by pair and decodes with an explicit
//!   stack bounded at 1,000 levels and 4,000 results; a library keeps its
//!   registration list (callbacks included) as one Lua table, so what grows
//!   with use is one slot per library, not per function.
//! - **redis.call** (`script/call.rs`, `cmd/script_call.rs`) runs `cmd::run` with `Ctx::in_script`
//!   set, after Redis's script checks (`flag::NO_SCRIPT` and blocking
//!   commands refused, `XREAD BLOCK` refused, writes from read-only
//!   scripts, `-OOM` before the first write). Replies convert per
//!   `redis.setresp` (`script/convert.rs`); the caller's db and protocol are
//!   restored after the run. The engine reaches the command layer only
//!   through `script::Caller`, which `cmd::Ctx` implements: the checks and
//!   the run are `cmd/script_call.rs`'s, the Lua side (arguments, replies,
//!   the run's `CallState`) is `script/`'s. Errors a command already counted are not
//!   counted again in `errorstats` (`Ctx::error_counted`).
//! - **Sandbox** (`script/prelude.lua`). Stock Lua 5.1 has no read-only
//!   tables, so scripts see proxies: empty tables whose metatable reads
//!   through and refuses writes; `rawset`, `setmetatable`, `getfenv` and
//!   `loadstring` are wrapped so they cannot get past one. One environment
//!   serves scripts and functions: while `FUNCTION LOAD` runs a library, it
//!   shows only the load API (`redis.register_function`, `redis.log`, ...).
//! - **Memory.** `INFO` reads `script::EngineStats`, published at start and
//!   after each change (the VM's heap from Lua's allocator count, the script
//!   bodies and SHA-1s, the libraries' code), never the VM itself, so `INFO`
//!   works from inside a script. One VM serves scripts and functions, so
//!   its heap is reported as Redis's eval VM (`used_memory_vm_eval`, alias
//!   `used_memory_lua`) and `used_memory_vm_functions` is 0. As in Redis,
//!   every 50 scripts run a 50 KB collector step, so garbage does not grow
//!   to twice the live heap; `SCRIPT FLUSH` (a fresh VM in Redis) collects
//!   until the heap stops shrinking. Scripts' `-OOM` checks add the cached
//!   scripts and library code to `used_memory`, as Redis's `used_memory`
//!   includes them.
//! - **Error positions** (`script/untail.rs`). `redis.call` is a Lua
//!   function (it packs its arguments into one table), so `return
//!   redis.call(...)` would be a Lua tail call, which drops the script's
//!   frame and the line Redis names (`on @user_script:1.`; Redis's C
//!   `redis.call` keeps it). Compiling a script or library dumps its
//!   bytecode and turns each `TAILCALL` whose callee was loaded by a
//!   `GETTABLE` of `call`/`pcall` into a `CALL` (same operands, followed by
//!   the same `RETURN`), then loads that; other tail calls stay, so deep tail
//!   recursion runs. Scripts are compiled as text only (`ChunkMode::Text`):
//!   a binary chunk from a client is refused.
//! - **MONITOR and CLIENT PAUSE.** A script's `MONITOR` line is fed before
//!   it runs, and its commands show `lua` for the address. `CLIENT PAUSE
//!   WRITE` holds `EVAL`/`EVALSHA`/`FCALL` unless the script or function
//!   declares `no-writes` (`Scripting::may_write`, which uses `try_lock` and
//!   assumes a write behind a running script); read-only scripts refuse
//!   `MAY_REPLICATE` commands (`PUBLISH`, `SPUBLISH`, `PFCOUNT`) as writes.
//!
//! **Architecture invariant:** nothing but `script/` touches the Lua VM, and
//! no code takes the VM mutex while holding a shard lock.

mod call;
mod cjson;
mod cmsgpack;
mod convert;
mod engine;
mod library;
mod libs;
mod untail;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;

pub(crate) use call::{CallState, Caller};
pub(crate) use convert::format_g;
pub(crate) use engine::{Engine, Invocation};
pub(crate) use library::{library_name, Libraries, Library};

/// The key in an error table that says its error was counted already.
const COUNTED: &str = "ignore_error_stats_update";

/// The scripting state shared by every connection.
pub(crate) struct Scripting {
    engine: Mutex<Engine>,
    /// The script running now, if any.
    pub(crate) running: Arc<Running>,
    /// What the VM holds, kept beside it so that `FUNCTION STATS` and
    /// `INFO` answer while a script runs (even from inside it).
    published: Mutex<EngineStats>,
}

/// What the VM holds, for `INFO memory` and `FUNCTION STATS`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EngineStats {
    /// `used_memory_lua`: the VM's heap.
    pub(crate) lua_bytes: usize,
    /// `used_memory_scripts_eval`: the cached scripts' bodies and SHA-1s.
    pub(crate) script_bytes: usize,
    /// `used_memory_functions`: the libraries' code.
    pub(crate) library_bytes: usize,
    /// `number_of_cached_scripts`.
    pub(crate) scripts: usize,
    /// Loaded libraries.
    pub(crate) libraries: usize,
    /// Functions they registered.
    pub(crate) functions: usize,
    /// Bytes of cached scripts and library code: memory writes made, which
    /// Redis counts in `used_memory` (its `maxmemory` check sees them).
    pub(crate) held_bytes: usize,
}

impl Scripting {
    /// A new VM with an empty script cache and no libraries.
    pub(crate) fn new() -> Scripting {
        let running = Arc::new(Running::new());
        let engine = Engine::new(Arc::clone(&running));
        Scripting {
            published: Mutex::new(engine.stats()),
            engine: Mutex::new(engine),
            running,
        }
    }

    /// Records what `engine` holds, after it changed.
    pub(crate) fn publish(&self, engine: &Engine) {
        *self.published.lock().unwrap_or_else(|p| p.into_inner()) = engine.stats();
    }

    /// What the VM held when it last changed.
    pub(crate) fn stats(&self) -> EngineStats {
        *self.published.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the `EVAL`/`EVALSHA`/`FCALL` line `args` may write (see
    /// [`Engine::may_write`]); while a script holds the VM, assume it may.
    pub(crate) fn may_write(&self, kind: Kind, args: &[Bytes]) -> bool {
        match self.engine.try_lock() {
            Ok(engine) => engine.may_write(kind, args),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().may_write(kind, args),
            Err(std::sync::TryLockError::WouldBlock) => true,
        }
    }

    /// The flags of the script `args` runs (see [`Engine::flags_of`]);
    /// `None` while a script holds the VM, or when it is not known.
    pub(crate) fn flags_of(&self, kind: Kind, args: &[Bytes]) -> Option<ScriptFlags> {
        match self.engine.try_lock() {
            Ok(engine) => engine.flags_of(kind, args),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().flags_of(kind, args),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// The VM. Scripts hold it while they run; everything else holds it
    /// for microseconds.
    pub(crate) fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What kind of script runs: it decides which `KILL` stops it and which
/// `-BUSY` text others get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `EVAL`/`EVALSHA`.
    Eval,
    /// `FCALL`.
    Function,
}

/// The running script, as other clients see it.
pub(crate) struct Running {
    base: Instant,
    /// Milliseconds since `base` when the script started, plus one; zero
    /// when nothing runs.
    started: AtomicU64,
    is_function: AtomicBool,
    wrote: AtomicBool,
    kill: AtomicBool,
    /// The server is shutting down (`SHUTDOWN NOSAVE`, SIGTERM): a running
    /// script stops at its next hook, whether it wrote or not, and so
    /// does any script started after.
    shutting_down: AtomicBool,
    /// Milliseconds since `base` after which `FUNCTION LOAD` gives up,
    /// plus one; zero when no library is loading.
    load_deadline: AtomicU64,
    /// The function's name and the command, for `FUNCTION STATS`.
    details: Mutex<Option<(String, Vec<Bytes>)>>,
}

impl Running {
    fn new() -> Running {
        Running {
            base: Instant::now(),
            started: AtomicU64::new(0),
            is_function: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            kill: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            load_deadline: AtomicU64::new(0),
            details: Mutex::new(None),
        }
    }

    fn now_ms(&self) -> u64 {
        self.base.elapsed().as_millis() as u64 + 1
    }

    /// Marks a script as started; the guard marks it ended when dropped.
    pub(crate) fn start(&self, kind: Kind, name: String, command: &[Bytes]) -> RunGuard<'_> {
        self.kill.store(false, Ordering::Relaxed);
        self.wrote.store(false, Ordering::Relaxed);
        self.is_function
            .store(kind == Kind::Function, Ordering::Relaxed);
        *self.details.lock().unwrap_or_else(|p| p.into_inner()) = Some((name, command.to_vec()));
        self.started.store(self.now_ms(), Ordering::Release);
        RunGuard(self)
    }

    /// The running script's kind and how long it has run, in ms.
    pub(crate) fn current(&self) -> Option<(Kind, u64)> {
        let started = self.started.load(Ordering::Acquire);
        (started != 0).then(|| {
            let kind = if self.is_function.load(Ordering::Relaxed) {
                Kind::Function
            } else {
                Kind::Eval
            };
            (kind, self.now_ms().saturating_sub(started))
        })
    }

    /// `FUNCTION STATS`'s `running_script`: name, command, duration.
    pub(crate) fn details(&self) -> Option<(String, Vec<Bytes>, u64)> {
        let (_, ms) = self.current()?;
        let details = self.details.lock().unwrap_or_else(|p| p.into_inner());
        details.as_ref().map(|(n, c)| (n.clone(), c.clone(), ms))
    }

    fn mark_wrote(&self) {
        self.wrote.store(true, Ordering::Relaxed);
    }

    /// `SCRIPT KILL`/`FUNCTION KILL` of a script of `kind`: Redis's reply.
    pub(crate) fn kill(&self, kind: Kind) -> Result<(), &'static str> {
        use crate::error::{BUSY_FUNCTION, BUSY_SCRIPT, NOTBUSY, UNKILLABLE};
        match self.current() {
            None => Err(NOTBUSY),
            Some((running, _)) if running != kind => Err(match running {
                Kind::Eval => BUSY_SCRIPT,
                Kind::Function => BUSY_FUNCTION,
            }),
            Some(_) if self.wrote.load(Ordering::Relaxed) => Err(UNKILLABLE),
            Some(_) => {
                self.kill.store(true, Ordering::Relaxed);
                Ok(())
            }
        }
    }

    /// Stops the running script (and any later one) at its next hook, as
    /// the server shuts down: `SHUTDOWN NOSAVE` stops even a script that
    /// wrote, as in Redis, and SIGTERM takes effect once the script
    /// reaches the hook.
    pub(crate) fn abort_for_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Relaxed);
    }

    /// The script must stop: killed, or the server is shutting down.
    /// `pcall` cannot swallow either.
    fn killed(&self) -> bool {
        self.stop_reason().is_some()
    }

    /// The server is shutting down.
    pub(crate) fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }

    /// Why a script must stop now, if it must: killed, or the server is
    /// shutting down.
    fn stop_reason(&self) -> Option<&'static str> {
        use crate::error::{KILLED, SHUTTING_DOWN};
        if self.shutting_down() {
            Some(SHUTTING_DOWN)
        } else if self.kill.load(Ordering::Relaxed) {
            Some(KILLED)
        } else {
            None
        }
    }

    /// What the VM's instruction hook raises, if anything: a kill, a
    /// shutdown, or a library's code running past its load deadline.
    fn interruption(&self) -> Option<&'static str> {
        if let Some(why) = self.stop_reason() {
            return Some(why);
        }
        let deadline = self.load_deadline.load(Ordering::Relaxed);
        (deadline != 0 && self.now_ms() > deadline).then_some(crate::error::LOAD_TIMEOUT)
    }

    /// Bounds the next library load to `ms`; `None` lifts the bound.
    fn set_load_deadline(&self, ms: Option<u64>) {
        let v = ms.map_or(0, |ms| self.now_ms() + ms);
        self.load_deadline.store(v, Ordering::Relaxed);
    }
}

/// Marks the end of a script run when dropped.
pub(crate) struct RunGuard<'a>(&'a Running);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.started.store(0, Ordering::Release);
        self.0.kill.store(false, Ordering::Relaxed);
        *self.0.details.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The flags a script declares (`#!lua flags=...`) or a function
/// registers (`flags={...}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScriptFlags {
    /// Flags were declared at all: without a shebang an `EVAL` script runs
    /// in Redis's compatibility mode (may write, `-OOM` checked per call).
    pub(crate) declared: bool,
    /// `no-writes`.
    pub(crate) no_writes: bool,
    /// `allow-oom`.
    pub(crate) allow_oom: bool,
    /// `allow-stale`.
    pub(crate) allow_stale: bool,
    /// `allow-cross-slot-keys`: in cluster mode, the script's commands may
    /// reach keys of several slots (of this node).
    pub(crate) allow_cross_slot: bool,
}

impl ScriptFlags {
    /// Sets the flag named `name`; `false` if there is no such flag.
    pub(crate) fn set(&mut self, name: &str) -> bool {
        match name {
            "no-writes" => self.no_writes = true,
            "allow-oom" => self.allow_oom = true,
            "allow-stale" => self.allow_stale = true,
            "allow-cross-slot-keys" => self.allow_cross_slot = true,
            "no-cluster" => {}
            _ => return false,
        }
        true
    }

    /// The names of the flags set, in Redis's order.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        [
            (self.no_writes, "no-writes"),
            (self.allow_oom, "allow-oom"),
            (self.allow_stale, "allow-stale"),
            (self.allow_cross_slot, "allow-cross-slot-keys"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

/// Runs `f`, which may take long (a script, a wait behind one), off the
/// tokio worker it is called on: the worker's queued tasks move to
/// another thread meanwhile, so no connection waits behind a script
/// unless the script's atomicity demands it.
pub(crate) fn off_worker<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The lower-case hex SHA-1 of `data`, as `SCRIPT LOAD` names scripts.
pub(crate) fn sha1_hex(data: &[u8]) -> String {
    sha1_smol::Sha1::from(data).digest().to_string()
}
