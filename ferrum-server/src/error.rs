//! Command errors and the one function that turns them into RESP.
//!
//! Every error text a client can see lives here, worded exactly as Redis 7
//! words it, so that client libraries that match on them keep working.
//!
//! A leaf module: it names nothing else of the crate, so every layer (the
//! commands in `cmd`, and below them ACL, configuration, scripting,
//! tracking, the listeners) words its errors from here without depending
//! on the command layer.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::StoreError;

/// `COMMAND GETKEYS` of an unknown command or one with the wrong arguments.
pub(crate) const GETKEYS_INVALID: &str = "ERR Invalid arguments specified for command";
/// `COMMAND GETKEYS` of a command line without keys.
pub(crate) const GETKEYS_NONE: &str = "ERR The command has no key arguments";
/// `CLUSTER ...` on a server without cluster mode.
pub(crate) const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";
/// `-ERR syntax error`
pub(crate) const SYNTAX: &str = "ERR syntax error";
/// `-ERR value is not an integer or out of range`
pub(crate) const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
/// `-ERR value is not a valid float`
pub(crate) const NOT_FLOAT: &str = "ERR value is not a valid float";
/// `HINCRBYFLOAT` with an infinite or NaN increment (Redis 7.0's t_hash.c).
pub(crate) const NAN_OR_INFINITY: &str = "ERR value is NaN or Infinity";
/// `-ERR no such key` (`RENAME`, `XSETID`, `XINFO`...).
pub(crate) const NO_SUCH_KEY: &str = "ERR no such key";
/// `-ERR invalid expire time in 'cmd' command` (`SET EX 0`, `EXPIRE` past
/// the end of time...).
pub(crate) fn invalid_expire_time(cmd: &str) -> String {
    format!("ERR invalid expire time in '{cmd}' command")
}
/// `-ERR DB index is out of range`
pub(crate) const DB_RANGE: &str = "ERR DB index is out of range";
/// `SWAPDB` with a first index that is no `int`.
pub(crate) const SWAPDB_FIRST: &str = "ERR invalid first DB index";
/// `SWAPDB` with a second index that is no `int`.
pub(crate) const SWAPDB_SECOND: &str = "ERR invalid second DB index";
/// `-NOAUTH Authentication required.`
pub(crate) const NOAUTH: &str = "NOAUTH Authentication required.";
/// `-WRONGPASS ...`
pub(crate) const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
/// `-ERR AUTH <password> called without any password configured ...`
pub(crate) const AUTH_NOT_SET: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
/// `-EXECABORT ...`
pub(crate) const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
/// `-EXECABORT Transaction discarded because of: ...`: an `EXEC` refused
/// as a whole, with the error its commands would have met.
pub(crate) fn execabort_because(reason: impl std::fmt::Display) -> String {
    format!("EXECABORT Transaction discarded because of: {reason}")
}
/// `-OOM ...`
pub(crate) const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// `-ERR value is out of range, must be positive` (pop and random counts).
pub(crate) const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
/// `-ERR value is out of range` (a random count with values or scores).
pub(crate) const OUT_OF_RANGE: &str = "ERR value is out of range";
/// A random count whose picks would not fit in `proto-max-bulk-len`, with
/// no output limit to close the client at.
pub(crate) const REPLY_TOO_LARGE: &str =
    "ERR reply too large: the picks would take more than proto-max-bulk-len bytes";
/// `-ERR` alone: a `SAVE` (or the save of `DEBUG RELOAD`) failed, as
/// Redis answers it; the reason is in the log.
pub(crate) const SAVE_FAILED: &str = "ERR";
/// `SAVE`/`BGSAVE` while a background save runs.
pub(crate) const BGSAVE_IN_PROGRESS: &str = "ERR Background save already in progress";
/// `DEBUG RELOAD` with an option it does not know.
pub(crate) const DEBUG_RELOAD_OPTIONS: &str =
    "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
/// `DEBUG RELOAD` could not load the file back; the reason is in the log.
pub(crate) const RELOAD_FAILED: &str = "ERR Error trying to load the RDB dump";
/// `BGREWRITEAOF`: FerrumKV persists by RDB snapshots only.
pub(crate) const NO_AOF: &str =
    "ERR FerrumKV has no append-only file (it saves RDB snapshots): BGREWRITEAOF is not supported";
