//! The command table: one row per command, backing dispatch and `COMMAND`.
//!
//! Arity and key positions follow Redis 7's `COMMAND INFO`, so client
//! libraries that route or validate by them see what they expect.

use super::flag::{
    ADMIN, CONTAINER, DENYOOM, FAST, NO_AUTH, NO_MULTI, NO_QUEUE, READONLY, STALE, WRITE,
};
use super::{connection, expire, info, keys, server, string, tx, CommandSpec};

macro_rules! row {
    ($name:literal, $arity:expr, $flags:expr, $keys:expr, $group:literal, $handler:path, $summary:literal) => {
        CommandSpec {
            name: $name,
            arity: $arity,
            flags: $flags,
            first_key: $keys.0,
            last_key: $keys.1,
            step: $keys.2,
            group: $group,
            summary: $summary,
            handler: $handler,
        }
    };
}

const NONE: (i32, i32, i32) = (0, 0, 0);
const KEY1: (i32, i32, i32) = (1, 1, 1);
const KEYS_ALL: (i32, i32, i32) = (1, -1, 1);
const KEY1_2: (i32, i32, i32) = (1, 2, 1);

/// Every command FerrumKV serves.
pub(crate) static COMMANDS: &[CommandSpec] = &[
    // connection
    row!("ping", -1, FAST | STALE, NONE, "connection", connection::ping, "Returns the server's liveliness response."),
    row!("echo", 2, FAST, NONE, "connection", connection::echo, "Returns the given string."),
    row!("quit", -1, FAST | NO_AUTH | NO_QUEUE | STALE, NONE, "connection", connection::quit, "Closes the connection."),
    row!("hello", -1, FAST | NO_AUTH | STALE, NONE, "connection", connection::hello, "Handshakes with the server."),
    row!("auth", -2, FAST | NO_AUTH | NO_MULTI | STALE, NONE, "connection", connection::auth, "Authenticates the connection."),
    row!("select", 2, FAST | STALE, NONE, "connection", connection::select, "Changes the selected database."),
    row!("client", -2, ADMIN | STALE | CONTAINER, NONE, "connection", connection::client, "A container for client connection commands."),
    row!("reset", 1, FAST | NO_AUTH | NO_QUEUE | STALE, NONE, "connection", connection::reset, "Resets the connection."),
    // strings
    row!("get", 2, READONLY | FAST, KEY1, "string", string::get, "Returns the string value of a key."),
    row!("set", -3, WRITE | DENYOOM, KEY1, "string", string::set, "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."),
    row!("setnx", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::setnx, "Set the string value of a key only when the key doesn't exist."),
    row!("setex", 4, WRITE | DENYOOM, KEY1, "string", string::setex, "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."),
    row!("psetex", 4, WRITE | DENYOOM, KEY1, "string", string::psetex, "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."),
    row!("mget", -2, READONLY | FAST, KEYS_ALL, "string", string::mget, "Atomically returns the string values of one or more keys."),
    row!("mset", -3, WRITE | DENYOOM, (1, -1, 2), "string", string::mset, "Atomically creates or modifies the string values of one or more keys."),
    row!("msetnx", -3, WRITE | DENYOOM, (1, -1, 2), "string", string::msetnx, "Atomically modifies the string values of one or more keys only when all keys don't exist."),
    row!("getset", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::getset, "Returns the previous string value of a key after setting it to a new value."),
    row!("getdel", 2, WRITE | FAST, KEY1, "string", string::getdel, "Returns the string value of a key after deleting the key."),
    row!("getex", -2, WRITE | FAST, KEY1, "string", string::getex, "Returns the string value of a key after setting its expiration time."),
    row!("append", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::append, "Appends a string to the value of a key. Creates the key if it doesn't exist."),
    row!("strlen", 2, READONLY | FAST, KEY1, "string", string::strlen, "Returns the length of a string value."),
    row!("incr", 2, WRITE | DENYOOM | FAST, KEY1, "string", string::incr, "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
    row!("decr", 2, WRITE | DENYOOM | FAST, KEY1, "string", string::decr, "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
    row!("incrby", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::incrby, "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."),
    row!("decrby", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::decrby, "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."),
    row!("incrbyfloat", 3, WRITE | DENYOOM | FAST, KEY1, "string", string::incrbyfloat, "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist."),
    row!("getrange", 4, READONLY, KEY1, "string", string::getrange, "Returns a substring of the string stored at a key."),
    row!("setrange", 4, WRITE | DENYOOM, KEY1, "string", string::setrange, "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."),
    // keys
    row!("del", -2, WRITE, KEYS_ALL, "generic", keys::del, "Deletes one or more keys."),
    row!("unlink", -2, WRITE | FAST, KEYS_ALL, "generic", keys::del, "Asynchronously deletes one or more keys."),
    row!("exists", -2, READONLY | FAST, KEYS_ALL, "generic", keys::exists, "Determines whether one or more keys exist."),
    row!("touch", -2, READONLY | FAST, KEYS_ALL, "generic", keys::touch, "Returns the number of existing keys out of those specified after updating the time they were last accessed."),
    row!("type", 2, READONLY | FAST, KEY1, "generic", keys::type_, "Determines the type of value stored at a key."),
    row!("rename", 3, WRITE, KEY1_2, "generic", keys::rename, "Renames a key and overwrites the destination."),
    row!("renamenx", 3, WRITE | FAST, KEY1_2, "generic", keys::renamenx, "Renames a key only when the target key name doesn't exist."),
    row!("copy", -3, WRITE | DENYOOM, KEY1_2, "generic", keys::copy, "Copies the value of a key to a new key."),
    row!("keys", 2, READONLY, NONE, "generic", keys::keys, "Returns all key names that match a pattern."),
    row!("scan", -2, READONLY, NONE, "generic", keys::scan, "Iterates over the key names in the database."),
    row!("randomkey", 1, READONLY, NONE, "generic", keys::randomkey, "Returns a random key name from the database."),
    row!("object", -2, READONLY | CONTAINER, (2, 2, 1), "generic", keys::object, "A container for object introspection commands."),
    row!("expire", -3, WRITE | FAST, KEY1, "generic", expire::expire, "Sets the expiration time of a key in seconds."),
    row!("pexpire", -3, WRITE | FAST, KEY1, "generic", expire::pexpire, "Sets the expiration time of a key in milliseconds."),
    row!("expireat", -3, WRITE | FAST, KEY1, "generic", expire::expireat, "Sets the expiration time of a key to a Unix timestamp."),
    row!("pexpireat", -3, WRITE | FAST, KEY1, "generic", expire::pexpireat, "Sets the expiration time of a key to a Unix milliseconds timestamp."),
    row!("ttl", 2, READONLY | FAST, KEY1, "generic", expire::ttl, "Returns the expiration time in seconds of a key."),
    row!("pttl", 2, READONLY | FAST, KEY1, "generic", expire::pttl, "Returns the expiration time in milliseconds of a key."),
    row!("expiretime", 2, READONLY | FAST, KEY1, "generic", expire::expiretime, "Returns the expiration time of a key as a Unix timestamp."),
    row!("pexpiretime", 2, READONLY | FAST, KEY1, "generic", expire::pexpiretime, "Returns the expiration time of a key as a Unix milliseconds timestamp."),
    row!("persist", 2, WRITE | FAST, KEY1, "generic", expire::persist, "Removes the expiration time of a key."),
    // transactions
    row!("multi", 1, FAST | NO_QUEUE, NONE, "transactions", tx::multi, "Starts a transaction."),
    row!("exec", 1, NO_QUEUE, NONE, "transactions", tx::exec, "Executes all commands in a transaction."),
    row!("discard", 1, FAST | NO_QUEUE, NONE, "transactions", tx::discard, "Discards a transaction."),
    row!("watch", -2, FAST | NO_QUEUE, KEYS_ALL, "transactions", tx::watch, "Monitors changes to keys to determine the execution of a transaction."),
    row!("unwatch", 1, FAST | NO_QUEUE, NONE, "transactions", tx::unwatch, "Forgets about watched keys of a transaction."),
    // server
    row!("info", -1, STALE, NONE, "server", info::info, "Returns information and statistics about the server."),
    row!("config", -2, ADMIN | STALE | CONTAINER, NONE, "server", server::config, "A container for server configuration commands."),
    row!("command", -1, STALE | CONTAINER, NONE, "server", server::command, "Returns detailed information about all commands."),
    row!("dbsize", 1, READONLY | FAST, NONE, "server", server::dbsize, "Returns the number of keys in the database."),
    row!("flushdb", -1, WRITE, NONE, "server", server::flushdb, "Remove all keys from the current database."),
    row!("flushall", -1, WRITE, NONE, "server", server::flushall, "Removes all keys from all databases."),
    row!("swapdb", 3, WRITE | FAST, NONE, "server", server::swapdb, "Swaps two Redis databases."),
    row!("time", 1, FAST | STALE, NONE, "server", server::time, "Returns the server time."),
    row!("debug", -2, ADMIN | CONTAINER, NONE, "server", server::debug, "A container for debugging commands."),
];
