/*
 * The engine against Redis itself: every script of the corpus below runs
 * through redis-server 7.0.15's EVAL (or FUNCTION LOAD + FCALL for lines
 * starting with "F:") and through ringkv's engine, whose redis.call goes
 * to the same redis-server, in RESP2 and RESP3, and the replies must be
 * the same bytes. Skipped when redis-server is not installed (tools/deps.sh
 * --bench installs it). The corpus leaves out what only a host decides
 * (refusals such as "Unknown Redis command called from script") and what
 * differs on purpose: pcall() without arguments (undefined behaviour in
 * Redis), error({}) (crashes Redis), table addresses.
 */
#include "test_script_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const corpus[] = {
    "return 'hello'",
    "return 100.5",
    "return -3.9",
    "return 0/0",
    "return 1/0",
    "return 2^63",
    "return -2^63",
    "return 2^64",
    "return true",
    "return false",
    "return nil",
    "return {ok='fine'}",
    "return {err='ERR this is an error'}",
    "return {err='My Error'}",
    "return {err=''}",
    "return {err='x\ny'}",
    "return {1,2,3,'ciao',{1,2}}",
    "return {1,2,nil,4}",
    "return {}",
    "return _G",
    "return redis",
    "return function() end",
    "return {double=3.141}",
    "return {double=0.1}",
    "return {double=1/0}",
    "return {double=-1/0}",
    "return {double=1e300}",
    "return {double=123}",
    "return {big_number='12345678901234567890'}",
    "return {map={a=1}}",
    "return {set={a=true}}",
    "return {verbatim_string={format='txt', string='hi'}}",
    "return {verbatim_string={format='x', string='hi'}}",
    "return {verbatim_string={format='toolong', string='hi'}}",
    "return {err='E x', ok='y'}",
    "return {ok='y', double=1}",
    "return {double='1', 5}",
    "return {map={k={1,{ok='x'}}}}",
    "redis.setresp(3) return true",
    "redis.setresp(3) return false",
    "redis.setresp(3) return redis.call('hgetall', 'h')",
    "redis.setresp(2) return redis.call('hgetall', 'h')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'map')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'set')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'double')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'bignum')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'null')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'true')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'false')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'verbatim')",
    "redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')",
    "redis.setresp(2) return redis.call('debug', 'protocol', 'map')",
    "redis.setresp(2) return redis.call('debug', 'protocol', 'double')",
    "redis.setresp(2) return redis.call('debug', 'protocol', 'null')",
    "redis.setresp(3) local v = redis.call('debug', 'protocol', 'map') return type(v.map)",
    "redis.setresp(3) local v = redis.call('debug', 'protocol', 'double') return tostring(v.double)",
    "redis.setresp(3) local v = redis.call('debug', 'protocol', 'verbatim') return {v.verbatim_string.format, v.verbatim_string.string}",
    "redis.setresp(3) local v = redis.call('debug', 'protocol', 'bignum') return v.big_number",
    "redis.setresp(3) local v = redis.call('debug', 'protocol', 'null') return type(v)",
    "return redis.call('get', KEYS[1])",
    "return redis.call('get', 'nokey')",
    "return redis.call('lrange', 'nokey', 0, -1)",
    "return redis.call('set', 'x', 1)",
    "return redis.call('incr', 'x')",
    "return redis.call('incrbyfloat', 'x', 0.1)",
    "return redis.pcall('incr', KEYS[1])",
    "return redis.call('incr', KEYS[1])",
    "return redis.call('lpush', KEYS[1], 'val')",
    "return redis.pcall('lpush', KEYS[1], 'val')",
    "local t = redis.pcall('lpush', KEYS[1], 'val') return t['err']",
    "local t = redis.pcall('lpush', KEYS[1], 'val') return tostring(t.ignore_error_stats_update)",
    "return redis.call()",
    "return redis.pcall()",
    "return redis.call('ping', {})",
    "return redis.pcall('ping', {})",
    "return redis.call('echo', 0.1)",
    "return redis.call('echo', 1e20)",
    "return redis.call('echo', -0)",
    "return redis.call('echo', 9007199254740991)",
    "return redis.call('echo', 12039611435714932082)",
    "return redis.call('echo', 1/0)",
    "return redis.call('echo', 0/0)",
    "return redis.call('echo', true)",
    "return a",
    "a=10",
    "\n\na=10",
    "error('my message')",
    "error({err='CUSTOM raised'})",
    "error()",
    "error(12)",
    "error('x', 0)",
    "error('x', 2)",
    "bad script",
    "\\x1bLua",
    "return 'unfinished",
    "return redis.error_reply('MY_ERR_CODE custom msg')",
    "return redis.error_reply('-MY_ERR_CODE custom msg')",
    "return redis.error_reply('no code')",
    "return redis.error_reply('')",
    "return redis.error_reply(1)",
    "return redis.status_reply('MY_OK_CODE custom msg')",
    "return redis.status_reply()",
    "return redis.sha1hex('')",
    "return redis.sha1hex('Pizza & Mandolino')",
    "return redis.sha1hex()",
    "return redis.sha1hex({})",
    "return redis.sha1hex(1)",
    "local ok, e = pcall(function() redis.call('lpush', KEYS[1], 'x') end) return {tostring(ok), e}",
    "local status, res = pcall(function() return foo end); return 'status: ' .. tostring(status) .. ' result: ' .. res",
    "return {pcall(error, {})}",
    "return {pcall(error, {err=5})}",
    "return {xpcall(function() error('x') end, function(e) return 'handled ' .. e end)}",
    "setmetatable(_G, {})",
    "local g = getmetatable(_G); g.__index = {}",
    "redis = function() return 1 end",
    "_G = {}",
    "redis.call = function() return 1 end",
    "cjson.encode = function() return 1 end",
    "cmsgpack.pack = function() return 1 end",
    "bit.lshift = function() return 1 end",
    "rawset(_G, 'x', 1)",
    "rawset(redis, 'call', 1)",
    "setmetatable(redis, {})",
    "table.insert(redis, 1)",
    "return loadfile('x')",
    "return dofile('x')",
    "print('some data')",
    "return os",
    "return io",
    "return debug",
    "return require",
    "return package",
    "return module",
    "return loadstring(string.dump(function() return 1 end))()",
    "return loadstring('return 1 + 1')()",
    "local f, e = loadstring('x x') return e",
    "return type(getmetatable(_G).__index)",
    "return getmetatable(redis)",
    "return getmetatable('').__index == string",
    "return type(rawget(redis, 'call'))",
    "return type(next(string))",
    "return #redis",
    "return redis.REDIS_VERSION",
    "return redis.REDIS_VERSION_NUM",
    "return {redis.REPL_ALL, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_SLAVE, redis.REPL_NONE}",
    "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
    "return redis.replicate_commands()",
    "return redis.breakpoint()",
    "return redis.debug('x')",
    "return redis.nosuchthing",
    "redis.set_repl(12345)",
    "return redis.set_repl(redis.REPL_ALL)",
    "redis.set_repl()",
    "redis.setresp(4)",
    "redis.setresp()",
    "redis.log(1)",
    "redis.log('x', 'y')",
    "redis.log(9, 'y')",
    "return redis.log(redis.LOG_DEBUG, 'x')",
    "local names = {} for k in pairs(_G) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(redis) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(string) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(table) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(math) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(cjson) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(cmsgpack) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(bit) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(struct) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "local names = {} for k in pairs(coroutine) do names[#names+1] = k end table.sort(names) return table.concat(names, ' ')",
    "return {cjson._NAME, cjson._VERSION, cmsgpack._NAME, cmsgpack._VERSION, _VERSION}",
    "return table.concat(cjson.decode('[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]'), ' ')",
    "return cjson.encode({1, 2, 'x', {a=true}})",
    "return cjson.encode({a={b={c={1,2,3}}}})",
    "return cjson.encode('a\"b\\\\c\n/')",
    "return cjson.decode('{')",
    "return cjson.encode()",
    "return cjson.encode(function() end)",
    "local a = {} a[1] = a return cjson.encode(a)",
    "return cjson.encode({[1]=1, [1e9]=1})",
    "return cjson.encode({1/0})",
    "return cjson.encode(0.1)",
    "return cjson.encode(1e100)",
    "return cjson.decode('[1e400]')[1]",
    "return cjson.decode('\"\\\\u00e9\"')",
    "return tostring(cjson.decode('null') == cjson.null)",
    "local h = '' for i = 1, #cmsgpack.pack(0.1) do h = h .. string.format('%02x', string.byte(cmsgpack.pack(0.1), i)) end return h",
    "local s = cmsgpack.pack({1,2,{a=3}}, 'x', true, -5, 2^40, 0.5) local h = '' for i = 1, #s do h = h .. string.format('%02x', s:byte(i)) end return h",
    "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3}))}",
    "return cmsgpack.unpack('\\193')",
    "return cmsgpack.unpack('\\205')",
    "return cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1,2), 0)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2, 0)}",
    "return cmsgpack.unpack_one('\\1', 5)",
    "return cmsgpack.unpack_limit('\\1', -1)",
    "return cmsgpack.pack()",
    "return cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1')",
    "return struct.pack('>I2', 258)",
    "return {struct.unpack('>I2 <i2 b', '\\1\\2\\255\\255\\128')}",
    "return struct.pack('z', 1)",
    "return struct.pack('i40', 1)",
    "return struct.pack('!3 i4', 1)",
    "return struct.pack('i4')",
    "return struct.pack('c5', 'ab')",
    "return struct.unpack('i4', 'abc')",
    "return struct.unpack('s', 'abc')",
    "return struct.unpack('c0', 'abc')",
    "return struct.unpack('i4', 'abcd', 0)",
    "return struct.size('s')",
    "return struct.size('i4i8')",
    "return {struct.unpack('B c0', '\\3abcd')}",
    "return {struct.unpack('>i16', struct.pack('>i16', -1))}",
    "return struct.pack('>i16', -1)",
    "return {bit.tohex(255), bit.tohex(255, -4), bit.tohex(-1, 2), bit.lshift(1, 4), bit.rshift(256, 4), bit.arshift(-256, 4), bit.bnot(0), bit.rol(1, 33), bit.bswap(1)}",
    "return bit.tohex()",
    "return tostring(0xffffffff)",
    "return math.random(0)",
    "return math.random(1,2,3)",
    "return unpack({}, -2147483648, 2147483647)",
    "return {unpack({1,2,3})}",
    "local t = setmetatable({}, {__index=function(t,k) return k..'!' end}) rawset(t, 'a', 1) table.insert(t, 'z') return {t.b, t.a, t[1], rawget(t, 'a')}",
    "local co = coroutine.wrap(function() return redis.call('ping') end) return co()",
    "local co = coroutine.create(function() error('inco') end) return {coroutine.resume(co)}",
    "local co = coroutine.wrap(function() error('inco') end) return co()",
    "local function f(n) return f(n+1)+1 end return f(1)",
    "local function f() pcall(f) end f() return 'done'",
    "return string.format('%99999d', 1)",
    "local t = {} for i=1,100 do t = setmetatable({}, {__index=t}) end return t.x",
    "return string.rep('x', 3, 'y')",
    "return ('x'):upper()",
    "return tostring(nil) .. tostring(true)",
    "return tonumber('0x10')",
    "return tonumber('  12  ')",
    "return 'hello' --trailing comment",
    "local a = {}; setmetatable(a,{__index=function() foo() end}) return a",
    "local a = {}; local b = {a}; a[1] = b; return #redis.call('ping')",
    "return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
    "KEYS[1] = 'x' return KEYS[1]",
    "return redis.call('select', 99)",
    "return redis.pcall('select', 99)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) return {keys[1], args[1], redis.call('get', keys[1])} end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) return KEYS end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) return a end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args)\n a = 1 end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) return redis.breakpoint() end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) redis.register_function('g', function() end) end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) local mt = getmetatable(_G) mt.__index = 1 end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) local n = {} for k in pairs(redis) do n[#n+1] = k end table.sort(n) return table.concat(n, ' ') end)",
    "F:#!lua name=lib\nredis.register_function('f', function(keys, args) local n = {} for k in pairs(_G) do n[#n+1] = k end table.sort(n) return table.concat(n, ' ') end)",
    "F:#!lua name=lib\nreturn math.random()",
    "F:#!lua name=lib\nreturn redis.call('ping')",
    "F:#!lua name=lib\nreturn redis.setresp(3)",
    "F:#!lua name=lib\na = 1",
    "F:#!lua name=lib\nmt = getmetatable(_G)",
    "F:#!lua name=lib\nreturn _G",
    "F:#!lua name=lib\nreturn redis.REDIS_VERSION .. redis.LOG_NOTICE",
    "F:#!lua name=lib\nreturn 1",
    "F:#!lua name=lib\nbad code",
    "F:#!lua name=lib\nredis.register_function()",
    "F:#!lua name=lib\nredis.register_function('f')",
    "F:#!lua name=lib\nredis.register_function('f', function() end, 1, 2)",
    "F:#!lua name=lib\nredis.register_function(nil, function() end)",
    "F:#!lua name=lib\nredis.register_function('f', 'x')",
    "F:#!lua name=lib\nredis.register_function('', function() end)",
    "F:#!lua name=lib\nredis.register_function('f', function() end) redis.register_function('f', function() end)",
    "F:#!lua name=lib\nredis.register_function{function_name=1, callback=function() return 1 end}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'no-writes'}, description='d'}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback='x'}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() end, description={}}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() end, x=1}",
    "F:#!lua name=lib\nredis.register_function{callback=function() end}",
    "F:#!lua name=lib\nredis.register_function{function_name='f'}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() end, flags='x'}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}",
    "F:#!lua name=lib\nredis.register_function{function_name='f', callback=function() end, flags={1}}",
    "F:#!lua name=lib\nredis.register_function{[1]='f'}",
    "F:#!lua name=lib\nerror('boom')",
    "F:#!lua name=lib\nerror({err='X boom'})",
    "F:#!lua name=lib\nerror({})",
    "F:#!lua name=lib\nerror()",
    "F:redis.register_function('f', function() end)",
    "F:#!lua name=lib",
    "F:#!lua\nredis.register_function('f', function() end)",
    "F:#!lua name=a name=b\nredis.register_function('f', function() end)",
    "F:#!lua name=lib x=y\nredis.register_function('f', function() end)",
    "F:#!xyz name=lib\nredis.register_function('f', function() end)",
    "F:#! name=lib\nredis.register_function('f', function() end)",
    "F:#!LUA NAME=lib\nredis.register_function('f', function() end)",
    "F:#!lua name=li-b\nredis.register_function('f', function() end)",
    "F:#!lua name=\"lib\"\nredis.register_function('f', function() return 'q' end)",
    "redis.call('zadd', 'z', 1.5, 'a', 2, 'b') redis.setresp(3) return redis.call('zrange', 'z', 0, -1, 'withscores')",
    "redis.call('zadd', 'z', 1.5, 'a', 2, 'b') redis.setresp(3) local r = redis.call('zrange', 'z', 0, -1, 'withscores') return {r[1][1], tostring(r[1][2].double)}",
    "redis.call('zadd', 'z', 1.5, 'a', 2, 'b') return redis.call('zrange', 'z', 0, -1, 'withscores')",
    "redis.call('sadd', 's', 'a', 'b') redis.setresp(3) local r = redis.call('smembers', 's') return r",
    "redis.call('sadd', 's', 'a') redis.setresp(3) local r = redis.call('smembers', 's') return tostring(r.set.a)",
    "redis.call('hset', 'h2', 'x', 'y') redis.setresp(3) local r = redis.call('hgetall', 'h2') return r.map.x",
    "redis.setresp(3) return redis.call('zscore', 'nokey', 'x')",
    "redis.setresp(3) return redis.call('get', 'nokey')",
    "redis.setresp(3) local v = redis.call('get', 'nokey') return type(v)",
    "redis.setresp(2) local v = redis.call('get', 'nokey') return type(v)",
    "return redis.call('type', 'mykey')",
    "return redis.call('type', 'mykey')['ok']",
    "return {redis.call('type', 'mykey')}",
    "return redis.call('config', 'get', 'maxmemory')",
    "return redis.call('object', 'encoding', 'mykey')",
    "return redis.call('strlen', 'mykey')",
    "return redis.call('mget', 'mykey', 'x', 'mykey')",
    "return tostring(0.1)",
    "return tostring(1e15)",
    "return tostring(1e16)",
    "return tostring(-0)",
    "return tostring(2^53)",
    "return 3.99999",
    "return -0.5",
    "return 1e19",
    "return -1e19",
    "return {1e19}",
    "return string.format('%.17g', 0.1)",
    "return #('\\0abc')",
    "return 'a\\0b'",
    "return {ok='a\\0b'}",
    "return {err='a\\0b'}",
    "return {big_number='a\\0b'}",
    "return {verbatim_string={format='tx\\0', string='a\\0b'}}",
    "return {map={[1]='a', [2]='b'}}",
    "return {map={['\\0']=0}}",
    "return {set={[1]=true, [0.5]=true}}",
    "return {map={x={map={y=1}}}}",
    "return {set={}}",
    "return {map={}}",
    "return {1, {2, {3, {4, {}}}}}",
    "return {true, false, 1, 'x'}",
    "redis.setresp(3) return {true, false, nil, 1}",
    "return redis.error_reply('MY_CODE')",
    "error('line\nbreak')",
    "return redis.call('echo', string.rep('x', 100000)):len()",
    "local t = {} for i = 1, 1000 do t[i] = i end return t",
    "local t = {} for i = 1, 100 do t[tostring(i)] = i end return {map=t}",
    "return redis.sha1hex(string.rep('a', 10000))",
    "return cjson.encode(redis.call('hgetall', 'h'))",
    "return cmsgpack.unpack(cmsgpack.pack(redis.call('hgetall', 'h')))",
    "return struct.unpack('>I4', struct.pack('>I4', 123456789))",
    "local ok, err = pcall(redis.call, 'lpush', KEYS[1], 1) return err",
    "local ok, err = pcall(redis.call, 'lpush', KEYS[1], 1) return type(err)",
    "local ok, err = xpcall(function() redis.call('lpush', KEYS[1], 1) end, function(e) return e end) return err",
    "local ok, err = xpcall(function() redis.call('lpush', KEYS[1], 1) end, function(e) return e end) return err.err",
    "local e = redis.pcall('lpush', KEYS[1], 1) e.err = 'CHANGED ' .. e.err return e",
    "local e = redis.pcall('lpush', KEYS[1], 1) error(e)",
    "local e = redis.pcall('lpush', KEYS[1], 1) error(e.err)",
    "error(redis.error_reply('MINE here'))",
    "return redis.error_reply('MINE here').err",
    "assert(false)",
    "assert(false, 'custom')",
    "assert(nil, {err='TABLE assert'})",
    "return select('#', redis.call('ping'))",
    "return #KEYS + #ARGV",
    "return ARGV",
    "return {#KEYS, KEYS[2] == nil}",
    "return math.floor(3.7)",
    "return math.huge",
    "return -math.huge",
    "return {math.pi}",
    "return string.byte('A')",
    "return ('%d'):format(3)",
    "return ('abc'):rep(2)",
    "return string.gsub('hello world', 'o', '0')",
    "return {string.find('hello', 'l')}",
    "return table.concat({1,2,3}, '-')",
    "local t = {3,1,2} table.sort(t) return t",
    "local t = {3,1,2} table.sort(t, function(a,b) return a > b end) return t",
    "return {table.maxn({1,2,nil,4})}",
    "return type(coroutine.running())",
    "return collectgarbage('count') > 0",
    "return gcinfo() > 0",
    "return _VERSION",
    "return tonumber('0x1p4')",
    "return tonumber('10', 2)",
    "return rawequal(redis, redis)",
    "return rawequal(_G, getmetatable(_G))",
    "return select(-1, 'a', 'b')",
    "return type(next(redis))",
    "return next({}, nil)",
};