/// `-ERR value is out of range, value must between MIN and MAX` (Redis's
/// `getRangeLongFromObjectOrReply`, its grammar included).
pub(crate) fn out_of_range(min: i64, max: i64) -> String {
    format!("ERR value is out of range, value must between {min} and {max}")
}
/// `LPOS ... RANK 0`.
pub(crate) const LPOS_RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
/// `LPOS ... COUNT` negative or not an integer.
pub(crate) const LPOS_COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
/// `LPOS ... MAXLEN` negative or not an integer.
pub(crate) const LPOS_MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
/// `-ERR invalid cursor`
pub(crate) const INVALID_CURSOR: &str = "ERR invalid cursor";
/// `-ERR index out of range` (`LSET`).
pub(crate) const INDEX_RANGE: &str = "ERR index out of range";
/// `-ERR hash value is not an integer` (`HINCRBY`).
pub(crate) const HASH_NOT_INTEGER: &str = "ERR hash value is not an integer";
/// `-ERR hash value is not a float` (`HINCRBYFLOAT`).
pub(crate) const HASH_NOT_FLOAT: &str = "ERR hash value is not a float";
/// `-ERR min or max is not a float` (score ranges).
pub(crate) const MIN_MAX_FLOAT: &str = "ERR min or max is not a float";
/// `-ERR min or max not valid string range item` (lex ranges).
pub(crate) const MIN_MAX_LEX: &str = "ERR min or max not valid string range item";
/// `-ERR XX and NX options at the same time are not compatible`
pub(crate) const ZADD_XX_NX: &str = "ERR XX and NX options at the same time are not compatible";
/// `-ERR GT, LT, and/or NX options at the same time are not compatible`
pub(crate) const ZADD_GT_LT_NX: &str =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
/// `-ERR INCR option supports a single increment-element pair`
pub(crate) const ZADD_INCR_PAIR: &str = "ERR INCR option supports a single increment-element pair";
/// `-ERR resulting score is not a number (NaN)`
pub(crate) const SCORE_NAN: &str = "ERR resulting score is not a number (NaN)";
/// `-ERR at least 1 input key is needed for 'cmd' command` (`ZUNION`...).
pub(crate) fn numkeys_zero(cmd: &str) -> String {
    format!("ERR at least 1 input key is needed for '{cmd}' command")
}
/// `-ERR numkeys should be greater than 0`
pub(crate) const NUMKEYS_POSITIVE: &str = "ERR numkeys should be greater than 0";
/// `-ERR Number of keys can't be greater than number of args`
pub(crate) const NUMKEYS_TOO_MANY: &str = "ERR Number of keys can't be greater than number of args";
/// `-ERR count should be greater than 0` (`LMPOP`/`ZMPOP`'s count)
pub(crate) const COUNT_POSITIVE: &str = "ERR count should be greater than 0";
/// `-ERR COUNT must be > 0` (`GEOSEARCH ... COUNT`, `XAUTOCLAIM ... COUNT`).
pub(crate) const COUNT_ABOVE_ZERO: &str = "ERR COUNT must be > 0";
/// `-ERR LIMIT can't be negative`
pub(crate) const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
/// `-ERR weight value is not a float`
pub(crate) const WEIGHT_FLOAT: &str = "ERR weight value is not a float";
/// `-ERR Invalid stream ID specified as stream command argument`
pub(crate) const STREAM_ID: &str = "ERR Invalid stream ID specified as stream command argument";
/// `-ERR The ID specified in XADD is equal or smaller than the target stream top item`
pub(crate) const XADD_SMALL: &str =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
/// `-ERR timeout is not a float or out of range` (blocking commands)
pub(crate) const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
/// `-ERR timeout is negative`
pub(crate) const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
/// `-ERR timeout is not an integer or out of range` (`CLIENT PAUSE`, `XREAD
/// BLOCK`).
pub(crate) const TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
/// `-ERR timeout is out of range`
pub(crate) const TIMEOUT_RANGE: &str = "ERR timeout is out of range";
/// `-UNBLOCKED ...`: the reply to a client unblocked by `CLIENT UNBLOCK id ERROR`.
pub(crate) const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";
/// `-ERR The ID specified in XADD must be greater than 0-0`
pub(crate) const XADD_ZERO: &str = "ERR The ID specified in XADD must be greater than 0-0";
/// `-ERR The stream has exhausted the last possible ID, unable to add more items`
pub(crate) const XADD_EXHAUSTED: &str =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
/// `-ERR bit offset is not an integer or out of range` (SETBIT, GETBIT, BITFIELD).
pub(crate) const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
/// `-ERR bit is not an integer or out of range` (SETBIT's value).
pub(crate) const BIT_VALUE: &str = "ERR bit is not an integer or out of range";
/// `-ERR The bit argument must be 1 or 0.` (BITPOS).
pub(crate) const BITPOS_BIT: &str = "ERR The bit argument must be 1 or 0.";
/// `-ERR BITOP NOT must be called with a single source key.`
pub(crate) const BITOP_NOT_SINGLE: &str = "ERR BITOP NOT must be called with a single source key.";
/// `-ERR Invalid bitfield type...` (BITFIELD).
pub(crate) const BITFIELD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
/// `-ERR Invalid OVERFLOW type specified` (BITFIELD).
pub(crate) const BITFIELD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
/// `-ERR BITFIELD_RO only supports the GET subcommand`
pub(crate) const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";
/// `-ERR count should be greater than or equal to -1` (SLOWLOG GET).
pub(crate) const SLOWLOG_COUNT: &str = "ERR count should be greater than or equal to -1";
/// `-ERR No shutdown in progress.` (SHUTDOWN ABORT).
pub(crate) const SHUTDOWN_NOT_IN_PROGRESS: &str = "ERR No shutdown in progress.";
/// `-ERR Errors trying to SHUTDOWN. Check logs.` (SHUTDOWN SAVE: nothing can be saved).
pub(crate) const SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";
/// `-ERR source and destination objects are the same` (COPY, MOVE).
pub(crate) const SAME_OBJECT: &str = "ERR source and destination objects are the same";
/// `-ERR The specified keys must contain string values` (LCS).
pub(crate) const LCS_NOT_STRINGS: &str = "ERR The specified keys must contain string values";
/// `-ERR If you want both the length and indexes, please just use IDX.` (LCS).
pub(crate) const LCS_LEN_AND_IDX: &str =
    "ERR If you want both the length and indexes, please just use IDX.";
/// `-ERR Insufficient memory, ...` (LCS of strings too long to compare).
pub(crate) const LCS_TOO_BIG: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
/// `-ERR invalid longitude,latitude pair lon,lat` (GEOADD, GEOSEARCH ...
/// FROMLONLAT), the pair with six decimals.
pub(crate) fn geo_bad_pair(lon: f64, lat: f64) -> String {
    format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")
}
/// `-ERR unsupported unit provided. please use M, KM, FT, MI`
pub(crate) const GEO_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";

/// `MIGRATE ... KEYS` with a key argument that is not `""`.
pub(crate) const MIGRATE_KEYS_NOT_EMPTY: &str =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
/// `MIGRATE` could not connect to its target in time (Redis's text: "the
/// client" is the target).
pub(crate) const MIGRATE_CONNECT: &str = "IOERR error or timeout connecting to the client";
/// `MIGRATE` of a stream: FerrumKV does not serialize streams (see `DUMP`).
/// `MIGRATE` lost its target, or the target did not answer in time, while
/// `writing` the request or reading the replies (Redis's "reading to").
pub(crate) fn migrate_io(writing: bool) -> String {
    let stage = if writing { "writing" } else { "reading" };
    format!("IOERR error or timeout {stage} to target instance")
}
/// `MIGRATE`'s target answered `AUTH`, `SELECT` or `RESTORE` with the
/// error `line` (without its `-`).
pub(crate) fn migrate_target_error(line: &[u8]) -> String {
    format!(
        "ERR Target instance replied with error: {}",
        String::from_utf8_lossy(line)
    )
}

/// The line a non-loopback client gets before it is closed in protected
/// mode (no password set), Redis 7.0.15's text to the byte (its "Setup a an"
/// included).
pub(crate) const PROTECTED_MODE_DENIED: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";
/// A container command's subcommand with arguments it does not take
/// (Redis's `addReplySubcommandSyntaxError`).
pub(crate) fn subcommand_syntax(cmd: &str, sub: &[u8]) -> String {
    format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {cmd} HELP.",
        String::from_utf8_lossy(sub)
    )
}

/// `-ERR max number of clients reached`, to a connection over `maxclients`.
pub(crate) const MAX_CLIENTS: &str = "ERR max number of clients reached";

// ---- CONFIG SET ----

/// `CONFIG SET` of a parameter that does not exist.
pub(crate) fn config_set_unknown(name: &str) -> String {
    format!("ERR Unknown option or number of arguments for CONFIG SET - '{name}'")
}
/// `CONFIG SET` refused for `reason` (Redis's shape for every failure of
/// one parameter: a bad value, an immutable or repeated parameter, a
/// failed apply).
pub(crate) fn config_set_failed(name: &str, reason: &str) -> String {
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
}
/// Why `CONFIG SET` of a parameter read only at startup fails.
pub(crate) const CONFIG_IMMUTABLE: &str = "can't set immutable config";
/// `CONFIG SET` of `dir` or `dbfilename` refused by `enable-protected-configs`.
pub(crate) const CONFIG_PROTECTED: &str = "can't set protected config";
/// Why `CONFIG SET` naming one parameter twice fails.
pub(crate) const CONFIG_DUPLICATE: &str = "duplicate parameter";
/// `CONFIG SET` of a `tls-*` parameter whose new TLS configuration does
/// not load (Redis's `applyTlsCfg`; the log says why).
pub(crate) fn tls_reload_failed(name: &str) -> String {
    config_set_failed(
        name,
        "Unable to update TLS configuration. Check server logs.",
    )
}
/// `CONFIG SET` of `port`/`tls-port` when the new port cannot be bound
/// (Redis's `updatePort`; the log says why).
pub(crate) fn listen_failed(name: &str) -> String {
    config_set_failed(name, "Unable to listen on this port. Check server logs.")
}
/// `CONFIG SET bind` when an address cannot be bound (Redis's `applyBind`).
pub(crate) fn bind_failed() -> String {
    config_set_failed("bind", "Failed to bind to specified addresses.")
}

