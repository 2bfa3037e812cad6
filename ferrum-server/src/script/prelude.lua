-- The sandbox every script and function runs in, set up once per VM by
-- engine.rs. It receives `priv`, a table only Rust and this chunk can
-- reach, holding the Rust helpers (dispatch, sha1hex, handler, killed,
-- libraries) and receiving what Rust calls back (run, load, loading).
--
-- Redis 7 protects its globals with a patched Lua ("readonly tables");
-- stock Lua 5.1 has no such thing, so protection here is by proxies: a
-- script sees empty tables whose metatable reads through to the real one
-- and refuses writes, and the few base functions that could get past a
-- metatable (rawset, setmetatable, getfenv, loadstring) are wrapped.
local priv = ...
local G = _G
local error, type, tostring, rawget, rawset, setmetatable, getfenv, setfenv, select, xpcall, pcall =
    error, type, tostring, rawget, rawset, setmetatable, getfenv, setfenv, select, xpcall, pcall
local raw_loadstring = loadstring

for _, name in ipairs({ 'loadfile', 'dofile', 'print', 'io', 'os', 'package', 'require',
    'module', 'debug', 'newproxy' }) do
    G[name] = nil
end

local readonly = setmetatable({}, { __mode = 'k' })
local function refuse(level) error('Attempt to modify a readonly table', level) end
local function deny() refuse(3) end
-- What getmetatable returns for a protected table: nothing to edit.
local sealed = setmetatable({}, { __newindex = deny, __metatable = false })
readonly[sealed] = true

local function protect(t)
    local view = setmetatable({}, { __index = t, __newindex = deny, __metatable = sealed })
    readonly[view] = true
    return view
end

local function missing(k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 3)
end

-- A strict view: reading a name that is not there is an error too.
local function strict(t)
    local view = setmetatable({}, {
        __index = function(_, k)
            local v = t[k]
            if v == nil then missing(k) end
            return v
        end,
        __newindex = deny,
        __metatable = sealed,
    })
    readonly[view] = true
    return view
end

-- ---- the redis table ----

local redis = {}
-- The arguments go to Rust as one table: a call may have more of them
-- than a Rust callback's share of the Lua stack holds.
function redis.call(...)
    local ok, v = priv.dispatch(select('#', ...), { ... })
    if not ok then error(v, 0) end
    return v
end
function redis.pcall(...)
    return select(2, priv.dispatch(select('#', ...), { ... }))
end
-- Whether the calling user may run the command: dispatch's third argument
-- asks it to check instead of run.
function redis.acl_check_cmd(...)
    local ok, v = priv.dispatch(select('#', ...), { ... }, true)
    if not ok then error(v, 0) end
    return v
end
local function error_text(e)
    if e:sub(1, 1) == '-' then e = e:sub(2) else return 'ERR ' .. e end
    local space = e:find(' ', 1, true)
    if not space then return e == '' and 'ERR' or ('ERR ' .. e) end
    return e
end
function redis.error_reply(e)
    if type(e) ~= 'string' then return { err = 'ERR wrong number or type of arguments' } end
    if e == '' then return { err = 'ERR' } end
    if e:sub(1, 1) ~= '-' then e = '-' .. e end
    return { err = error_text(e) }
end
function redis.status_reply(s)
    if type(s) ~= 'string' then return { err = 'ERR wrong number or type of arguments' } end
    return { ok = s }
end
function redis.sha1hex(...)
    if select('#', ...) ~= 1 then error('wrong number of arguments', 0) end
    return priv.sha1hex(...)
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
function redis.log(level, ...)
    if select('#', ...) < 1 then error('redis.log() requires two arguments or more.', 0) end
    if type(level) ~= 'number' then error('First argument must be a number (log level).', 0) end
    if level < 0 or level > 3 then error('Invalid debug level.', 0) end
end
function redis.setresp(v)
    if v ~= 2 and v ~= 3 then error('RESP version must be 2 or 3.', 0) end
    priv.resp = v
end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
function redis.set_repl(flags)
    if type(flags) ~= 'number' or flags < 0 or flags > 3 then
        error('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.', 0)
    end
end
function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end
redis.REDIS_VERSION = priv.version
redis.REDIS_VERSION_NUM = priv.version_num

-- ---- the libraries ----

for name, lib in pairs(priv.libraries) do
    G[name] = lib
end
for _, name in ipairs({ 'string', 'table', 'math', 'coroutine', 'cjson', 'cmsgpack', 'bit', 'struct' }) do
    if G[name] then G[name] = protect(G[name]) end
end
G.redis = protect(redis)

-- ---- redis.register_function's arguments ----

