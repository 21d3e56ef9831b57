import { floorLua } from './lua-math';

/**
 * No step writes a time further ahead of the clock that reads it than clocks disagree (tested at
 * 30 s; nginx forgives a minute back): a state from further ahead was not written by sluice. The
 * state readers have it written in as a number: a local of the prelude that a function uses is an
 * upvalue, which Redis pays for (about 0.4 k instructions) each time the script creates the
 * function, on every call.
 */
export const AHEAD_MS = 3_600_000;

/**
 * Lua true where Redis has `SET … KEEPTTL` (6.0 and later, which have `redis.setresp`; the
 * store supports Redis 4.0 on): read only where a step could keep an expiry.
 */
export const CAN_KEEP_TTL_LUA = 'redis.setresp';

/**
 * The locals every script may use, declared before the algorithm functions (see {@link withPrelude}).
 *
 * Redis runs Lua 5.1, where every number is an IEEE double as in JavaScript: the algorithm
 * functions repeat the TypeScript `step` functions operation for operation, so both compute the
 * same integers. Two traps are handled once: state is stored as the doubles themselves (see
 * `state-bytes.lua.ts`; `tostring` would print 14 significant digits), and replies are integers
 * only (Redis truncates a float).
 *
 * What a decision costs inside Redis was measured (instructions of redis-server per EVALSHA):
 * each command a script runs, each argument it is sent and converts, each table it replies and
 * each closure it creates counts. So an admission runs three commands (`TIME`, `GET`,
 * `PSETEX`, or `SET … KEEPTTL` for a window's: see {@link KEEP_TTL}; two with a limiter `clock`)
 * and a rejection two, the state is one string of packed
 * doubles written with its expiry, and a single-rule script is sent only the numbers it needs.
 *
 * State is read defensively: each algorithm's state reader (`<name>StateLua`, inlined
 * where it is used: see `lua-block.ts`) gives the key's fields
 * only when the policy's own step could have written them (the right type, the right number of
 * fields' bytes, finite numbers within the ranges the step keeps, whole where the step keeps
 * whole numbers, no time more than `AHEAD_MS` ahead);
 * anything else is deleted and read as no state, so the decision is exactly a fresh key's, and
 * an admission writes valid state with its TTL in its place. (A policy tightened since the state
 * was written may find it past its capacity: that key starts afresh, once.)
 *
 * Every algorithm's step (a function, or inlined: see `lua-block.ts`) has the shape
 * `step(key, now, cost, per_window, window, burst, nodelay, delay)` (trailing parameters it does
 * not use are left out) and returns `code, remaining, reset_ms, wait_ms, ttl_ms, value`:
 * `code` 0 admitted, 1 limited, 2 cost-exceeds-capacity; `wait_ms` the delay of an admission or
 * the retry time of a rejection; `value` the state to write for `ttl_ms` (or, with
 * {@link KEEP_TTL}, under the key's expiry as it is), or nil to leave the
 * key as it is (a rejection, a peek). Computing and writing are apart so that several limits can
 * all be computed before any is written; the one write a step makes itself is deleting state it
 * cannot read, which it decides on as none anyway.
 */
const PRELUDE: ReadonlyArray<readonly [local: string, value: string]> = [
  ['floor', 'math.floor'],
  ['ceil', 'math.ceil'],
  ['max', 'math.max'],
  ['min', 'math.min'],
  ['format', 'string.format'],
  ['match', 'string.match'],
  ['ssub', 'string.sub'],
  ['srep', 'string.rep'],
  ['spack', 'struct.pack'],
  ['sunpack', 'struct.unpack'],
  ['AHEAD_MS', String(AHEAD_MS)],
  ['can_keep_ttl', CAN_KEEP_TTL_LUA],
];

/**
 * A script: `body` after the prelude's locals that it uses (each read of a library's field costs
 * Redis about 100 instructions, on every call: a lone gcra decision uses four of nine).
 */
export function withPrelude(body: string): string {
  const used = PRELUDE.filter(([name]) => new RegExp(`\\b${name}\\b`).test(body));
  if (used.length === 0) return body;
  return `local ${used.map(([name]) => name).join(', ')} = ${used.map(([, value]) => value).join(', ')}
${body}`;
}

/**
 * How the steps read and delete state, one command each: `packed(key)`, the string at key or
 * false (another type there, a list, a hash..., is no state of ours: it is deleted and read as
 * none, so one key's data never makes a decision fail; only WRONGTYPE is the key's fault, any
 * other error is the server's, and raised); `del(key)`, which deletes a key whatever it holds
 * and replies how many it deleted. The batch script has its own (see `batch-view.lua.ts`).
 */
export const stateAccessLua = `
local function del(key)
  return redis.call('DEL', key)
end
${readStringLua('packed')}`;

/**
 * `local function <name>(key)`: the string at key, or false; another type there is deleted by
 * `del` (whichever `del` is in scope: the batch script's may be its view's) and read as none.
 */
export function readStringLua(name: string): string {
  return `
local function ${name}(key)
  local value = redis.pcall('GET', key)
  if type(value) == 'table' then
    if not match(value.err, '^WRONGTYPE') then error(value) end
    del(key)
    return false
  end
  return value
end
`;
}