/// Why a command produced an error reply. The connection goes on after any
/// of these; only protocol errors close it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum CmdError {
    /// Wrong number of arguments for the named command.
    #[error("ERR wrong number of arguments for '{0}' command")]
    Arity(String),
    /// No such command.
    #[error("ERR unknown command '{name}', with args beginning with: {args}")]
    UnknownCommand {
        /// The name as sent.
        name: String,
        /// The first arguments, quoted as Redis quotes them.
        args: String,
    },
    /// An unknown subcommand of a container command (`CLIENT FOO`).
    #[error("ERR unknown subcommand '{sub}'. Try {cmd} HELP.")]
    UnknownSubcommand {
        /// The container command, upper case.
        cmd: &'static str,
        /// The subcommand as sent.
        sub: String,
    },
    /// A malformed request, with the codec's text: the connection replies
    /// and closes.
    #[error("ERR {0}")]
    Protocol(String),
    /// A store-level failure.
    #[error("{}", store_text(.0))]
    Store(#[from] StoreError),
    /// Any other error, with its full text (including its prefix).
    #[error("{0}")]
    Msg(String),
}

impl CmdError {
    /// An error with a fixed text.
    pub(crate) fn msg(text: impl Into<String>) -> CmdError {
        CmdError::Msg(text.into())
    }

    /// `ERR syntax error`.
    pub(crate) fn syntax() -> CmdError {
        CmdError::msg(SYNTAX)
    }

    /// Wrong number of arguments for the subcommand `sub` (as sent) of the
    /// container command `cmd` (lower case): `'cmd|sub'` in the text.
    pub(crate) fn subcommand_arity(cmd: &str, sub: impl AsRef<[u8]>) -> CmdError {
        CmdError::Arity(format!(
            "{cmd}|{}",
            String::from_utf8_lossy(sub.as_ref()).to_ascii_lowercase()
        ))
    }

    /// `sub` is not a subcommand of `cmd` (upper case).
    pub(crate) fn unknown_subcommand(cmd: &'static str, sub: &[u8]) -> CmdError {
        CmdError::UnknownSubcommand {
            cmd,
            sub: String::from_utf8_lossy(sub).into_owned(),
        }
    }

    /// The reply frame. The one place errors become frames; the encoder
    /// writes any CR or LF in the text (an unknown command's name and
    /// arguments can hold them) as a space, as Redis does, so no error can
    /// forge a reply after its own.
    pub(crate) fn into_frame(self) -> Frame {
        Frame::Error(Bytes::from(self.to_string()))
    }
}

impl From<ferrum_proto::ProtoError> for CmdError {
    fn from(e: ferrum_proto::ProtoError) -> CmdError {
        CmdError::Protocol(e.to_string())
    }
}

fn store_text(e: &StoreError) -> &'static str {
    match e {
        StoreError::WrongType => {
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        }
        StoreError::OutOfMemory => OOM,
        StoreError::NotAnInteger => NOT_INTEGER,
        StoreError::NotAFloat => NOT_FLOAT,
        StoreError::Overflow => "ERR increment or decrement would overflow",
        StoreError::NanOrInfinity => "ERR increment would produce NaN or Infinity",
        StoreError::StringTooLong => "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
    }
}

/// An `ERR` error around a text from elsewhere: a Lua error's message,
/// the ACL file's load errors.
pub(crate) fn err_text(text: impl std::fmt::Display) -> String {
    format!("ERR {text}")
}

/// The result every command handler returns.
pub(crate) type CmdResult = Result<Frame, CmdError>;

// ---- scripting (EVAL, FUNCTION, redis.call) ----

/// `redis.call()` with no arguments.
pub(crate) const NO_ARGUMENTS: &str =
    "Please specify at least one argument for this redis lib call";
/// `redis.call` with an argument that is neither a string nor a number.
pub(crate) const BAD_ARGUMENT: &str = "Lua redis lib command arguments must be strings or integers";
/// `redis.call` of a command that does not exist.
pub(crate) const UNKNOWN_COMMAND: &str = "ERR Unknown Redis command called from script";
/// `redis.acl_check_cmd` of an unknown command.
pub(crate) const ACL_CHECK_UNKNOWN: &str = "ERR Invalid command passed to redis.acl_check_cmd()";
/// `redis.call` with the wrong number of arguments for its command.
pub(crate) const WRONG_ARITY: &str = "ERR Wrong number of args calling Redis command from script";
/// `redis.call` of a command flagged `noscript` (EVAL, MULTI, BLPOP...).
pub(crate) const NOT_ALLOWED: &str = "ERR This Redis command is not allowed from script";
/// A write from `EVAL_RO`, `FCALL_RO` or a `no-writes` script.
pub(crate) const WRITE_FROM_READ_ONLY: &str =
    "ERR Write commands are not allowed from read-only scripts.";
/// `redis.call` of a command not flagged `stale` on a replica whose link
/// is down, under `replica-serve-stale-data no`.
pub(crate) const STALE_FROM_SCRIPT: &str = "ERR Can not execute the command on a stale replica";
/// What a killed script fails with (the handler adds `ERR `).
pub(crate) const KILLED: &str = "Script killed by user with SCRIPT KILL...";
/// A write after a failed background save, with save points and
/// `stop-writes-on-bgsave-error yes` (Redis's text).
pub(crate) const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
/// A write while `min-replicas-to-write` asks for replicas (FerrumKV has
/// none).
/// A command without the `loading` flag while the snapshot loads.
pub(crate) const LOADING: &str = "LOADING Redis is loading the dataset in memory";
pub(crate) const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
pub(crate) const READONLY: &str = "READONLY You can't write against a read only replica.";
pub(crate) const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";
/// What a script stopped by the server's shutdown fails with. Redis exits
/// without replying to it; FerrumKV sends this, then closes the connection.
pub(crate) const SHUTTING_DOWN: &str = "Script killed by server shutdown";
/// `cmsgpack.pack()` with no arguments.
pub(crate) const MSGPACK_NEEDS_INPUT: &str = "MessagePack pack needs input.";
/// `cmsgpack.unpack` of a truncated object.
pub(crate) const MSGPACK_MISSING_BYTES: &str = "Missing bytes in input.";
/// `cmsgpack.unpack` of a byte no MessagePack object starts with.
pub(crate) const MSGPACK_BAD_FORMAT: &str = "Bad data format in input.";
/// `cmsgpack.unpack` of arrays or maps nested past Lua's stack.
pub(crate) const MSGPACK_NESTING: &str = "stack overflow (in function mp_decode_to_lua_array)";
/// `cmsgpack.unpack` of more objects than Lua's stack can return.
pub(crate) const MSGPACK_TOO_MANY_RESULTS: &str =
    "too many return values at once; use unpack_one or unpack_limit instead.";
