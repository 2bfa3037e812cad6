//! Commands: the handlers of the command table's rows (the table itself,
//! what each command is, is `crate::command`), and the dispatcher that
//! checks arity, authentication, transactions and memory before a handler
//! runs.
//!
//! A handler receives the whole argument vector (name first) and returns the
//! reply frame; it never writes to the socket, so the connection can flush
//! the replies to a pipeline together. Each handler parses and validates all
//! of its arguments before it touches the store, so a bad argument changes
//! nothing.
//!
//! Two kinds of command need more than one reply frame: a blocking pop with
//! nothing to pop asks the connection to block ([`Ctx::block`]), and
//! `SUBSCRIBE a b c` confirms each channel separately ([`Ctx::more`]).
//! [`execute`] folds both into its [`Reply`].

pub(crate) mod acl;
mod args;
mod bitops;
mod blocking;
pub(crate) mod cluster;
mod coll;
mod connection;
mod digest;
mod dump;
mod expire;
mod function;
mod gate;
mod geo;
mod hash;
mod hll;
mod info;
mod keys;
mod latency;
mod list;
mod memory;
mod migrate;
pub(crate) mod notify;
pub(crate) mod persist;
mod propagate;
mod pubsub;
mod replication;
pub(crate) mod route;
mod script;
mod script_call;
mod server;
mod set;
mod slowlog;
mod sort;
mod stream;
mod string;
mod table;
mod tx;
mod xgroup;
mod zrange;
mod zset;
mod zstore;

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis, Store, ValueKind};

use tokio::time::Instant;

use crate::client::ConnState;
use crate::command::{
    arity_fits, category, flag, getkeys, lookup, CommandSpec, COMMANDS, SUBCOMMANDS,
};
use crate::error::{self, CmdError, CmdResult};
use crate::parse;
use crate::shared::Shared;

pub(crate) use blocking::{retry as retry_blocked, unblocked_reply, BlockOp, BlockSpec};
pub(crate) use server::policy_of;

/// A command handler: the arguments include the command name at index 0.
pub(crate) type Handler = fn(&mut Ctx<'_>, &[Bytes]) -> CmdResult;

/// What a handler can reach: the server's shared state, this connection's
/// state, and the time the command started.
pub(crate) struct Ctx<'a> {
    /// State shared by every connection.
    pub(crate) shared: &'a Shared,
    /// This connection.
    pub(crate) conn: &'a mut ConnState,
    /// The one clock reading for this command.
    pub(crate) now: Millis,
    /// When the command's timing started: the same reading as `now`, then
    /// the end of the previous command inside `EXEC`.
    pub(crate) started: Instant,
    /// Whether a blocking command may block; off inside `EXEC`, where it
    /// replies at once as Redis does.
    pub(crate) may_block: bool,
    /// Set by a blocking command that found nothing to pop: the connection
    /// blocks the client instead of sending the handler's reply.
    pub(crate) block: Option<BlockSpec>,
    /// Replies that follow the handler's own, in order (`SUBSCRIBE a b`
    /// confirms each channel with a frame of its own).
    pub(crate) more: Vec<Frame>,
    /// How many changes a write made, for `rdb_changes_since_last_save`,
    /// when the handler knows better than "one per successful write"
    /// (`SETBIT` of a bit already set changes nothing).
    pub(crate) dirty: Option<u64>,
    /// The command runs from a script (`redis.call`): the script, not
    /// [`run`], decides about `-OOM`.
    pub(crate) in_script: bool,
    /// The command runs inside `EXEC` (`BGSAVE` waits for its end).
    pub(crate) in_exec: bool,
    /// The handler's error reply was counted in `INFO errorstats` already
    /// (a script failing with its command's error).
    pub(crate) error_counted: bool,
    /// Keyspace events the handler raised itself (see [`Ctx::raise`]),
    /// published after the ones named from the command and its reply.
    pub(crate) raised: Vec<(u32, &'static str, Bytes)>,
    /// In cluster mode, the [`generation`](crate::cluster::Cluster::generation)
    /// at which the command's keys were routed, before it entered the
    /// transaction gate (see [`route::recheck`]).
    pub(crate) routed_at: Option<u64>,
}

impl<'a> Ctx<'a> {
    /// A context for one command run at `now`.
    pub(crate) fn new(shared: &'a Shared, conn: &'a mut ConnState, now: Millis) -> Ctx<'a> {
        Ctx::at(shared, conn, (now, Instant::now()))
    }

    /// A context for one command, from one clock reading (see
    /// `Clock::reading`).
    pub(crate) fn at(
        shared: &'a Shared,
        conn: &'a mut ConnState,
        (now, started): (Millis, Instant),
    ) -> Ctx<'a> {
        Ctx {
            shared,
            conn,
            now,
            started,
            may_block: true,
            block: None,
            more: Vec::new(),
            dirty: None,
            in_script: false,
            in_exec: false,
            error_counted: false,
            raised: Vec::new(),
            routed_at: None,
        }
    }

    /// The keyspace.
    pub(crate) fn store(&self) -> &Store {
        &self.shared.store
    }

    /// The selected database.
    pub(crate) fn db(&self) -> usize {
        self.conn.db
    }

    /// Raises keyspace event `event` of `class` on `key` when the command
    /// is done: for what neither the command's name nor its reply tells
    /// (XREADGROUP creating its consumer, XADD trimming). Nothing is kept
    /// while the class is off.
    pub(crate) fn raise(&mut self, class: u32, event: &'static str, key: &Bytes) {
        if self.shared.notify.flags() & class != 0 {
            self.raised.push((class, event, key.clone()));
        }
    }
}

