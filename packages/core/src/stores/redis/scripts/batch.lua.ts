import { readStringLua } from './prelude.lua';

/**
 * The driver of the batch script: many requests in one script call, decided one after the
 * other in the order they were asked, each exactly as its own call would decide it (the same
 * step functions, the same state left behind: see `batchStateLua` for a batch whose keys
 * repeat), the whole batch atomic. Placed after every kind's step,
 * `set_state`, the give-back functions and the `STEPS`, `WRITES` and `BACKS` tables, which list
 * each kind's functions in `STATE_KINDS` order, and after the ops of `batch-ops.lua.ts`.
 *
 * KEYS: every request's keys, one after the other (one Cluster slot: the batch never spans two).
 * ARGV: the policies the batch uses, then the requests, in order:
 *
 * - `P`, then per policy six values: the number of its kind of state (from 1, in `STATE_KINDS`
 *   order) and its numbers padded to five, as the several-rules script reads them;
 * - then runs of alike requests (arrival order kept): `count` (how many requests in a row are
 *   alike), `op` (1 consume, 2 give back, 3 reset), `n` (keys per request), `cost`, `now` (`''`
 *   for the server's time), then the number (from 1) of each key's policy. Every argument costs
 *   Redis about a thousand instructions, so a batch of one limiter's usual requests (cost 1,
 *   the server's time) sends one run: a handful of arguments, whatever its size. Ops 4 and up
 *   (joint decisions, exact give-backs, permits: see `batch-ops.lua.ts`) read arguments of their
 *   own: their run is one request, its `cost` the number of those arguments, which follow it.
 *
 * Replies, per request in order: a consume on several keys, four integers per key (`code,
 * remaining, resetMs, waitMs`, as the several-rules script); a consume on one key, `remaining,
 * resetMs` when it is admitted without delay (`remaining` is never negative), else `-1 - code,
 * remaining, resetMs, waitMs` (the first integer negative); give back and reset, the number of
 * keys changed; ops 4 and up, as `batch-ops.lua.ts` says. A request whose step raises an error
 * replies that error in one element instead (Lua's `pcall`), so one request's failure is its
 * own: the others are decided and written as they would be alone.
 *
 * Time: the server's `TIME` is read once, on the first request without a time of its own, and is
 * "now" for every such request of the batch (they are all decided within microseconds).
 */
/**
 * How the batch script's steps read and write string state, in place of the prelude's
 * `stateAccessLua` and `set_state`. A batch whose keys repeat (a key one or two places after
 * itself: a flash sale's item, one client's address) goes through its own view of its keys, so
 * that a key many of its requests share costs one `GET` and one `PSETEX` per batch instead of
 * per request; any other batch writes as it goes, as the requests would alone (the view costs
 * Redis about 2 k instructions per decision that a batch of distinct keys would not win back),
 * and so does a batch with a sliding log (its sorted sets are written as they go). All give the
 * same verdicts and leave the same state.
 *
 * Without the view, a batch of 16 keys or more reads them all up front (`fetch`): one `MGET`
 * (about 1 k instructions per key, a `GET` 3 k) and, when some came back empty, one `EXISTS` of
 * those, since `MGET` answers nil for a key of another type as for none. When none of them
 * exists they are none; else each of them is read at its first read, as alone (so a key of
 * another type is deleted then, as one by one). A key's fetched value serves its first read
 * only, and only while no write came first: every read after is Redis's. Writes go as they go,
 * so a refused write meets the same requests as one by one. Redis 7 counted (callgrind, gcra,
 * 64 distinct keys a call): 3 % fewer instructions per decision on keys with no state, 5 % on
 * keys holding state; 16 keys is about where `MGET` and `EXISTS` begin to pay.
 *
 * With the view (`take_view`): each key is read once, at its first read (`held`: the value
 * Redis would hold, false for none); a write or a deletion (a reset, a give-back back to the
 * initial state, a key of another type found at a read) only changes the view and is listed
 * (`written_keys`, `written_ttls`: its TTL, 0 to delete); after the last request `flush` sends
 * each listed key once, as its last write left it. The stored state is the last write's, as if
 * each request had written in turn; its TTL runs from the end of the batch instead of from its
 * own request (the same millisecond but for a long batch). Nothing is written before `flush`,
 * so a request that failed midway left in the view exactly what it would have left in Redis.
 *
 * A write Redis refuses (OOM under maxmemory, a read-only replica) fails, request by request,
 * only the requests that write. Under maxmemory Redis refuses a script's `PSETEX` until its first
 * write that is not refused (a `DEL`), whatever the key: `flush` sends first a write of the kind
 * the requests would have sent first, and when Redis refuses it (nothing written yet), the batch
 * is decided again without the view, so that each request meets the refusal itself.
 */