/// A library whose code runs too long at `FUNCTION LOAD`.
pub(crate) const LOAD_TIMEOUT: &str = "FUNCTION LOAD timeout";
/// `EVALSHA` of a script not in the cache.
pub(crate) const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
/// `EVAL script -1`.
pub(crate) const NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";
/// `FCALL f notanumber`.
pub(crate) const BAD_NUMKEYS: &str = "ERR Bad number of keys provided";
/// `FCALL` of a function no library registered.
pub(crate) const NO_FUNCTION: &str = "ERR Function not found";
/// `EVAL_RO`/`FCALL_RO` of a script that declares it writes.
pub(crate) const RO_WITH_WRITE_FLAG: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
/// `SCRIPT KILL`/`FUNCTION KILL` with nothing running.
pub(crate) const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
/// `SCRIPT KILL` of a script that wrote.
pub(crate) const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
/// Other clients while an `EVAL` script runs past `busy-reply-threshold`.
pub(crate) const BUSY_SCRIPT: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// Other clients while a function runs past `busy-reply-threshold`.
pub(crate) const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
/// `FUNCTION DELETE` of a library that does not exist.
pub(crate) const NO_LIBRARY: &str = "ERR Library not found";
/// `FUNCTION RESTORE` of a payload that is not one of ours.
pub(crate) const BAD_FUNCTION_PAYLOAD: &str = "ERR payload version or checksum are wrong";
/// A library that registers nothing.
pub(crate) const NO_FUNCTIONS: &str = "ERR No functions registered";
/// A library with no `name=` in its shebang.
pub(crate) const NO_LIBRARY_NAME: &str = "ERR Library name was not given";
/// A library or function name with characters Redis refuses.
pub(crate) const BAD_LIBRARY_NAME: &str = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
/// Two `name=` in a library's shebang.
pub(crate) const DUPLICATE_NAME: &str =
    "ERR Invalid metadata value, name argument was given multiple times";
/// One library registering one name twice.
pub(crate) const FUNCTION_TWICE: &str = "ERR Function already exists in the library";
/// `#!engine` other than `lua` on an `EVAL` script.
pub(crate) fn bad_engine_shebang(engine: &str) -> String {
    format!("ERR Unexpected engine in script shebang: {engine}")
}
/// `#!lua option=...` with an option other than `flags`.
pub(crate) fn bad_option_shebang(option: &str) -> String {
    format!("ERR Unknown lua shebang option: {option}")
}
/// `#!lua flags=...` with a flag Redis does not know.
pub(crate) fn bad_flag_shebang(flag: &str) -> String {
    format!("ERR Unexpected flag in script shebang: {flag}")
}

/// Access-control texts: refusals (`NOPERM`), `ACL` command errors, and the
/// reasons `ACL SETUSER` gives for a bad rule, each as Redis 7.0 words it.
pub(crate) mod acl {
    /// A refused key.
    pub(crate) const NOPERM_KEY: &str =
        "NOPERM this user has no permissions to access one of the keys used as arguments";
    /// A refused channel.
    pub(crate) const NOPERM_CHANNEL: &str =
        "NOPERM this user has no permissions to access one of the channels used as arguments";
    /// A refused command.
    pub(crate) fn noperm_command(name: &str) -> String {
        format!("NOPERM this user has no permissions to run the '{name}' command")
    }
    /// `ACL DRYRUN` of a refused command (a bulk reply, not an error).
    pub(crate) fn dryrun_command(name: &str) -> String {
        format!("This user has no permissions to run the '{name}' command")
    }
    /// `ACL DRYRUN` of a refused key.
    pub(crate) fn dryrun_key(key: &str) -> String {
        format!("This user has no permissions to access the '{key}' key")
    }
    /// `ACL DRYRUN` of a refused channel.
    pub(crate) fn dryrun_channel(channel: &str) -> String {
        format!("This user has no permissions to access the '{channel}' channel")
    }
    /// A queued command refused by `EXEC`, with why.
    pub(crate) fn noperm_in_exec(reason: &str) -> String {
        format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
    }
    /// Why `EXEC` refused a command.
    pub(crate) const EXEC_COMMAND: &str = "no permission to execute the command or subcommand";
    /// Why `EXEC` refused a key.
    pub(crate) const EXEC_KEY: &str = "no permission to touch the specified keys";
    /// Why `EXEC` refused a channel.
    pub(crate) const EXEC_CHANNEL: &str =
        "no permission to access one of the channels used as arguments";
    /// A script's command refused.
    pub(crate) const SCRIPT_COMMAND: &str =
        "ERR The user executing the script can't run this command or subcommand";
    /// A script's key refused.
    pub(crate) const SCRIPT_KEY: &str = "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments";
    /// A script's channel refused.
    pub(crate) const SCRIPT_CHANNEL: &str =
        "ERR The user executing the script can't publish to the channel mentioned in the command";
    /// `SORT ... BY` without read access to every key.
    pub(crate) const SORT_BY: &str =
        "ERR BY option of SORT denied due to insufficient ACL permissions.";
    /// `SORT ... GET` without read access to every key.
    pub(crate) const SORT_GET: &str =
        "ERR GET option of SORT denied due to insufficient ACL permissions.";
    /// `ACL DELUSER default`.
    pub(crate) const DEFAULT_UNDELETABLE: &str = "ERR The 'default' user cannot be removed";
    /// `ACL LOAD`/`ACL SAVE` without `aclfile`.
    pub(crate) const NO_ACL_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";
    /// `ACL SAVE` that could not write the file.
    pub(crate) const SAVE_FAILED: &str = "ERR There was an error trying to save the ACLs. Please check the server logs for more information";
    /// `ACL GENPASS` with a bad bit count.
    pub(crate) const GENPASS_BITS: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
    /// A user name with a space or NUL byte.
    pub(crate) const BAD_USERNAME: &str = "ERR Usernames can't contain spaces or null characters";
    /// Both `user` lines and `aclfile` in the configuration.
    pub(crate) const USERS_AND_ACLFILE: &str = "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.";
    /// An ACL file line that is not a `user` line.
    pub(crate) const USER_LINE_SHAPE: &str = "should start with user keyword";

    /// `ACL SETUSER` with a bad rule.
    pub(crate) fn bad_rule(op: &str, why: &str) -> String {
        format!("ERR Error in ACL SETUSER modifier '{op}': {why}")
    }
    /// A `user` line of the configuration or the ACL file with a bad rule.
    pub(crate) fn bad_user_rule(op: &str, why: &str) -> String {
        format!("Error in user declaration '{op}': {why}")
    }
    /// A `(` selector never closed.
    pub(crate) fn unmatched_parenthesis(start: &[u8]) -> String {
        format!(
            "ERR Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(start)
        )
    }
    /// The same user twice in an ACL file or the configuration.
    pub(crate) fn duplicate_user(name: &str) -> String {
        format!("Duplicate user '{name}' found")
    }
    /// The ACL file could not be read.
    pub(crate) fn acl_file_unreadable(path: &str, err: &std::io::Error) -> String {
        format!("Error loading ACLs, opening file '{path}': {err}")
    }
    /// `ACL LOAD` refused the file.
    pub(crate) fn load_failed(errors: &str) -> String {
        super::err_text(errors)
    }
    /// `ACL DRYRUN` or `ACL GETUSER`-like lookups of a missing user.
    pub(crate) fn no_such_user(name: &[u8]) -> String {
        format!("ERR User '{}' not found", String::from_utf8_lossy(name))
    }
    /// `ACL DRYRUN` of an unknown command.
    pub(crate) fn no_such_command(name: &[u8]) -> String {
        format!("ERR Command '{}' not found", String::from_utf8_lossy(name))
    }
    /// `ACL CAT` of an unknown category.
    pub(crate) fn unknown_category(name: &[u8]) -> String {
        format!("ERR Unknown category '{}'", String::from_utf8_lossy(name))
    }