/// What the connection does after a command.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Send this reply.
    One(Frame),
    /// Send these replies, in order.
    Many(Vec<Frame>),
    /// Block the client until it can be served or times out; commands
    /// pipelined after this one wait too, as in Redis.
    Block(BlockSpec),
    /// `CLIENT PAUSE` holds this command: run it again once the pause
    /// ends; commands pipelined after it wait too.
    Paused,
}

/// The reply to a container command's `HELP`: Redis's lines, each a status
/// reply.
pub(crate) fn help_reply(lines: &[&'static str]) -> CmdResult {
    Ok(Frame::Array(
        lines.iter().map(|l| Frame::simple(l)).collect(),
    ))
}

/// Runs one command and returns its reply. Errors become error frames here;
/// nothing in a command can close the connection except `QUIT`, which sets
/// `conn.closing`.
pub(crate) fn execute(shared: &Shared, conn: &mut ConnState, args: &[Bytes]) -> Reply {
    // In a pipeline the previous command's end is this one's start: one
    // clock read a command (see `ConnState::clock_at`).
    let reading = match conn.clock_at.take() {
        Some(at) => shared.clock.reading_at(at),
        None => shared.clock.reading(),
    };
    let mut ctx = Ctx::at(shared, conn, reading);
    let frame = match prepare(&mut ctx, args) {
        // Transaction control runs outside the gate: EXEC takes its write
        // side. So does WAIT, which waits for replicas while others write.
        Ok(Prepared::Run(spec)) if spec.has(flag::NO_QUEUE) || spec.name == "wait" => {
            run(&mut ctx, spec, args)
        }
        Ok(Prepared::Run(spec)) => match gate::enter_gate(shared, spec, args) {
            Ok(_gate) => match route::recheck(&ctx, spec, args) {
                Ok(()) => run(&mut ctx, spec, args),
                Err(e) => refused(&mut ctx, args, e),
            },
            Err(e) => refused(&mut ctx, args, e),
        },
        Ok(Prepared::Reply(frame)) => frame,
        Ok(Prepared::Paused) => return Reply::Paused,
        Err(e) => refused(&mut ctx, args, e),
    };

    // `ASKING` holds for the next command only, or for a whole transaction.
    if ctx.conn.asking && ctx.conn.multi.is_none() && !parse::is(&args[0], "asking") {
        ctx.conn.asking = false;
    }
    // BCAST invalidations go out once per top-level command (EXEC included).
    shared.tracking.flush(shared);
    if let Some(mut spec) = ctx.block.take() {
        spec.command = args.to_vec();
        return Reply::Block(spec);
    }

    if ctx.more.is_empty() {
        return Reply::One(frame);
    }
    let mut frames = Vec::with_capacity(1 + ctx.more.len());
    frames.push(frame);
    frames.append(&mut ctx.more);
    Reply::Many(frames)
}

/// The reply to a command refused before it ran, counted as Redis counts
/// rejections; inside `MULTI` the transaction will abort.
fn refused(ctx: &mut Ctx<'_>, args: &[Bytes], e: CmdError) -> Frame {
    if ctx.conn.multi.is_some() {
        ctx.conn.multi_failed = true;
    }
    if let Some(spec) = ctx.shared.command(&args[0]) {
        let sub = category::subcommand_of_call(spec, args);
        ctx.shared.stats.record_rejected(spec, sub);
    }
    let frame = e.into_frame();
    if let Frame::Error(text) = &frame {
        ctx.shared.stats.record_error(text);
    }
    frame
}

enum Prepared {
    Run(&'static CommandSpec),
    Reply(Frame),
    Paused,
}

/// Everything that happens before a command runs: lookup, arity, auth, ACL
/// permissions, and queueing inside `MULTI`.
fn prepare(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Prepared, CmdError> {
    let Some(spec) = ctx.shared.command(&args[0]) else {
        return Err(unknown_command(args));
    };
    if !spec.arity_ok(args.len()) {
        return Err(CmdError::Arity(spec.name.to_owned()));
    }
    // A subcommand's own arity, checked before it runs as Redis does (so
    // a call that misses arguments is rejected, not failed).
    let sub = category::subcommand_of_call(spec, args).map(|i| &SUBCOMMANDS[i]);
    if let Some(sub) = sub {
        if !arity_fits(sub.arity, args.len()) {
            return Err(CmdError::Arity(sub.full_name.to_owned()));
        }
    }
    if !ctx.conn.authenticated && !spec.has(flag::NO_AUTH) && ctx.shared.requires_auth() {
        return Err(CmdError::msg(error::NOAUTH));
    }
    acl::permit(ctx, spec, args, acl::context_of(ctx)).map_err(|r| acl::noperm(&r))?;
    // One branch on an `Option` that is `None` outside cluster mode.
    if let Some(cl) = &ctx.shared.cluster {
        route::check_command(ctx, cl, spec, args)?;
    }
    if ctx.conn.subs.restricts(ctx.conn.protocol) && !spec.has(flag::SUBSCRIBED_OK) {
        return Err(CmdError::msg(error::not_in_subscribed_context(spec.name)));
    }
    // A subcommand's own flag decides (`OBJECT HELP` runs, `OBJECT
    // ENCODING` waits).
    let loading_ok = sub.map_or(spec.flags, |s| s.flags) & flag::LOADING != 0;
    if !loading_ok && ctx.shared.persistence.loading.active() {
        return Err(CmdError::msg(error::LOADING));
    }
    if ctx.shared.repl.is_replica() && !ctx.conn.primary_link {
        let flags = call_flags(ctx, spec, sub, args);
        if refused_stale(ctx, spec, flags) {
            if spec.name == "exec" {
                ctx.conn.multi = None;
                ctx.conn.watched.clear();
                return Err(CmdError::msg(error::execabort_because(error::MASTERDOWN)));
            }
            return Err(CmdError::msg(error::MASTERDOWN));
        }
        if flags & flag::WRITE != 0 && read_only_replica(ctx) {
            return Err(CmdError::msg(error::READONLY));
        }
    }
    if spec.has(flag::WRITE) {
        if let Some(refusal) = ctx.shared.refuses_writes() {
            return Err(CmdError::msg(refusal));
        }
    }
    if ctx.conn.multi.is_some() {
        // A transaction's commands meet a busy script as they would
        // outside one: refused, so the transaction aborts.
        if spec.name == "exec" || !spec.has(flag::NO_QUEUE) {
            if let Some(busy) = gate::busy_text(ctx.shared) {
                if spec.name == "exec" {
                    ctx.conn.multi = None;
                    ctx.conn.watched.clear();
                    return Err(CmdError::msg(error::execabort_because(busy)));
                }
                return Err(CmdError::msg(busy));
            }
        }
        if spec.has(flag::NO_MULTI) {
            return Err(CmdError::msg(error::NOT_IN_MULTI));
        }
        if !spec.has(flag::NO_QUEUE) {
            // Redis refuses a command that may grow memory when over
            // `maxmemory` at queueing time too, which aborts the EXEC.
            if spec.has(flag::DENYOOM) {
                notify::reserve_for_write(ctx.shared, ctx.now)?;
            }
            ctx.conn.queue(args);
            return Ok(Prepared::Reply(Frame::simple("QUEUED")));
        }
    }
    if ctx.shared.pause.holds(|| pausable_write(ctx, spec, args)) {
        return Ok(Prepared::Paused);
    }
    Ok(Prepared::Run(spec))
}

/// The flags a call runs under, as Redis's `getCommandFlags` gives them: a
/// subcommand's own, and for a script or function with declared flags,
/// `write` unless `no-writes` and `stale` only with `allow-stale` (an
/// `EVAL` without a shebang is never run on a stale replica).
fn call_flags(
    ctx: &Ctx<'_>,
    spec: &CommandSpec,
    sub: Option<&category::SubcommandSpec>,
    args: &[Bytes],
) -> u32 {
    use crate::script::Kind;
    let flags = sub.map_or(spec.flags, |s| s.flags);
    let kind = match spec.name {
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" => Kind::Eval,
        "fcall" | "fcall_ro" => Kind::Function,
        _ => return flags,
    };
    match ctx.shared.scripting.flags_of(kind, args) {
        Some(f) if f.declared => {
            let write = if f.no_writes { 0 } else { flag::WRITE };
            let stale = if f.allow_stale { flag::STALE } else { 0 };
            (flags & !flag::STALE) | write | stale
        }
        _ => flags & !flag::STALE,
    }
}

/// Whether a replica whose link is down refuses a call with `flags` (or
/// an `EXEC` of a queue holding such a command): all but the commands
/// flagged `stale` while `replica-serve-stale-data` is `no`.
fn refused_stale(ctx: &Ctx<'_>, spec: &CommandSpec, flags: u32) -> bool {
    if !serving_stale_refused(ctx.shared) {
        return false;
    }
    if spec.name == "exec" {
        return ctx.conn.multi.as_ref().is_some_and(|queue| {
            queue.iter().any(|args| {
                ctx.shared
                    .command(&args[0])
                    .is_some_and(|s| !s.has(flag::STALE))
            })
        });
    }
    flags & flag::STALE == 0
}

/// Whether a replica's link to its primary is down and
/// `replica-serve-stale-data no` asks it to refuse what is not `stale`.
pub(crate) fn serving_stale_refused(shared: &Shared) -> bool {
    shared.repl.is_replica()
        && shared
            .repl
            .following()
            .is_some_and(|f| f.status() != crate::replication::LinkStatus::Connected)
        && shared.config().stored_value("replica-serve-stale-data") == "no"
}

/// Whether this replica refuses its clients' writes (`replica-read-only`).
pub(crate) fn read_only_replica(ctx: &Ctx<'_>) -> bool {
    ctx.shared.config().stored_value("replica-read-only") == "yes"
}

/// Commands Redis flags `MAY_REPLICATE` (beside scripts): `CLIENT PAUSE
/// WRITE` holds them and read-only scripts may not call them, as writes.
pub(crate) fn may_replicate(spec: &CommandSpec) -> bool {
    matches!(spec.name, "publish" | "spublish" | "pfcount")
}

/// Whether `CLIENT PAUSE WRITE` holds the command line `args`: a write, a
/// command that may replicate, a script that may write (not `_RO`, not
/// declared `no-writes`), or an `EXEC` of a queue holding one of these.
fn pausable_write(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes]) -> bool {
    let writes = |spec: &CommandSpec, args: &[Bytes]| {
        use crate::script::Kind;
        match spec.name {
            "eval" | "evalsha" => ctx.shared.scripting.may_write(Kind::Eval, args),
            "fcall" => ctx.shared.scripting.may_write(Kind::Function, args),
            _ => spec.has(flag::WRITE) || may_replicate(spec),
        }
    };
    if spec.name != "exec" {
        return writes(spec, args);
    }
    ctx.conn.multi.as_ref().is_some_and(|queued| {
        queued.iter().any(|args| {
            ctx.shared
                .command(&args[0])
                .is_some_and(|s| writes(s, args))
        })
    })
}

/// The command line as `MONITOR` and `SLOWLOG` show it: the credentials
/// of `MIGRATE`, `AUTH`, `HELLO`, `ACL SETUSER` and `CONFIG SET` replaced
/// by `(redacted)`, as Redis's `redactClientCommandArgument` does.
fn shown<'a>(spec: &CommandSpec, args: &'a [Bytes]) -> std::borrow::Cow<'a, [Bytes]> {
    let sub = |name: &str| args.get(1).is_some_and(|s| parse::is(s, name));
    let secrets: Vec<usize> = match spec.name {
        "migrate" => migrate::secrets(args),
        // `AUTH [username] password`; a longer line, a syntax error, is
        // shown as it came, as Redis does.
        "auth" if args.len() <= 3 => (1..args.len()).collect(),
        "hello" => connection::hello_secrets(args),
        // The user's name and every rule.
        "acl" if sub("setuser") => (2..args.len()).collect(),
        // The values of the parameters that hold passwords.
        "config" if sub("set") && args.len() % 2 == 0 => (2..args.len())
            .step_by(2)
            .filter(|&i| crate::Config::is_sensitive(&args[i]))
            .map(|i| i + 1)
            .collect(),
        _ => return std::borrow::Cow::Borrowed(args),
    };
    if secrets.is_empty() {
        return std::borrow::Cow::Borrowed(args);
    }
    let mut shown = args.to_vec();
    for i in secrets {
        shown[i] = Bytes::from_static(b"(redacted)");
    }
    std::borrow::Cow::Owned(shown)
}

