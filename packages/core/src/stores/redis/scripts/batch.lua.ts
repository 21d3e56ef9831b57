import { floorLua } from './lua-math';
import { LATE_REPLY_LUA } from './prelude.lua';

/**
 * Values per policy in the batch script's arguments: the number of its kind of state and its
 * five numbers (padded), as the several-rules script reads them (see `runBatch`).
 */
export const STRIDE = 6;

/** The batch script's parts, as `scripts/index.ts` assembles them (see {@link batchDriverLua}). */
export interface BatchParts {
  /** `RUNS` and `consume_run` (see `consume-run.lua.ts`). */
  readonly consumeRun: string;
  /** `view_of_keys` (see `batch-view.lua.ts`), made for a batch whose keys repeat. */
  readonly view: string;
  /**
   * Made for a batch that needs them: every kind's step as a function with `STEPS`, `WRITES`,
   * `BACKS`, the give-backs and the joint decision.
   */
  readonly generic: string;
  /** The joint and exact give-back ops (see `batch-ops.lua.ts`), after `consume`, `give_back`, `reset`. */
  readonly genericOps: string;
  /** The permits' functions (see `concurrency-scripts.lua.ts`), made for a batch with a permit op. */
  readonly permits: string;
  /** The permits' ops, after them (see `batch-ops.lua.ts`). */
  readonly permitOps: string;
}

/**
 * The driver of the batch script: many requests in one script call, decided one after the
 * other in the order they were asked, each exactly as its own call would decide it (the same
 * step functions, the same state left behind: see `batch-view.lua.ts` for a batch whose keys
 * repeat), the whole batch atomic. Placed after the batch's reads and writes
 * (`batchReadsLua`, see `batch-view.lua.ts`).
 *
 * KEYS: every request's keys, one after the other (one Cluster slot: the batch never spans two).
 * ARGV: the policies the batch uses, then the requests, in order:
 *
 * - `P`, then per policy six values ({@link STRIDE}): the number of its kind of state (from 1,
 *   in `STATE_KINDS` order) and its numbers padded to five, as the several-rules script reads
 *   them;
 * - then runs of alike requests (arrival order kept): `count` (how many requests in a row are
 *   alike), `op` (1 consume, 2 give back, 3 reset), `n` (keys per request), `cost`, `now` (`''`
 *   for the server's time), then the number (from 1) of each key's policy. Every argument costs
 *   Redis about a thousand instructions, so a batch of one limiter's usual requests (cost 1,
 *   the server's time) sends one run: a handful of arguments, whatever its size. A run whose
 *   requests are all on the same keys (a flash sale's hot item) sends them once, its `count`
 *   negated: KEYS then holds the run's `n` keys once, not once per request. Ops 4 and up
 *   (joint decisions, exact give-backs, permits: see `batch-ops.lua.ts`) read arguments of their
 *   own: their run is `count` alike requests (the same op, number of keys and of arguments, time
 *   and shared values), its `cost` the number of each one's arguments, then `s` and the `s`
 *   values its requests share, then each one's arguments one request after the other (a hot
 *   key's acquires send `max` and `leaseMs` once, then a lease id each; its releases a lease id
 *   each).
 *
 * Replies, per request in order: a consume on several keys, four integers per key (`code,
 * remaining, resetMs, waitMs`, as the several-rules script); a consume on one key, `remaining,
 * resetMs` when it is admitted without delay (`remaining` is never negative), else `-1 - code,
 * remaining, resetMs, waitMs` (the first integer negative); give back and reset, the number of
 * keys changed; ops 4 and up, as `batch-ops.lua.ts` says. A request whose step raises an error
 * replies that error in one element instead (Lua's `pcall`), so one request's failure is its
 * own: the others are decided and written as they would be alone.
 *
 * A run of one-key consumes on a policy whose state is a string (the usual batch), through the
 * view or not, goes through `consume_run` (given as `consumeRunLua`, see `scripts/index.ts`): the
 * same decisions, writes and replies, with the kind's step inline and one `pcall` for the run (a
 * request that raises is replied its error and the run goes on from the next).
 *
 * A joint decision (op 4, see `joint.lua.ts`) on string states without a block reads its keys as
 * a consume on several keys does (one `MGET` up front, or the view when they repeat) and writes
 * through `set_state`: one command per admitted key, not a `GET` and a write.
 *
 * Time: the server's `TIME` is read once, on the first request without a time of its own, and is
 * "now" for every such request of the batch (they are all decided within microseconds). A run's
 * `now` may carry its deadline on the server's clock (the earliest of its requests', see the
 * prelude's `nowLua`): `-<deadline>`, or `<now>@<deadline>`; a run past it is neither decided nor
 * written, and each of its requests is replied `SLUICE_LATE` (an error in its place).
 *
 * What else a batch may need is made only when its runs need it: Redis runs a script's whole
 * text on every call, and each function and table it makes costs (about 0.4 k and 0.7 k
 * instructions, more with upvalues: the batch script that made its 39 functions and 22 tables
 * up front spent about 90 k instructions a call before deciding anything). The driver looks at
 * the keys and the runs first; `view` is made for a batch whose keys repeat; `generic` (every
 * kind's step as a function, the give-backs, the joint decision, and the ops that use them) for
 * a consume on several keys or on a sliding log, a give-back, a reset or a joint decision;
 * `permits` (the permits' functions and ops) for a permit op. The usual batch, one-key consumes
 * on string states (distinct keys, or a hot one through the view), makes neither generic nor
 * permits.
 */