    /// Why a rule was refused: `ENOENT` in Redis.
    pub(crate) const UNKNOWN_COMMAND: &str = "Unknown command or category name in ACL";
    /// `EINVAL`.
    pub(crate) const SYNTAX: &str = "Syntax error";
    /// `EEXIST`.
    pub(crate) const KEYS_AFTER_ALL: &str = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    /// `EISDIR`.
    pub(crate) const CHANNELS_AFTER_ALL: &str = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";
    /// `ENODEV`.
    pub(crate) const NO_SUCH_PASSWORD: &str =
        "The password you are trying to remove from the user does not exist";
    /// `EBADMSG`.
    pub(crate) const BAD_HASH: &str = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    /// `ECHILD`.
    pub(crate) const FIRST_ARG_OF_SUBCOMMAND: &str =
        "Allowing first-arg of a subcommand is not supported";
}

// ---- connections (HELLO, CLIENT, MONITOR) ----

/// `HELLO` of a protocol other than 2 or 3.
pub(crate) const NOPROTO: &str = "NOPROTO unsupported protocol version";
/// `HELLO` of a protocol version that is no integer.
pub(crate) const PROTOCOL_NOT_INTEGER: &str =
    "ERR Protocol version is not an integer or out of range";
/// `HELLO` without `AUTH` from a client not yet authenticated.
pub(crate) const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
/// `CLIENT SETNAME`/`HELLO SETNAME` of a name with spaces or control bytes.
pub(crate) const CLIENT_NAME_CHARS: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
/// `CLIENT PAUSE ms` with a mode other than `WRITE` or `ALL`.
pub(crate) const PAUSE_MODE: &str = "ERR CLIENT PAUSE mode must be WRITE or ALL";
/// `CLIENT LIST ID ...` with an id that is not a positive integer.
pub(crate) const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
/// `CLIENT KILL addr` of an address no client has.
pub(crate) const NO_SUCH_CLIENT: &str = "ERR No such client";
/// `CLIENT KILL ID n` with `n` not a positive integer.
pub(crate) const CLIENT_ID_POSITIVE: &str = "ERR client-id should be greater than 0";
/// `CLIENT UNBLOCK id reason` with another reason.
pub(crate) const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
/// `CLIENT TRACKING on REDIRECT a REDIRECT b`.
pub(crate) const TRACKING_ONE_REDIRECT: &str =
    "ERR A client can only redirect to a single other client";
/// `CLIENT TRACKING on REDIRECT id` of a client that does not exist.
pub(crate) const TRACKING_NO_REDIRECT_TARGET: &str =
    "ERR The client ID you want redirect to does not exist";
/// `CLIENT CACHING` without tracking in `OPTIN` or `OPTOUT` mode.
pub(crate) const CACHING_NOT_TRACKING: &str = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled";
/// `CLIENT CACHING yes` without `OPTIN`.
pub(crate) const CACHING_YES_NOT_OPTIN: &str =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
/// `CLIENT CACHING no` without `OPTOUT`.
pub(crate) const CACHING_NO_NOT_OPTOUT: &str =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
/// `MONITOR` queued in `MULTI` (or from a script).
pub(crate) const MONITOR_DENY_BLOCKING: &str = "ERR MONITOR isn't allowed for DENY BLOCKING client";

/// `HELLO` with an option it does not know.
pub(crate) fn hello_option(opt: &[u8]) -> String {
    format!(
        "ERR Syntax error in HELLO option '{}'",
        String::from_utf8_lossy(opt)
    )
}
/// `CLIENT SETINFO` of an attribute other than `lib-name`/`lib-ver`.
pub(crate) fn unrecognized_option(attr: &[u8]) -> String {
    format!(
        "ERR Unrecognized option '{}'",
        String::from_utf8_lossy(attr)
    )
}
/// `CLIENT SETINFO attr value` with spaces or control bytes in `value`.
pub(crate) fn setinfo_chars(attr: &[u8]) -> String {
    format!(
        "ERR {} cannot contain spaces, newlines or special characters.",
        String::from_utf8_lossy(attr).to_ascii_lowercase()
    )
}
/// `CLIENT KILL USER name` of a user that does not exist.
pub(crate) fn kill_no_such_user(name: &[u8]) -> String {
    format!("ERR No such user '{}'", String::from_utf8_lossy(name))
}
/// `CLIENT KILL TYPE t` (or `CLIENT LIST TYPE t`) of an unknown type.
pub(crate) fn unknown_client_type(kind: &[u8]) -> String {
    format!(
        "ERR Unknown client type '{}'",
        String::from_utf8_lossy(kind)
    )
}

// ---- client-side caching (CLIENT TRACKING) ----

/// `CLIENT TRACKING on PREFIX p` without `BCAST`.
pub(crate) const TRACKING_PREFIX_NEEDS_BCAST: &str =
    "ERR PREFIX option requires BCAST mode to be enabled";
/// `CLIENT TRACKING on` that turns `BCAST` on or off while tracking.
pub(crate) const TRACKING_BCAST_SWITCH: &str = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
/// `CLIENT TRACKING on BCAST` with `OPTIN` or `OPTOUT`.
pub(crate) const TRACKING_OPTIN_OPTOUT_BCAST: &str =
    "ERR OPTIN and OPTOUT are not compatible with BCAST";
/// `CLIENT TRACKING on OPTIN OPTOUT`.
pub(crate) const TRACKING_OPTIN_AND_OPTOUT: &str =
    "ERR You can't specify both OPTIN mode and OPTOUT mode";
/// `CLIENT TRACKING on` that switches between `OPTIN` and `OPTOUT` while tracking.
pub(crate) const TRACKING_OPT_SWITCH: &str = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";

/// `CLIENT TRACKING on BCAST PREFIX p` where `p` overlaps `other`: one of
/// the same command's prefixes if `provided`, else one already tracked.
pub(crate) fn prefix_overlap(p: &[u8], other: &[u8], provided: bool) -> String {
    let whose = if provided {
        "another provided"
    } else {
        "an existing"
    };
    format!(
        "ERR Prefix '{}' overlaps with {whose} prefix '{}'. Prefixes for a single client must not overlap.",
        String::from_utf8_lossy(p),
        String::from_utf8_lossy(other)
    )
}

// ---- streams (XADD, XREAD, XSETID, XINFO, XGROUP, XCLAIM) ----

/// `XADD`/`XTRIM ... MAXLEN n` with `n` negative.
pub(crate) const XADD_MAXLEN_NEGATIVE: &str = "ERR The MAXLEN argument must be >= 0.";
/// `XADD`/`XTRIM ... LIMIT n` with `n` negative.
pub(crate) const XADD_LIMIT_NEGATIVE: &str = "ERR The LIMIT argument must be >= 0.";
/// `XADD`/`XTRIM ... LIMIT` on an exact (`=`) trim.
pub(crate) const XADD_LIMIT_NOT_APPROX: &str =
    "ERR syntax error, LIMIT cannot be used without the special ~ option";