/* Length of the first complete RESP reply in p[0..n), -1 if incomplete. */
static long resp_len(const char *p, size_t n) {
    const char *e = memchr(p, '\n', n);
    if (!e) return -1;
    long hdr = e - p + 1;
    long v = atol(p + 1);
    switch (p[0]) {
    case '$': case '=': case '!':
        if (v < 0) return hdr;
        return (size_t)(hdr + v + 2) <= n ? hdr + v + 2 : -1;
    case '*': case '~': case '>': case '%': case '|': {
        if (v < 0) return hdr;
        long cnt = (p[0] == '%' || p[0] == '|') ? v * 2 : v, off = hdr;
        for (long i = 0; i < cnt + (p[0] == '|'); i++) {
            long l = resp_len(p + off, n - (size_t)off);
            if (l < 0) return -1;
            off += l;
        }
        return off;
    }
    default:
        return hdr;
    }
}

struct conn {
    int fd;
    struct rbuf in;
};

static bool conn_open(struct conn *c, int port) {
    memset(c, 0, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    return connect(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0;
}

/* Send argv; the raw reply, valid until the next command. */
static struct slice conn_cmd(struct conn *c, int argc, const struct slice *argv) {
    struct rbuf o = { 0 };
    char h[64];
    int n = snprintf(h, sizeof(h), "*%d\r\n", argc);
    rbuf_append(&o, h, (size_t)n);
    for (int i = 0; i < argc; i++) {
        n = snprintf(h, sizeof(h), "$%zu\r\n", argv[i].len);
        rbuf_append(&o, h, (size_t)n);
        rbuf_append(&o, argv[i].ptr, argv[i].len);
        rbuf_append(&o, "\r\n", 2);
    }
    for (size_t off = 0; off < o.len;) {
        ssize_t w = write(c->fd, o.buf + off, o.len - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
    rbuf_free(&o);
    c->in.len = 0;
    long l;
    while ((l = c->in.len ? resp_len(c->in.buf, c->in.len) : -1) < 0) {
        char *dst = rbuf_reserve(&c->in, 65536);
        ssize_t r = read(c->fd, dst, 65536);
        assert_true(r > 0);
        c->in.len += (size_t)r;
    }
    return (struct slice){ c->in.buf, (size_t)l };
}

static struct slice conn_cmd1(struct conn *c, const char *line) {
    struct slice argv[8];
    int n = 0;
    const char *p = line;
    while (*p && n < 8) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        argv[n++] = (struct slice){ p, len };
        p += len;
        while (*p == ' ') p++;
    }
    return conn_cmd(c, n, argv);
}

static struct conn fwd[4], ev[4];

static int forward(void *ctx, const struct script_call *c, struct rbuf *out) {
    (void)ctx;
    struct slice r = conn_cmd(&fwd[c->resp], c->argc, c->argv);
    rbuf_append(out, r.ptr, r.len);
    return SCRIPT_GO_ON;
}

static pid_t server;

static int start_server(int *port) {
    /* a free port: bind to 0, read it back, let go */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t alen = sizeof(a);
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) || getsockname(s, (struct sockaddr *)&a, &alen)) return -1;
    *port = ntohs(a.sin_port);
    close(s);
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", *port);
    server = fork();
    if (server == 0) {
        int devnull = open("/dev/null", 1);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execlp("redis-server", "redis-server", "--port", portstr, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--enable-debug-command", "yes", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) {
        struct conn c;
        if (conn_open(&c, *port)) {
            close(c.fd);
            return 0;
        }
        close(c.fd);
        struct timespec ts = { 0, 50 * 1000000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}

static bool have_redis_server(void) {
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

static void test_same_as_redis(void **state) {
    (void)state;
    if (!have_redis_server()) {
        print_message("redis-server not installed: skipped\n");
        skip();
    }
    int port = 0;
    assert_int_equal(start_server(&port), 0);
    for (int p = 2; p <= 3; p++) {
        assert_true(conn_open(&fwd[p], port));
        assert_true(conn_open(&ev[p], port));
        if (p == 3) {
            conn_cmd1(&fwd[p], "HELLO 3");
            conn_cmd1(&ev[p], "HELLO 3");
        }
    }
    conn_cmd1(&fwd[2], "DEBUG set-disable-deny-scripts 1");
    struct script_engine *e = script_engine_new();
    struct script_host host = { NULL, forward, NULL, NULL, NULL };
    const struct slice args[] = { SLICE_LIT("mykey"), SLICE_LIT("arg1") };
    struct rbuf want = { 0 }, got = { 0 }, err = { 0 }, name = { 0 };
    int differ = 0, total = 0;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
        bool fn = strncmp(corpus[i], "F:", 2) == 0;
        struct slice body = { corpus[i] + (fn ? 2 : 0), strlen(corpus[i]) - (fn ? 2 : 0) };
        for (int resp = 2; resp <= 3; resp++) {
            total++;
            want.len = got.len = 0;
            /* Redis */
            conn_cmd1(&fwd[2], "FLUSHALL");
            conn_cmd1(&fwd[2], "SCRIPT FLUSH");
            conn_cmd1(&fwd[2], "FUNCTION FLUSH");
            conn_cmd1(&fwd[2], "SET mykey myval");
            conn_cmd1(&fwd[2], "HSET h f v");
            if (fn) {
                const struct slice load[] = { SLICE_LIT("FUNCTION"), SLICE_LIT("LOAD"), body };
                struct slice r = conn_cmd(&ev[resp], 3, load);
                rbuf_append(&want, r.ptr, r.len);
                if (r.ptr[0] != '-') {
                    const struct slice call[] = { SLICE_LIT("FCALL"), SLICE_LIT("f"), SLICE_LIT("1"), args[0], args[1] };
                    r = conn_cmd(&ev[resp], 5, call);
                    rbuf_append(&want, r.ptr, r.len);
                }
            } else {
                const struct slice eval[] = { SLICE_LIT("EVAL"), body, SLICE_LIT("1"), args[0], args[1] };
                struct slice r = conn_cmd(&ev[resp], 5, eval);
                rbuf_append(&want, r.ptr, r.len);
            }
            /* the engine, on the same data */
            conn_cmd1(&fwd[2], "FLUSHALL");
            conn_cmd1(&fwd[2], "SET mykey myval");
            conn_cmd1(&fwd[2], "HSET h f v");
            struct reply r = { &got, (uint8_t)resp };
            if (fn) {
                script_function_flush();
                if (!script_function_load(e, body, true, &name, &err)) {
                    reply_error(&r, err.buf);
                } else {
                    char h[32];
                    int n = snprintf(h, sizeof(h), "$%zu\r\n", name.len);
                    rbuf_append(&got, h, (size_t)n);
                    rbuf_append(&got, name.buf, name.len);
                    rbuf_append(&got, "\r\n", 2);
                    if (script_fcall(e, SLICE_LIT("f"), args, 2, 1, &host, &r) == SCRIPT_RESULT_NOT_FOUND)
                        reply_error(&r, SCRIPT_ERR_NO_FUNCTION);
                }
            } else {
                char sha[41];
                int flags;
                if (!script_load(e, body, sha, &flags, &err))
                    reply_error(&r, err.buf);
                else
                    script_run(e, (struct slice){ sha, 40 }, args, 2, 1, &host, &r);
            }
            if (want.len != got.len || memcmp(want.buf, got.buf, want.len) != 0) {
                differ++;
                print_message("differs, RESP%d: %s\n  redis-server: %.*s\n  engine:       %.*s\n", resp, corpus[i],
                              (int)(want.len > 300 ? 300 : want.len), want.buf, (int)(got.len > 300 ? 300 : got.len),
                              got.buf);
            }
        }
    }
    print_message("%d scripts, RESP2 and RESP3: %d differ\n", total / 2, differ);
    script_function_flush();
    script_flush_all();
    script_engine_free(e);
    for (int p = 2; p <= 3; p++) {
        close(fwd[p].fd);
        close(ev[p].fd);
        rbuf_free(&fwd[p].in);
        rbuf_free(&ev[p].in);
    }
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    rbuf_free(&want);
    rbuf_free(&got);
    rbuf_free(&err);
    rbuf_free(&name);
    fixture_free();
    assert_int_equal(differ, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_redis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