export const batchStateLua = `
-- The functions the steps call, set in batchViewLua (placed after the steps: Lua 5.1 finds each
-- upvalue of a closure it makes among all the open ones above it, so the steps' closures are
-- made before the view's locals are opened).
local del, packed, set_state
`;

/** The rest of `batchStateLua`, placed after every step and table, before the driver. */
export const batchViewLua = `${readStringLua('read')}
-- Without the view, a batch of FETCH_FROM keys or more reads them all up front (see
-- batchStateLua): each key's value as one MGET found it, false for none, until a request reads
-- it or writes it; from then on (or for a key not found here) Redis is asked, as alone.
local fetched = {}

local function del_now(key)
  -- (Setting an absent field to nil would add it to the table, in Lua 5.1.)
  if fetched[key] ~= nil then fetched[key] = nil end
  return redis.call('DEL', key)
end

-- Each TTL's text, made once per batch: a batch mostly writes a few TTLs over and over (one
-- policy's keys admitted in the same millisecond), and a format costs Redis about 1 k
-- instructions, a table lookup a tenth of that.
local ttl_texts = {}

-- ttl_ms 0 deletes the key (a give-back back to the initial state).
local function set_now(key, ttl_ms, value)
  if ttl_ms == 0 then return del_now(key) end
  if fetched[key] ~= nil then fetched[key] = nil end
  local ttl = ttl_texts[ttl_ms]
  if not ttl then
    ttl = format('%d', ttl_ms)
    ttl_texts[ttl_ms] = ttl
  end
  -- SET … PX with less to parse (as the prelude's set_state).
  redis.call('PSETEX', key, ttl, value)
end

-- Below 16 keys, MGET and EXISTS cost Redis more than the GETs they save.
local FETCH_FROM = 16

-- One MGET per thousand keys (a batch never spans two slots). MGET answers nil for a key of
-- another type as for none: the keys it found empty are taken as none only when EXISTS finds
-- none of them, else each is read at its first read (and a key of another type deleted then).
-- Reads then go through fetched, made here only for a batch that fetches (see take_view).
local function fetch()
  local keys, empty, empties = #KEYS, {}, 0
  for from = 1, keys, 1000 do
    local to = min(keys, from + 999)
    local values = redis.call('MGET', unpack(KEYS, from, to))
    for i = from, to do
      local value = values[i - from + 1]
      if value then
        fetched[KEYS[i]] = value
      else
        empties = empties + 1
        empty[empties] = KEYS[i]
      end
    end
  end
  for from = 1, empties, 1000 do
    local to = min(empties, from + 999)
    if redis.call('EXISTS', unpack(empty, from, to)) == 0 then
      for i = from, to do fetched[empty[i]] = false end
    end
  end
  packed = function(key)
    local value = fetched[key]
    if value == nil then return read(key) end
    fetched[key] = nil
    return value
  end
end

-- Without the view: each read and write sent as it happens.
del, packed, set_state = del_now, read, set_now

-- flush, once take_view made it, and how many writes Redis took from it.
local flush
local flushed = 0

-- With the view. Its functions are made here, only for a batch that takes it: each closure a
-- script makes costs Redis, on every call.
local function take_view()
  local held, written_keys, written_ttls, written_values, writes = {}, {}, {}, {}, 0

  local function set_held(key, ttl_ms, value)
    held[key] = value or false
    writes = writes + 1
    written_keys[writes], written_ttls[writes], written_values[writes] = key, ttl_ms, value
  end
  set_state = set_held

  packed = function(key)
    local value = held[key]
    if value == nil then
      value = read(key)
      held[key] = value
    end
    return value
  end

  -- Replies 1 when the key exists (in the view, else in Redis), as DEL would.
  del = function(key)
    local value = held[key]
    local deleted
    if value == nil then
      deleted = redis.call('EXISTS', key)
    else
      deleted = value and 1 or 0
    end
    set_held(key, 0, false)
    return deleted
  end

  -- Sends each listed key once, as its last write left it: going back, a key's last write comes
  -- first and clears its view, so its earlier ones are passed over. Writes of the kind the
  -- first listed is go first (see batchStateLua). Run under pcall: a refused write raises.
  flush = function()
    if writes == 0 then return end
    local first_deletes = written_ttls[1] == 0
    local later_keys, later_ttls, later_values, later = {}, {}, {}, 0
    for i = writes, 1, -1 do
      local key = written_keys[i]
      local value = held[key]
      if value ~= nil then
        held[key] = nil
        local ttl_ms = written_ttls[i]
        if (ttl_ms == 0) == first_deletes then
          set_now(key, ttl_ms, value)
          flushed = flushed + 1
        else
          later = later + 1
          later_keys[later], later_ttls[later], later_values[later] = key, ttl_ms, value
        end
      end
    end
    if flushed == 0 and not first_deletes then
      -- Every PSETEX overwritten by a deletion: the first is sent still, as the requests sent it.
      set_now(written_keys[1], written_ttls[1], written_values[1])
      flushed = 1
    end
    for i = 1, later do
      set_now(later_keys[i], later_ttls[i], later_values[i])
      flushed = flushed + 1
    end
  end
end
`;