/// An exclusive range end (`(id`) with nothing past it (`XRANGE`, `XPENDING`).
pub(crate) const STREAM_INTERVAL_START: &str = "ERR invalid start ID for the interval";
/// `XREAD ... STREAMS key >`.
pub(crate) const XREAD_GT_ID: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";
/// `XSETID ... ENTRIESADDED n` with `n` negative.
pub(crate) const XSETID_ADDED_NEGATIVE: &str = "ERR entries_added must be positive";
/// `XSETID key id MAXDELETEDID m` with `id < m`.
pub(crate) const XSETID_BELOW_MAX_DELETED: &str =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
/// `XSETID` below the stream's last entry.
pub(crate) const XSETID_BELOW_TOP: &str =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
/// `XSETID ... ENTRIESADDED n` with `n` below the stream's length.
pub(crate) const XSETID_ADDED_BELOW_LENGTH: &str =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
/// `XREAD`/`XREADGROUP ... STREAMS` with more keys than IDs or the reverse.
pub(crate) const XREAD_UNBALANCED: &str =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";

/// `XGROUP CREATE|SETID ... ENTRIESREAD n` with `n < -1`.
pub(crate) const XGROUP_ENTRIESREAD: &str = "ERR value for ENTRIESREAD must be positive or -1";
/// `XGROUP CREATE` of a group the stream has.
pub(crate) const BUSYGROUP: &str = "BUSYGROUP Consumer Group name already exists";
/// A blocked `XREADGROUP` whose stream was deleted.
pub(crate) const XREADGROUP_KEY_GONE: &str = "UNBLOCKED the stream key no longer exists";
/// A blocked `XREADGROUP` whose group was destroyed.
pub(crate) const XREADGROUP_GROUP_GONE: &str =
    "NOGROUP the consumer group this client was blocked on no longer exists";
/// `XREADGROUP` without `GROUP group consumer`.
pub(crate) const XREADGROUP_NO_GROUP: &str = "ERR Missing GROUP option for XREADGROUP";
/// `XREADGROUP ... STREAMS key $`.
pub(crate) const XREADGROUP_DOLLAR: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";

/// `XGROUP` (but `CREATE ... MKSTREAM`) of a key that does not exist.
pub(crate) const XGROUP_NEEDS_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";

/// A stream `key` without the consumer group `group` (`XINFO CONSUMERS`,
/// `XGROUP CREATECONSUMER`...).
pub(crate) fn nogroup_for_key(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        String::from_utf8_lossy(group),
        String::from_utf8_lossy(key)
    )
}
/// No stream `key` or no group `group` in it (`XPENDING`, `XCLAIM`,
/// `XACK`...), with `XREADGROUP`'s `context` after it (else empty).
pub(crate) fn nogroup_no_key(key: &[u8], group: &[u8], context: &str) -> String {
    format!(
        "NOGROUP No such key '{}' or consumer group '{}'{context}",
        String::from_utf8_lossy(key),
        String::from_utf8_lossy(group)
    )
}
/// `XCLAIM`/`XAUTOCLAIM` with a `min-idle-time` that is no integer.
pub(crate) fn invalid_min_idle(cmd: &str) -> String {
    format!("ERR Invalid min-idle-time argument for {cmd}")
}
/// `XCLAIM ... IDLE|TIME|RETRYCOUNT n` with `n` no integer.
pub(crate) fn invalid_xclaim_option(what: &str) -> String {
    format!("ERR Invalid {what} option argument for XCLAIM")
}
/// `XCLAIM` with an option it does not know.
pub(crate) fn unknown_xclaim_option(opt: &[u8]) -> String {
    format!(
        "ERR Unrecognized XCLAIM option '{}'",
        String::from_utf8_lossy(opt)
    )
}

// ---- geo (GEOADD, GEOSEARCH, GEORADIUS) ----

/// `GEORADIUS`/`GEOSEARCH ... BYRADIUS` with a negative radius.
pub(crate) const GEO_RADIUS_NEGATIVE: &str = "ERR radius cannot be negative";
/// `GEORADIUSBYMEMBER`/`GEOSEARCH ... FROMMEMBER` of a member not in the set.
pub(crate) const GEO_MEMBER_DECODE: &str = "ERR could not decode requested zset member";
/// `GEOSEARCH ... BYBOX` with a negative side.
pub(crate) const GEO_BOX_NEGATIVE: &str = "ERR height or width cannot be negative";
/// `GEOSEARCH ... ANY` without `COUNT`.
pub(crate) const GEO_ANY_NEEDS_COUNT: &str = "ERR the ANY argument requires COUNT argument";