/// Sends the command's line to the monitors; a script's commands show
/// `lua` where a client's address would be, as in Redis.
fn feed_monitors(ctx: &Ctx<'_>, args: &[Bytes]) {
    let addr = if ctx.in_script {
        "lua".to_owned()
    } else {
        ctx.conn.handle.addr.to_string()
    };
    let micros = ctx.shared.clock.now_micros();
    let limit = ctx.shared.config().client_output_buffer_limit.pubsub;
    ctx.shared
        .monitors
        .feed(micros, limit, ctx.db(), &addr, args);
}

/// Runs a command whose arguments passed [`prepare`]; `EXEC` calls this for
/// each queued command while it holds the transaction gate.
pub(crate) fn run(ctx: &mut Ctx<'_>, spec: &'static CommandSpec, args: &[Bytes]) -> Frame {
    let sub = args.get(1).filter(|_| spec.has(flag::CONTAINER));
    ctx.conn.handle.touch(spec.index(), sub, ctx.started);
    let sub_index = sub.and_then(|_| category::subcommand_of_call(spec, args));
    // As Redis, evict before every command while over `maxmemory`, and
    // refuse those that may grow it when nothing more can go; each victim
    // raises its event and invalidation, as after a write. A script or a
    // transaction was let in whole: its commands are not refused one by
    // one.
    let top_level = !(ctx.in_script || ctx.in_exec);
    // No replica attaches while a command holds the gate (a full sync
    // takes its write side), so one load serves the whole command.
    let replicating = ctx.shared.repl.active();
    if top_level {
        let fits = notify::reserve_for_write(ctx.shared, ctx.now);
        if let (Err(e), true) = (fits, spec.has(flag::DENYOOM)) {
            let frame = CmdError::from(e).into_frame();
            ctx.shared.stats.record_rejected(spec, sub_index);
            if let Frame::Error(text) = &frame {
                ctx.shared.stats.record_error(text);
            }
            return frame;
        }
    }
    // Evictions go down the stream on their own, ahead of the command.
    if replicating && top_level {
        flush_stream(ctx.shared, false);
    }
    ctx.dirty = None;
    ctx.error_counted = false;
    // One relaxed load when notifications are off (the default).
    let notify = ctx.shared.notify.flags();
    let tracking = ctx.shared.tracking.active();
    let watch = ((notify != 0 || tracking)
        && spec.first_key != 0
        && !spec.has(flag::SIGNALS_KEYS)
        && (spec.has(flag::WRITE) || tracking || notify & crate::notify::class::EXPIRED != 0))
        .then(|| notify::Watch::before(ctx, spec, args));
    // MONITOR shows what ran, but neither administrative commands nor
    // credentials (as Redis). A script's line comes before the lines of
    // the commands it calls.
    let monitored = ctx.shared.monitors.active() && !spec.has(flag::ADMIN);
    let is_script = spec.has(flag::EXCLUSIVE);
    if monitored && is_script {
        feed_monitors(ctx, &shown(spec, args));
    }
    let reply = table::handler(spec)(ctx, args).unwrap_or_else(CmdError::into_frame);
    if replicating {
        propagate(ctx, spec, sub_index, args, &reply);
    }
    if let Some(watch) = watch {
        watch.after(ctx, spec, args, &reply);
    }
    for (class, event, key) in std::mem::take(&mut ctx.raised) {
        notify::emit(ctx.shared, class, event, ctx.db(), &key);
    }
    if tracking {
        track(ctx, spec, args, &reply);
    }
    if monitored && !is_script {
        feed_monitors(ctx, &shown(spec, args));
    }
    if spec.has(flag::WRITE) {
        let changes = match (&reply, ctx.dirty) {
            (_, Some(n)) => n,
            (Frame::Error(_), None) => 0,
            (_, None) => 1,
        };
        ctx.shared
            .stats
            .dirty
            .fetch_add(changes, std::sync::atomic::Ordering::Relaxed);
        // A transaction evicts once it is done (see `tx::exec`).
        if !ctx.in_exec {
            notify::enforce_maxmemory(ctx.shared, ctx.now);
        }
        if !ctx.shared.blocking.is_idle() {
            wake_written(ctx, spec, args);
        }
    }
    // A call's commands go down the stream while it still holds the gate
    // (`EXEC` sends its own, before it lets go of the gate).
    if replicating && top_level && !ctx.in_exec {
        flush_stream(ctx.shared, !touches_arbitrary_keys(spec));
    }
    // The end of this command starts the next one's timing inside `EXEC`.
    let ended = Instant::now();
    let usec = ended.duration_since(ctx.started).as_micros() as u64;
    ctx.started = ended;
    ctx.conn.clock_at = Some(ended);
    ctx.shared.stats.record_call(spec, sub_index, usec);
    if let Some(sub) = sub {
        let name = format!(
            "{}|{}",
            spec.name,
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        );
        ctx.shared.latency.record_subcommand(name, usec);
    }
    let event = if spec.has(flag::FAST) {
        "fast-command"
    } else {
        "command"
    };
    let now_s = ctx.now.0 / 1000;
    ctx.shared.latency.sample(event, usec / 1000, now_s);
    if let Frame::Error(text) = &reply {
        ctx.shared.stats.record_failed(spec, sub_index);
        if !std::mem::take(&mut ctx.error_counted) {
            ctx.shared.stats.record_error(text);
        }
    }
    // EXEC is not logged itself: the commands it ran are, one by one.
    if ctx.shared.slowlog.wants(usec) && spec.name != "exec" {
        ctx.shared
            .slowlog
            .record(&ctx.conn.handle, ctx.now, &shown(spec, args), usec);
    }
    reply
}