export const batchDriverLua = ({
  consumeRun,
  view,
  generic,
  genericOps,
  permits,
  permitOps,
}: BatchParts): string => `
-- Effects replication before any write: the only way on Redis 7 (which has REDIS_VERSION), a
-- setting on 5 and 6, asked for on 4 to 6 (as the prelude's nowLua).
if not redis.REDIS_VERSION and redis.replicate_commands then redis.replicate_commands() end
local tonumber = tonumber
local server_now
-- Whether the time of the run being decided was sent (see the prelude's nowLua): its steps read it.
local clocked = false
-- A run's time, and whether the run is past its deadline (see the runs): then it is not decided.
local function time_of(given)
  local t = tonumber(given)
  if t and t >= 0 then
    clocked = true
    return t
  end
  local deadline
  if t then
    deadline, t = -t, nil
  elseif given ~= '' then
    local cut = string.find(given, '@', 1, true)
    deadline, t = tonumber(string.sub(given, cut + 1)), tonumber(string.sub(given, 1, cut - 1))
  end
  clocked = t ~= nil
  if not server_now then
    local time = redis.call('TIME')
    local ms = time[2] / 1000
    server_now = time[1] * 1000 + ${floorLua('ms')}
  end
  return t or server_now, deadline and server_now > deadline
end

-- The batch's policies, in one table (each table a script makes costs Redis): policy p's kind of
-- state at pol[p * STRIDE - 5], its five numbers after it, to pol[p * STRIDE]. The generic ops
-- add each one's step, write and give-back.
local STRIDE = ${STRIDE}
local policies = tonumber(ARGV[1])
local pol = {}
for i = 1, policies * STRIDE do pol[i] = tonumber(ARGV[i + 1]) end

local reply, r

-- Replies a request's error in one element, in place of what it wrote into the reply.
local function reply_error(err)
  for i = #reply, r + 1, -1 do reply[i] = nil end
  local message = err
  if type(message) == 'table' then message = message.err end
  message = tostring(message)
  if not match(message, '^%u+ ') then message = 'ERR ' .. message end
  r = r + 1
  reply[r] = { err = message }
end
${consumeRun}

-- Ops by code (1 consume, 2 give back, 3 reset, then those with arguments of their own, from
-- FIRST_OWN_OP: see batch-ops.lua.ts), each made below only for a batch that needs it.
local FIRST_OWN_OP, FIRST_PERMIT_OP = 4, 6
local OPS = {}
-- Made with the generic ops: each policy's step, write and give-back, and what binds the writes
-- to the current set_state (the view changes it).
local step_of, write_of, back_of, bind_writes

-- The view pays when keys repeat. The sign: a run on the same keys (see the runs), or a key one
-- or two places after itself (two limiters' requests taking turns, or a request on two rules,
-- then again).
local repeats = false
local before, previous = false, KEYS[1]
for i = 2, #KEYS do
  local key = KEYS[i]
  if key == previous or key == before then
    repeats = true
    break
  end
  before, previous = previous, key
end
-- Neither the view nor the reads up front (see fetch) with a kind whose state is not a string
-- (the sliding log's sorted sets, which MGET finds empty and EXISTS finds), nor with an op of its
-- own (an exact give-back, a permit, a joint decision with a block or on a state that is not a
-- string: see the runs): those write as they go, which a batch decided again after a refused
-- write would write twice.
local strings = true
for p = 1, policies do
  if not RUNS[pol[p * STRIDE - 5]] then strings = false end
end
-- What the runs need besides consume_run: the generic ops (any other op, a consume on several
-- keys or on a state that is not a string), the permits' ops.
local first_run = 2 + policies * STRIDE
local generic, permits = false, false
local at = first_run
while at <= #ARGV do
  local count, code, n = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  if count < -1 then repeats = true end
  if code >= FIRST_OWN_OP then
    if code >= FIRST_PERMIT_OP then permits = true else generic = true end
    if code == FIRST_OWN_OP then
      -- On string states without a block (read and written as it goes), as a consume does.
      local a = at + 7
      for _ = 1, tonumber(ARGV[at + 6]) do
        local keys = tonumber(ARGV[a])
        if tonumber(ARGV[a + 3]) >= 4 then
          strings = false
          break
        end
        a = a + 4
        for _ = 1, keys do
          if not RUNS[tonumber(ARGV[a])] then strings = false end
          a = a + 6
        end
      end
    else
      strings = false
    end
    at = at + 6 + tonumber(ARGV[at + 5]) + count * tonumber(ARGV[at + 3])
  else
    if code ~= 1 or n ~= 1 or not RUNS[pol[tonumber(ARGV[at + 5]) * STRIDE - 5]] then generic = true end
    at = at + 5 + n
  end
end
local view = repeats and strings
-- Any other batch of FETCH_FROM keys or more reads them up front.
local fetching = not repeats and strings and #KEYS >= FETCH_FROM

if generic then
  -- In a function of its own: the functions made inside take the batch's locals through its
  -- upvalues, not each from the list of every open one (Lua 5.1's findupval walks it).
  (function()
${generic}

  -- One consume on n keys (first at KEYS[k + 1], their policies' numbers in refs): one rule
  -- decides and writes at once; several are all or nothing, as the several-rules script decides them.
  local function consume(n, cost, now, k, refs)
    if n == 1 then
      local p = refs[1]
      local key = KEYS[k + 1]
      local b = p * STRIDE
      local code, remaining, reset_ms, wait_ms, ttl_ms, value =
        step_of[p](key, now, cost, pol[b - 4], pol[b - 3], pol[b - 2], pol[b - 1], pol[b])
      if value then write_of[p](key, ttl_ms, value, now, cost) end
      -- An admission without delay (the usual answer) in two integers: each costs Redis about
      -- 500 instructions to reply.
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
      local b = p * STRIDE
      local code, remaining, reset_ms, wait_ms, ttl_ms, value =
        step_of[p](KEYS[k + i], now, cost, pol[b - 4], pol[b - 3], pol[b - 2], pol[b - 1], pol[b])
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
          local b = p * STRIDE
          reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] =
            step_of[p](KEYS[k + i], now, 0, pol[b - 4], pol[b - 3], pol[b - 2], pol[b - 1], pol[b])
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
        local b = p * STRIDE
        local ttl_ms, value = back(key, now, cost, 0, 0, pol[b - 4], pol[b - 3], pol[b - 2], pol[b - 1], pol[b])
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
${genericOps}
  OPS[1], OPS[2], OPS[3] = consume, give_back, reset
  step_of, write_of, back_of = {}, {}, {}
  for p = 1, policies do
    local kind = pol[p * STRIDE - 5]
    step_of[p], back_of[p] = STEPS[kind], BACKS[kind]
  end
  -- A string's write is set_state, chosen per pass (the view's, or Redis's at once).
  bind_writes = function()
    for p = 1, policies do write_of[p] = WRITES[pol[p * STRIDE - 5]] or set_state end
  end
  end)()
end
if permits then
  (function()
${permits}
${permitOps}
  end)()
end

if view then
  (function()
${view}
    view_of_keys()
  end)()
elseif fetching then
  fetch()
end
for _ = 1, 2 do
  if bind_writes then bind_writes() end
  reply, r = {}, 0
  local k = 0
  local at = first_run
  local last = #ARGV
  while at <= last do
    local count, code, n, cost = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]),
      tonumber(ARGV[at + 3])
    -- A run on the same keys: they are in KEYS once.
    local same = count < 0
    if same then count = -count end
    local now, late = time_of(ARGV[at + 4])
    local refs, width, shared = {}, n, nil
    local own = code >= FIRST_OWN_OP
    if own then
      -- Ops with arguments of their own (see batch-ops): cost is how many each request has,
      -- after the run's shared values (their count, then them); refs, where the first request's
      -- start (the next request's follow).
      local s = tonumber(ARGV[at + 5])
      shared, refs, width = at + 6, at + 6 + s, 1 + s + count * cost
    else
      for i = 1, n do refs[i] = tonumber(ARGV[at + 4 + i]) end
    end
    if late then
      -- Past the run's deadline (its callers have decided without Redis): nothing decided or
      -- written, each request replied the error that says so.
      for _ = 1, count do
        r = r + 1
        reply[r] = ${LATE_REPLY_LUA}
      end
      k = k + (same and n or count * n)
    elseif code == 1 and n == 1 and RUNS[pol[refs[1] * STRIDE - 5]] then
      -- The usual run (see consume_run): one pcall for the run while no request fails.
      local from = 1
      while from <= count do
        local ok, err = pcall(consume_run, refs[1], count, cost, now, k, from, view, same)
        if ok then break end
        reply_error(err)
        from = deciding + 1
      end
      k = k + (same and 1 or count)
    else
      local op = OPS[code]
      for _ = 1, count do
        local ok, written = pcall(op, n, cost, now, k, refs, reply, r, shared)
        if ok then
          r = r + written
        else
          -- What the request wrote into the reply before failing is dropped; its error stands in.
          reply_error(written)
        end
        if not same then k = k + n end
        if own then refs = refs + cost end
      end
      if same then k = k + n end
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