/**
 * The error a script answers for a request that reached Redis past its deadline, having decided
 * and written nothing (see {@link nowLua}); its message starts with this code.
 */
export const LATE_CODE = 'SLUICE_LATE';

/** The reply of a request past its deadline: Lua's error reply, in one element of a batch's. */
export const LATE_REPLY_LUA = `{ err = '${LATE_CODE} reached Redis past its deadline: nothing was taken' }`;

/**
 * The request's time: `given` (epoch ms as text), or when it is absent the server's clock, so
 * that app servers whose clocks disagree still share one exact limit. Writing after `TIME` needs
 * effects replication, the default since Redis 5 (a setting there) and the only way since 7
 * (which has `REDIS_VERSION`); Redis 4 to 6 are asked for it. Not calling it on 7 spares Redis
 * about 1 k instructions per decision.
 *
 * A request may bring a deadline on the server's clock (epoch ms, see `server-clock.ts`): the
 * time the caller stops waiting and decides without Redis, mapped so that it is never later.
 * `given` is then `-<deadline>` (the server's time) or `<now>@<deadline>`; past it, the script
 * decides and writes nothing and answers {@link LATE_CODE}, so a request decided by the
 * caller's `onStoreError` is not charged here too.
 *
 * Declares `now` and `clocked` (whether the caller sent its time: `<now>` or `<now>@<deadline>`,
 * not `-<deadline>`), which the steps read: a script that defines steps as functions places this
 * before them.
 *
 * @param given - Lua expression: the time argument (nil when absent)
 * @param deadline - Lua expression: a deadline the script read elsewhere (the single-rule
 *   scripts' folded into the cost's place), used when `given` is absent
 */
export const nowLua = (given: string, deadline = 'nil'): string => `
-- Usually absent: tonumber is called only on a time that was sent.
local now = ${given}
local clocked, deadline = false, ${deadline}
if now then
  local sent = now
  now = tonumber(sent)
  if now and now < 0 then
    deadline, now = -now, nil
  elseif not now and sent ~= '' then
    local cut = string.find(sent, '@', 1, true)
    deadline, now = tonumber(string.sub(sent, cut + 1)), tonumber(string.sub(sent, 1, cut - 1))
  end
  -- A time sent by the caller (a limiter's clock, possibly skewed) gets exact expiries (see expiry.lua.ts).
  clocked = now ~= nil
end
if not now or deadline then
  if not redis.REDIS_VERSION and redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  -- Arithmetic reads the reply's two texts as tonumber would (each once: each read is a strtod),
  -- and floors, without a call.
  local ms = time[2] / 1000
  local server_now = time[1] * 1000 + ${floorLua('ms')}
  if deadline and server_now > deadline then return ${LATE_REPLY_LUA} end
  now = now or server_now
end
`;

/**
 * The TTL a step gives a write that keeps the key's expiry (`SET … KEEPTTL`): the windows', whose
 * state needs the same expiry (the window's end) at every admission of the window, so only the
 * admission that opens a window sets it. It costs Redis about half a `PSETEX` (callgrind, Redis
 * 7.0: 6.7 k instructions per write from Lua against 12.3 k: no expiry to take out, add back and
 * rewrite for replication). A step keeps only an expiry that its own earlier write set, for the
 * state it reads: every writer of a window's state sets the expiry from the window's start.
 */
export const KEEP_TTL = -1;

/** Lua writing a string state under the key's expiry as it is: a write given {@link KEEP_TTL}. */
export function keepStateLua(key: string, value: string, call = 'redis.call'): string {
  return `${call}('SET', ${key}, ${value}, 'KEEPTTL')`;
}

/**
 * The TTL a step gives a write that appends its value to the key's string, keeping the key's
 * expiry (`APPEND`): the packed sliding log's, whose admissions add their entries to the string
 * Redis holds instead of sending it whole (see `packed-log.lua.ts`). A step appends only to the
 * state it read, whose expiry its own earlier write set.
 */
export const APPEND_TTL = -2;

/**
 * Lua writing a string state: `PSETEX` (`SET … PX` with less to parse) for `ttl`, or with
 * {@link KEEP_TTL} a `SET … KEEPTTL`, with {@link APPEND_TTL} an `APPEND`.
 */
export function writeStateLua(key: string, ttl: string, value: string, call = 'redis.call'): string {
  return `if ${ttl} == ${KEEP_TTL} then
    ${keepStateLua(key, value, call)}
  elseif ${ttl} == ${APPEND_TTL} then
    ${call}('APPEND', ${key}, ${value})
  else
    ${call}('PSETEX', ${key}, format('%d', ${ttl}), ${value})
  end`;
}

/**
 * Writes one packed string and its time-to-live in one command: no key ever lives without an
 * expiry, and none outlives the state it holds (a window's write may keep the expiry it has:
 * see {@link KEEP_TTL}; a packed log's may append to the string: see {@link APPEND_TTL}).
 */
export const setStateLua = `
local function set_state(key, ttl_ms, value)
  ${writeStateLua('key', 'ttl_ms', 'value')}
end
`;