/// Adds what a command that ran changed to the replication stream: first
/// the keys it found expired, then its effects (see
/// [`propagate::effects`]).
/// Commands that meet keys they did not name (Redis's
/// `CMD_TOUCHES_ARBITRARY_KEYS`): the keys they expire go down the stream
/// one by one, not as a transaction.
fn touches_arbitrary_keys(spec: &CommandSpec) -> bool {
    matches!(spec.name, "scan" | "randomkey" | "keys")
}

fn propagate(
    ctx: &Ctx<'_>,
    spec: &'static CommandSpec,
    sub: Option<usize>,
    args: &[Bytes],
    reply: &Frame,
) {
    let repl = &ctx.shared.repl;
    for (db, key) in ctx.shared.store.take_expired() {
        repl.push(db, vec![Bytes::from_static(b"DEL"), key]);
    }
    let flags = sub.map_or(spec.flags, |i| SUBCOMMANDS[i].flags);
    if flags & flag::WRITE == 0 && !may_replicate(spec) {
        return;
    }
    for effect in propagate::effects(ctx, spec, args, reply) {
        repl.push(ctx.db(), effect);
    }
}

/// Sends the commands collected for the replication stream, as one
/// transaction when `atomic` (a call's effects; not expiry's or
/// eviction's, see [`touches_arbitrary_keys`]).
pub(crate) fn flush_stream(shared: &Shared, atomic: bool) {
    for (db, key) in shared.store.take_expired() {
        shared.repl.push(db, vec![Bytes::from_static(b"DEL"), key]);
    }
    let limit = shared.config().client_output_buffer_limit.replica;
    shared.repl.flush(&shared.store, atomic, limit);
}