local known_flags = {
    ['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
    ['no-cluster'] = true, ['allow-cross-slot-keys'] = true,
}
local named = {
    function_name = { 'string', 'function_name argument given to redis.register_function must be a string' },
    callback = { 'function', 'callback argument given to redis.register_function must be a function' },
    description = { 'string', 'description argument given to redis.register_function must be a string' },
    flags = { 'table', 'flags argument to redis.register_function must be a table representing function flags' },
}

-- The registration redis.register_function(...) asks for, or nil and
-- Redis's error text.
function priv.registration(...)
    local n = select('#', ...)
    local reg
    if n == 1 then
        local t = ...
        if type(t) ~= 'table' then
            return nil, 'calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).'
        end
        reg = {}
        for k, v in pairs(t) do
            local rule = named[k]
            if not rule then return nil, 'unknown argument given to redis.register_function' end
            if type(v) ~= rule[1] then return nil, rule[2] end
            reg[k] = v
        end
        if not reg.function_name then return nil, 'redis.register_function must get a function name argument' end
        if not reg.callback then return nil, 'redis.register_function must get a callback argument' end
    elseif n == 2 then
        local name, callback = ...
        if type(name) ~= 'string' then return nil, 'first argument to redis.register_function must be a string' end
        if type(callback) ~= 'function' then return nil, 'second argument to redis.register_function must be a function' end
        reg = { function_name = name, callback = callback }
    else
        return nil, 'wrong number of arguments to redis.register_function'
    end
    local name = reg.function_name
    if name == '' or name:find('[^%w_]') then
        return nil, 'Library names can only contain letters, numbers, or underscores(_) and must be at least one character long'
    end
    local flags = {}
    for _, f in ipairs(reg.flags or {}) do
        if type(f) ~= 'string' or not known_flags[f] then return nil, 'unknown flag given' end
        flags[#flags + 1] = f
    end
    reg.flags = flags
    return reg
end

-- ---- the global environment ----

-- While FUNCTION LOAD runs a library's code, `priv.loading` is the list its
-- registrations go to and scripts see only this short list of names.
local load_api = {
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = priv.version, REDIS_VERSION_NUM = priv.version_num,
    log = redis.log,
}
function load_api.register_function(...)
    if not priv.loading then
        error('redis.register_function can only be called on FUNCTION LOAD command', 2)
    end
    local reg, err = priv.registration(...)
    if not reg then error(err, 2) end
    table.insert(priv.loading, reg)
end
local load_globals = {
    redis = strict(load_api),
    string = G.string, table = G.table, bit = G.bit, cjson = G.cjson, cmsgpack = G.cmsgpack,
    struct = G.struct, tostring = tostring, tonumber = tonumber, type = type, pairs = pairs,
    ipairs = ipairs, next = next, error = error, assert = assert, pcall = pcall, xpcall = xpcall,
    select = select, unpack = unpack, rawequal = rawequal, rawget = rawget,
}

local env = setmetatable({}, {
    __index = function(_, k)
        local v
        if priv.loading then v = load_globals[k] else v = rawget(G, k) end
        if v == nil then missing(k) end
        return v
    end,
    __newindex = deny,
    __metatable = sealed,
})
readonly[env] = true
rawset(G, '_G', env)
load_globals._G = env

function G.rawset(t, k, v)
    if readonly[t] then refuse(3) end
    return rawset(t, k, v)
end
function G.setmetatable(t, mt)
    if readonly[t] then refuse(3) end
    return setmetatable(t, mt)
end
function G.getfenv(f)
    if type(f) == 'number' and f > 0 then f = f + 1 end
    local e = getfenv(f or 2)
    if e == G then return env end
    return e
end
function G.loadstring(s, name)
    if type(s) == 'string' and s:byte(1) == 27 then return nil, 'binary chunks are not allowed' end
    local f, err = raw_loadstring(s, name)
    if f then setfenv(f, env) end
    return f, err
end

-- A pcall that cannot swallow SCRIPT KILL: once the script is killed
-- every protected call fails again, so a loop of pcalls still ends.
local function rethrow_if_killed(ok, ...)
    if not ok and priv.killed() then error((...), 0) end
    return ok, ...
end
function G.pcall(...) return rethrow_if_killed(pcall(...)) end
function G.xpcall(f, h) return rethrow_if_killed(xpcall(f, h)) end
load_globals.pcall, load_globals.xpcall = G.pcall, G.xpcall

-- ---- what Rust calls ----

priv.env = env

-- Runs an EVAL script (KEYS and ARGV are globals) or a function
-- (they are its arguments); returns ok and the reply or error table.
function priv.run(f, keys, argv, is_function)
    priv.resp = 2
    if is_function then
        return xpcall(function() return f(keys, argv) end, priv.handler)
    end
    rawset(G, 'KEYS', keys)
    rawset(G, 'ARGV', argv)
    return xpcall(f, priv.handler)
end

-- Runs a library's code for FUNCTION LOAD; returns ok and the list of
-- registrations or the error.
function priv.load(f)
    local registered = {}
    priv.loading = registered
    local ok, err = xpcall(f, priv.handler)
    priv.loading = nil
    if not ok then return false, err end
    return true, registered
end