export const batchDriverLua = `
-- Effects replication before any write: the only way on Redis 7 (which has REDIS_VERSION), a
-- setting on 5 and 6, asked for on 4 to 6 (as the prelude's nowLua).
if not redis.REDIS_VERSION and redis.replicate_commands then redis.replicate_commands() end
local tonumber = tonumber
local server_now
local function time_of(given)
  local t = tonumber(given)
  if t then return t end
  if not server_now then
    local time = redis.call('TIME')
    server_now = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
  end
  return server_now
end

-- The batch's policies: each one's step, write, give-back and five numbers. WRITES is false for
-- the kinds whose state is a string: theirs is set_state (see batchStateLua).
local STRIDE = 6
local policies = tonumber(ARGV[1])
local kind_of, step_of, write_of, back_of, p1, p2, p3, p4, p5 = {}, {}, {}, {}, {}, {}, {}, {}, {}
for p = 1, policies do
  local at = 1 + (p - 1) * STRIDE
  local kind = tonumber(ARGV[at + 1])
  kind_of[p], step_of[p], back_of[p] = kind, STEPS[kind], BACKS[kind]
  p1[p], p2[p], p3[p] = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
  p4[p], p5[p] = tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6])
end

local reply, r

-- One consume on n keys (first at KEYS[k + 1], their policies' numbers in refs): one rule decides
-- and writes at once; several are all or nothing, as the several-rules script decides them.
local function consume(n, cost, now, k, refs)
  if n == 1 then
    local p = refs[1]
    local key = KEYS[k + 1]
    local code, remaining, reset_ms, wait_ms, ttl_ms, value =
      step_of[p](key, now, cost, p1[p], p2[p], p3[p], p4[p], p5[p])
    if value then write_of[p](key, ttl_ms, value, now, cost) end
    -- An admission without delay (the usual answer) in two integers: each costs Redis about
    -- 800 instructions to reply.
    if code == 0 and wait_ms == 0 then
      reply[r + 1], reply[r + 2] = remaining, reset_ms
      return 2
    end
    reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = -1 - code, remaining, reset_ms, wait_ms
    return 4
  end
  local ttls, values, refs_of = {}, {}, {}
  local admitted = true
  for i = 1, n do
    local p = refs[i]
    local code, remaining, reset_ms, wait_ms, ttl_ms, value =
      step_of[p](KEYS[k + i], now, cost, p1[p], p2[p], p3[p], p4[p], p5[p])
    if code ~= 0 then admitted = false end
    local at = r + (i - 1) * 4
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = code, remaining, reset_ms, wait_ms
    ttls[i], values[i], refs_of[i] = ttl_ms, value, p
  end
  if admitted then
    for i = 1, n do
      local p = refs_of[i]
      if values[i] then write_of[p](KEYS[k + i], ttls[i], values[i], now, cost) end
    end
  elseif cost > 0 then
    -- Nothing is written: a rule that would have admitted reports its state as it stays (a peek).
    for i = 1, n do
      local at = r + (i - 1) * 4
      if reply[at + 1] == 0 then
        local p = refs_of[i]
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] =
          step_of[p](KEYS[k + i], now, 0, p1[p], p2[p], p3[p], p4[p], p5[p])
      end
    end
  end
  return 4 * n
end

-- Gives cost units back to each of n keys (kinds without a give-back are left as they are).
local function give_back(n, cost, now, k, refs)
  local changed = 0
  for i = 1, n do
    local p = refs[i]
    local back = back_of[p]
    if back then
      local key = KEYS[k + i]
      -- A cancel's give-back has no receipt (at, member: 0): only kinds that delay are here.
      local ttl_ms, value = back(key, now, cost, 0, 0, p1[p], p2[p], p3[p], p4[p], p5[p])
      if ttl_ms then
        set_state(key, ttl_ms, value)
        changed = changed + 1
      end
    end
  end
  reply[r + 1] = changed
  return 1
end

-- Deletes n keys (a reset: the next request starts fresh).
local function reset(n, cost, now, k)
  local deleted = 0
  for i = 1, n do deleted = deleted + del(KEYS[k + i]) end
  reply[r + 1] = deleted
  return 1
end

local OPS = { consume, give_back, reset, unpack(OWN_OPS) }

-- The view pays when keys repeat. The sign: a key one or two places after itself (requests in a
-- row on one key; two limiters' requests taking turns, or a request on two rules, then again).
local view = false
local before, previous = false, KEYS[1]
for i = 2, #KEYS do
  local key = KEYS[i]
  if key == previous or key == before then
    view = true
    break
  end
  before, previous = previous, key
end
-- Any other batch of FETCH_FROM keys or more reads them up front (see fetch).
local fetching = not view and #KEYS >= FETCH_FROM
-- Neither the view nor the reads up front with a kind whose state is not a string (the
-- sliding log's sorted sets, which MGET finds empty and EXISTS finds), nor with an op of its own
-- (a joint decision, an exact give-back, a permit): those write as they go, which a batch
-- decided again after a refused write would write twice.
if view or fetching then
  for p = 1, policies do
    if WRITES[kind_of[p]] then view, fetching = false, false end
  end
end
local first_run = 2 + policies * STRIDE
if view or fetching then
  local at = first_run
  while at <= #ARGV do
    local code = tonumber(ARGV[at + 1])
    if code >= FIRST_OWN_OP then
      view, fetching = false, false
      break
    end
    at = at + 5 + tonumber(ARGV[at + 2])
  end
end

if view then
  take_view()
elseif fetching then
  fetch()
end
for _ = 1, 2 do
  for p = 1, policies do write_of[p] = WRITES[kind_of[p]] or set_state end
  reply, r = {}, 0
  local k = 0
  local at = first_run
  local last = #ARGV
  while at <= last do
    local count, code, n, cost = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]),
      tonumber(ARGV[at + 3])
    local op = OPS[code]
    local now = time_of(ARGV[at + 4])
    local refs, width = {}, n
    if code >= FIRST_OWN_OP then
      -- An op with arguments of its own (see batch-ops): cost is how many; refs, where they start.
      refs, width = at + 5, cost
    else
      for i = 1, n do refs[i] = tonumber(ARGV[at + 4 + i]) end
    end
    for _ = 1, count do
      local ok, written = pcall(op, n, cost, now, k, refs, reply, r)
      if ok then
        r = r + written
      else
        -- What the request wrote into the reply before failing is dropped; its error stands in.
        for i = #reply, r + 1, -1 do reply[i] = nil end
        local message = written
        if type(message) == 'table' then message = message.err end
        message = tostring(message)
        if not match(message, '^%u+ ') then message = 'ERR ' .. message end
        r = r + 1
        reply[r] = { err = message }
      end
      k = k + n
    end
    at = at + 5 + width
  end
  if not view then break end
  local flushed_all, refused = pcall(flush)
  if flushed_all then break end
  -- Nothing written yet: decided again without the view, each request meeting the refusal.
  if flushed > 0 then error(refused) end
  view = false
  del, packed, set_state = del_now, read, set_now
end
return reply
`;