/// Client-side caching around one command: a tracking client's reads are
/// remembered, any client's writes invalidate.
fn track(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes], reply: &Frame) {
    let t = &ctx.shared.tracking;
    let id = ctx.conn.handle.id;
    // A command that blocked wrote nothing (yet): the connection invalidates
    // what it writes when it is served.
    if !matches!(reply, Frame::Error(_)) && ctx.block.is_none() {
        if spec.has(flag::SIGNALS_KEYS) {
            // The handler invalidated what it changed.
        } else if spec.has(flag::WRITE) {
            if matches!(spec.name, "flushall" | "flushdb") {
                t.invalidate_all(ctx.shared);
            }
            for key in spec.keys(args) {
                t.invalidate(ctx.shared, key, id);
            }
        } else if ctx.conn.tracking && spec.has(flag::READONLY) {
            t.remember(ctx.shared, id, spec.keys(args));
        }
    }
    let caching_cmd = spec.name == "client" && args.get(1).is_some_and(|a| parse::is(a, "caching"));
    if ctx.conn.tracking && !caching_cmd {
        t.command_done(id);
    }
}

/// Wakes clients blocked on the keys a write command touched. List and
/// sorted-set commands can only have left a value of their own type; for
/// any other command (RENAME, COPY, ...) the key's type is looked up.
fn wake_written(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes]) {
    let kind = match spec.group {
        "list" => Some(ValueKind::List),
        "sorted-set" => Some(ValueKind::ZSet),
        "stream" => Some(ValueKind::Stream),
        _ => None,
    };
    for key in spec.keys(args) {
        match kind {
            Some(kind) => ctx.shared.blocking.wake(ctx.db(), key, kind),
            None => wake_key(ctx, ctx.db(), key),
        }
    }
}