/// `GEOSEARCH ... BYRADIUS|BYBOX` with a `what` (radius, width, height)
/// that is no float.
pub(crate) fn geo_need_numeric(what: &str) -> String {
    format!("ERR need numeric {what}")
}
/// `GEOSEARCHSTORE`, or `GEORADIUS ... STORE`, with `WITH*` options.
pub(crate) fn geo_store_with(what: &str) -> String {
    format!("ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
}
/// `GEOSEARCH` (command `name`) with none or both of the `options`.
pub(crate) fn geo_exactly_one(options: &str, name: &str) -> String {
    format!("ERR exactly one of {options} can be specified for {name}")
}

// ---- DUMP, RESTORE ----

/// `RESTORE` of a payload whose version or CRC-64 is not ours.
pub(crate) const DUMP_BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
/// `RESTORE` of a payload that verifies but does not decode.
pub(crate) const DUMP_BAD_DATA: &str = "ERR Bad data format";
/// `RESTORE` (without `REPLACE`) onto a key that exists.
pub(crate) const BUSYKEY: &str = "BUSYKEY Target key name already exists.";

/// `DUMP` of a stream: FerrumKV does not serialize streams.
/// `RESTORE ... IDLETIME n` with `n` negative.
pub(crate) const RESTORE_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
/// `RESTORE ... FREQ n` with `n` outside 0..=255.
pub(crate) const RESTORE_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
/// `RESTORE key ttl` with `ttl` negative.
pub(crate) const RESTORE_TTL: &str = "ERR Invalid TTL value, must be >= 0";

// ---- SORT, HyperLogLog ----

/// `SORT` (without `ALPHA`) of an element or `BY` weight that is no float.
pub(crate) const SORT_NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// A HyperLogLog string whose registers do not decode.
pub(crate) const INVALID_HLL: &str = "INVALIDOBJ Corrupted HLL object detected";
/// `PFADD`/`PFCOUNT`/`PFMERGE` of a string that is no HyperLogLog.
pub(crate) const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";

// ---- keys and strings (EXPIRE, SET, INCR, ZRANGE, OBJECT) ----

/// `EXPIRE key n opt` with an option other than `NX|XX|GT|LT`.
pub(crate) fn expire_unsupported_option(opt: &[u8]) -> String {
    format!("ERR Unsupported option {}", String::from_utf8_lossy(opt))
}

/// `EXPIRE key n NX` with `XX`, `GT` or `LT`.
pub(crate) const EXPIRE_NX_AND_OTHER: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
/// `EXPIRE key n GT LT`.
pub(crate) const EXPIRE_GT_AND_LT: &str =
    "ERR GT and LT options at the same time are not compatible";

/// `DECRBY key i64::MIN`: the negated decrement does not fit.
pub(crate) const DECREMENT_OVERFLOW: &str = "ERR decrement would overflow";
/// `SETRANGE key offset` with `offset` negative.
pub(crate) const OFFSET_RANGE: &str = "ERR offset is out of range";

/// `ZRANGE ... BYLEX WITHSCORES`.
pub(crate) const ZRANGE_BYLEX_WITHSCORES: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
/// `ZRANGE ... LIMIT` by rank.
pub(crate) const ZRANGE_LIMIT_BY_RANK: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";

/// `OBJECT IDLETIME` under an LFU `maxmemory-policy`.
pub(crate) const OBJECT_IDLETIME_LFU: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
/// `OBJECT FREQ` under a policy that is not LFU.
pub(crate) const OBJECT_FREQ_NOT_LFU: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

// ---- transactions and dispatch (MULTI, EXEC, subscribed mode) ----

/// A RESP2 client in subscribed mode sending a command other than the
/// (un)subscribe family, `PING`, `QUIT` or `RESET`.
pub(crate) fn not_in_subscribed_context(name: &str) -> String {
    format!("ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
}
/// A `no-multi` command (`WATCH`'s kin) inside `MULTI`.
pub(crate) const NOT_IN_MULTI: &str = "ERR Command not allowed inside a transaction";

/// `MULTI` inside `MULTI`.
pub(crate) const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
/// `DISCARD` outside `MULTI`.
pub(crate) const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
/// `WATCH` inside `MULTI`.
pub(crate) const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
/// `EXEC` outside `MULTI`.
pub(crate) const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
/// A queued command that no longer exists when `EXEC` runs it.
pub(crate) const EXEC_UNKNOWN_COMMAND: &str = "ERR unknown command";

// ---- server (CONFIG, DEBUG, LATENCY, SCRIPT, FUNCTION) ----

/// `CONFIG REWRITE` of a server started without a configuration file.
pub(crate) const CONFIG_NO_FILE: &str = "ERR The server is running without a config file";

/// `CONFIG REWRITE` that could not write the file, with `strerror`'s reason.
pub(crate) fn config_rewrite_failed(reason: &str) -> String {
    format!("ERR Rewriting config file: {reason}")
}

/// `DEBUG CONFIG-REWRITE-FORCE-ALL` that could not write the file.
pub(crate) fn debug_rewrite_failed(reason: &str) -> String {
    format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {reason}")
}
/// `MODULE LOAD`, `LOADEX` or `UNLOAD` while `enable-module-command` is
/// `no` (Redis's words).
pub(crate) const MODULE_NOT_ALLOWED: &str = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// `DEBUG` while `enable-debug-command` is `no`.
pub(crate) const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// `LATENCY GRAPH event` of an event with no samples.
pub(crate) fn latency_no_samples(event: &[u8]) -> String {
    format!(
        "ERR No samples available for event '{}'",
        String::from_utf8_lossy(event)
    )
}

/// `SCRIPT FLUSH` with a mode other than `SYNC`/`ASYNC` (Redis's "support").
pub(crate) const SCRIPT_FLUSH_MODE: &str = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";

/// `FUNCTION LIST LIBRARYNAME` without the pattern.
pub(crate) const FUNCTION_LIST_NO_NAME: &str = "ERR library name argument was not given";
/// `FUNCTION RESTORE payload policy` with another policy.
pub(crate) const FUNCTION_RESTORE_POLICY: &str =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
/// `FUNCTION FLUSH` with a mode other than `SYNC`/`ASYNC`.
pub(crate) const FUNCTION_FLUSH_MODE: &str = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";

/// `FUNCTION LOAD opt code` with an `opt` other than `REPLACE`.
pub(crate) fn function_unknown_option(opt: &[u8]) -> String {
    format!("ERR Unknown option given: {}", String::from_utf8_lossy(opt))
}
/// `FUNCTION LIST` with an argument other than `WITHCODE`/`LIBRARYNAME`.
pub(crate) fn function_unknown_argument(arg: &[u8]) -> String {
    format!("ERR Unknown argument {}", String::from_utf8_lossy(arg))
}

/// A script reply nested deeper than Lua's stack (1000 levels).
pub(crate) const LUA_STACK_LIMIT: &str = "ERR reached lua stack limit";

/// A library whose code does not start with `#!`.
pub(crate) const MISSING_LIBRARY_METADATA: &str = "ERR Missing library metadata";

/// What a script that does not compile fails with (`EVAL`), before Lua's
/// message.
pub(crate) const COMPILE_SCRIPT: &str = "Error compiling script (new function)";
/// What a library that does not compile fails with (`FUNCTION LOAD`).
pub(crate) const COMPILE_FUNCTION: &str = "Error compiling function";
/// A library whose code fails while it registers its functions.
pub(crate) fn registering_failed(why: &str) -> String {
    format!("ERR Error registering functions: {why}")
}
/// `redis.call` of `XREAD`/`XREADGROUP ... BLOCK` (command `name`).
pub(crate) fn block_from_script(name: &str) -> String {
    format!("ERR {name} command is not allowed with BLOCK option from scripts")
}
/// `FUNCTION LOAD` (without `REPLACE`) of a library that exists; Redis
/// quotes the name there, but not in `FUNCTION RESTORE`.
pub(crate) fn library_exists(name: &str, quoted: bool) -> String {
    if quoted {
        format!("ERR Library '{name}' already exists")
    } else {
        format!("ERR Library {name} already exists")
    }
}
/// A library registering a function another library has.
pub(crate) fn function_exists(name: &str) -> String {
    format!("ERR Function {name} already exists")
}
/// A library shebang naming an engine other than `lua`.
pub(crate) fn engine_not_found(engine: &str) -> String {
    format!("ERR Engine '{engine}' not found")
}
/// A library shebang with metadata other than `name=`.
pub(crate) fn invalid_metadata(part: &str) -> String {
    format!("ERR Invalid metadata value given: {part}")
}

// ---- Lua libraries (cjson, cmsgpack, bit): errors a script raises ----

/// `cjson.encode` of NaN or an infinity (unless `encode_invalid_numbers`).
pub(crate) const JSON_NAN_OR_INF: &str = "Cannot serialise number: must not be NaN or Inf";
/// `cjson.encode` of an array more than half holes past index 10.
pub(crate) const JSON_SPARSE_ARRAY: &str = "Cannot serialise table: excessively sparse array";
/// `cjson.encode` of a table with a key that is no number or string.
pub(crate) const JSON_BAD_KEY: &str =
    "Cannot serialise table: table key must be a number or string";

/// `bit.*` of an argument that is no number.
pub(crate) const BIT_NUMBER_EXPECTED: &str = "bad argument (number expected)";
/// `bit.band()`-like folds with no argument.
pub(crate) const BIT_NO_VALUE: &str = "bad argument #1 (number expected, got no value)";

/// `cjson.encode` of tables nested past `encode_max_depth`.
pub(crate) fn json_excessive_nesting(depth: usize) -> String {
    format!("Cannot serialise, excessive nesting ({depth})")
}
/// `cjson.encode` of a function, userdata or thread (Lua's `type_name`).
pub(crate) fn json_unsupported_type(type_name: &str) -> String {
    format!("Cannot serialise {type_name}: type not supported")
}
/// `cjson.decode` of text with no `what` at 1-based character `at`.
pub(crate) fn json_unexpected(what: &str, at: usize) -> String {
    format!("Expected {what} but found invalid token at character {at}")
}
/// `cjson.decode` of arrays or objects nested past `decode_max_depth`.
pub(crate) fn json_too_deep(depth: usize, at: usize) -> String {
    format!("Found too many nested data structures ({depth}) at character {at}")
}
/// `cmsgpack.unpack_limit`/`unpack_one` with an offset past the input.
pub(crate) fn msgpack_bad_offset(offset: i64, len: usize) -> String {
    format!("Start offset {offset} greater than input length {len}.")
}

/// Cluster mode's texts: `CLUSTER` subcommands and the redirections.
pub(crate) mod cluster {
    /// `SELECT` of a database other than 0 in cluster mode.
    pub(crate) const SELECT: &str = "ERR SELECT is not allowed in cluster mode";
    /// `MOVE` in cluster mode, which has database 0 only.
    pub(crate) const MOVE: &str = "ERR MOVE is not allowed in cluster mode";
    /// `SWAPDB` in cluster mode.
    pub(crate) const SWAPDB: &str = "ERR SWAPDB is not allowed in cluster mode";
    /// `COPY ... DB n` to a database other than 0 in cluster mode.
    pub(crate) const COPY_DB: &str =
        "ERR Copying to another database is not allowed in cluster mode";
    /// `SET-CONFIG-EPOCH` on a node that knows others.
    pub(crate) const EPOCH_WITH_PEERS: &str =
        "ERR The user can assign a config epoch only when the node does not know any other node.";
    /// `SET-CONFIG-EPOCH` on a node whose epoch was set.
    pub(crate) const EPOCH_SET: &str = "ERR Node config epoch is already non-zero";
    /// A slot argument that is no number in `0..16384`.
    pub(crate) const BAD_SLOT: &str = "ERR Invalid or out of range slot";
    /// `COUNTKEYSINSLOT` of a slot out of range.
    pub(crate) const INVALID_SLOT: &str = "ERR Invalid slot";
    /// `GETKEYSINSLOT` with a bad slot or count.
    pub(crate) const INVALID_SLOT_OR_COUNT: &str = "ERR Invalid slot or number of keys";
    /// `SETSLOT` with an unknown action or the wrong arguments for it.
    pub(crate) const BAD_SETSLOT: &str =
        "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
    /// Keys of one command in more than one slot.
    pub(crate) const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
    /// A multi-key command on an importing slot with only some keys here.
    pub(crate) const TRYAGAIN: &str = "TRYAGAIN Multiple keys request during rehashing of slot";
    /// The keys' slot has no owner.
    pub(crate) const UNBOUND: &str = "CLUSTERDOWN Hash slot not served";
    /// Some slot has no owner while full coverage is required.
    pub(crate) const DOWN: &str = "CLUSTERDOWN The cluster is down";
    /// A write while the cluster is down and `cluster-allow-reads-when-down`
    /// lets only reads through.
    pub(crate) const DOWN_READ_ONLY: &str =
        "CLUSTERDOWN The cluster is down and only accepts read commands";
    /// `FORGET` of this node.
    pub(crate) const FORGET_MYSELF: &str = "ERR I tried hard but I can't forget myself...";
    /// `FLUSHSLOTS` while keys are stored.
    pub(crate) const FLUSHSLOTS_WITH_KEYS: &str =
        "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.";
    /// `RESET` while keys are stored.
    pub(crate) const RESET_WITH_KEYS: &str =
        "ERR CLUSTER RESET can't be called with master nodes containing keys";
    /// A script's command on a key of a slot another node serves.
    pub(crate) const SCRIPT_NON_LOCAL: &str =
        "ERR Script attempted to access a non local key in a cluster node";
    /// A script's commands on keys of more than one slot.
    pub(crate) const SCRIPT_CROSS_SLOT: &str =
        "ERR Script attempted to access keys that do not hash to the same slot";
    /// A script's command while the cluster is down.
    pub(crate) const SCRIPT_DOWN: &str =
        "ERR Script attempted to execute a command while the cluster is down";
    /// A script's write while the cluster is down and read-only.
    pub(crate) const SCRIPT_DOWN_READ_ONLY: &str =
        "ERR Script attempted to execute a write command while the cluster is down and readonly";

    /// `SET-CONFIG-EPOCH` of something that is no epoch.
    pub(crate) fn bad_epoch(arg: &[u8]) -> String {
        format!(
            "ERR Invalid config epoch specified: {}",
            String::from_utf8_lossy(arg)
        )
    }
    /// `-MOVED <slot> <ip>:<port>`
    pub(crate) fn moved(slot: u16, addr: &str) -> String {
        format!("MOVED {slot} {addr}")
    }
    /// `-ASK <slot> <ip>:<port>`
    pub(crate) fn ask(slot: u16, addr: &str) -> String {
        format!("ASK {slot} {addr}")
    }
    /// `ADDSLOTS` of a slot with an owner.
    pub(crate) fn busy(slot: u16) -> String {
        format!("ERR Slot {slot} is already busy")
    }
    /// `DELSLOTS` of a slot without an owner.
    pub(crate) fn unassigned(slot: u16) -> String {
        format!("ERR Slot {slot} is already unassigned")
    }
    /// The same slot twice in one `ADDSLOTS`/`DELSLOTS`.
    pub(crate) fn repeated(slot: u16) -> String {
        format!("ERR Slot {slot} specified multiple times")
    }
    /// A range given end first.
    pub(crate) fn reversed_range(start: u16, end: u16) -> String {
        format!("ERR start slot number {start} is greater than end slot number {end}")
    }
    /// `SETSLOT ... NODE` or `FORGET` of an unknown node.
    pub(crate) fn unknown_node(id: &[u8]) -> String {
        format!("ERR Unknown node {}", String::from_utf8_lossy(id))
    }
    /// `SETSLOT ... MIGRATING/IMPORTING` with an unknown node.
    pub(crate) fn dont_know(id: &[u8]) -> String {
        format!(
            "ERR I don't know about node {}",
            String::from_utf8_lossy(id)
        )
    }
    /// `SETSLOT ... MIGRATING` of a slot another node serves.
    pub(crate) fn not_owner(slot: u16) -> String {
        format!("ERR I'm not the owner of hash slot {slot}")
    }
    /// `SETSLOT ... IMPORTING` of a slot this node serves.
    pub(crate) fn already_owner(slot: u16) -> String {
        format!("ERR I'm already the owner of hash slot {slot}")
    }
    /// `SETSLOT ... NODE <other>` while this node still holds its keys.
    pub(crate) fn still_holds_keys(slot: u16) -> String {
        format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot.")
    }
    /// `MEET` with an address that does not parse.
    pub(crate) fn bad_address(ip: &[u8], port: &[u8]) -> String {
        format!(
            "ERR Invalid node address specified: {}:{}",
            String::from_utf8_lossy(ip),
            String::from_utf8_lossy(port)
        )
    }
    /// `MEET` with a port that is no number.
    pub(crate) fn bad_port(port: &[u8]) -> String {
        format!(
            "ERR Invalid TCP base port specified: {}",
            String::from_utf8_lossy(port)
        )
    }
    /// `MEET` of a peer that did not answer as a cluster node (FerrumKV's
    /// own text: Redis meets over the bus and answers `OK` at once).
    pub(crate) fn meet_failed(addr: &str, why: &str) -> String {
        format!("ERR CLUSTER MEET {addr} failed: {why}")
    }
    /// The cluster config file could not be saved.
    pub(crate) fn save_failed(why: &str) -> String {
        format!("ERR {why}")
    }
}