/// Wakes the first client blocked on `key` in `db` that can pop the value
/// the key holds now, if any.
pub(crate) fn wake_key(ctx: &Ctx<'_>, db: usize, key: &[u8]) {
    if ctx.shared.blocking.is_idle() {
        return;
    }
    // Looked up at the origin of time: an expired key is seen, not
    // removed here. The woken client's own attempt removes it, after this
    // command (as Redis orders the two in the replication stream).
    let kind = {
        let mut ks = ctx.store().lock_key(key);
        ks.shard(key)
            .lookup(db, key, Millis(0), Access::Peek)
            .map(|e| e.kind())
    };
    if let Some(kind @ (ValueKind::List | ValueKind::ZSet | ValueKind::Stream)) = kind {
        ctx.shared.blocking.wake(db, key, kind);
    }
    if kind != Some(ValueKind::Stream) {
        // A group reader blocked on a stream that is gone (or is now
        // another type) is answered with an error, so it must look again.
        ctx.shared.blocking.wake(db, key, ValueKind::Stream);
    }
}

fn unknown_command(args: &[Bytes]) -> CmdError {
    let mut quoted = String::new();
    for a in args.iter().skip(1).take(16) {
        quoted.push('\'');
        quoted.push_str(&String::from_utf8_lossy(&a[..a.len().min(128)]));
        quoted.push_str("' ");
    }
    CmdError::UnknownCommand {
        name: String::from_utf8_lossy(&args[0][..args[0].len().min(128)]).into_owned(),
        args: quoted,
    }
}
