import { inlineLua, type LuaBlock } from './lua-block';
import { intTextLua } from './int-text.lua';
import { AHEAD_MS } from './prelude.lua';

/**
 * The log's state: its live entries and its newest time, or 0, false for an empty log (see the
 * prelude). Live means after the log's own time (`now`, or the newest entry when that is later)
 * minus `window`. The newest time is read from its member's name, not WITHSCORES: Redis prints
 * a score as a double (about 4 k instructions), and the name starts with the same whole number.
 */
export const slidingLogStateLua: LuaBlock = {
  params: ['key', 'now', 'limit', 'window'],
  body: (ret, io) => `
local top = redis.pcall('ZRANGE', key, '-1', '-1')
local name = top[1]
if name then
  local newest = tonumber(match(name, '^(-?%d+):%d+$'))
  if newest and newest <= now + ${AHEAD_MS} then
    if newest <= now - window then
      -- The newest entry has left (a key idle for a window): so have all, without counting, if
      -- its score is its name's time. A member scored later than its name says (+inf) is never
      -- trimmed and stays the top: the log would read idle for good. One ZSCORE, on this path only.
      if tonumber(redis.call('ZSCORE', key, name)) == newest then ${ret('0, newest')} end
    else
      local at = now
      if newest > now then at = newest end
      -- All entries less those that have left (ZCARD reads a count; ZCOUNT walks what it counts, in
      -- a listpack, Redis's form of a sorted set up to 128 entries: here only the entries that left).
      local cut = at - window
      ${intTextLua('cut_text', 'cut', 'log_cut', io.memo === true)}
      local live = redis.call('ZCARD', key) - redis.call('ZCOUNT', key, '-inf', cut_text)
      if live <= limit then ${ret('live, newest')} end
    end
  end
elseif not top.err then
  ${ret('0, false')}
elseif not match(top.err, '^WRONGTYPE') then
  error(top)
end
${io.del('key')}
${ret('0, false')}`,
};

/**
 * Sliding log, the Lua twin of `algorithms/sliding-log.ts`, for a limit above `PACKED_LOG_MAX`
 * (a smaller limit's log is one string: see `packed-log.lua.ts`). State: a sorted set with one member
 * per admitted unit, scored by its time (ms). Members with score t are named `t:0`, `t:1`, …
 * (the steps read a member's time from its name: cheaper than a score in the reply), so
 * the units of one millisecond stay distinct (ten requests in one ms count as ten). Trimming
 * removes whole scores, so the names in use at t are `t:0` to `t:(n-1)` unless a give-back
 * removed an admission's members (`log_write` then numbers after the highest in use).
 *
 * The log's time never goes back (see the reference): a request behind the newest entry is
 * decided and recorded at the newest entry's time. So the entries that have left (at or before
 * that time minus the window) never count again, and the log need not be trimmed at every
 * admission: only the first admission of each window-long span of time (spans start at the
 * multiples of `window`) trims it and sets its expiry, to the end of the next span, which
 * outlives every entry added in the span. The others only add their entry: one command instead of three. A log
 * holds at most the entries of about two windows. What `log_write` must do the step leaves in
 * `log_mode`; the write's `value` is the time of the entries.
 *
 * Read defensively, as the packed states are (see the prelude): a key of another type, a log
 * with more live entries than the limit (no admission leaves one), a newest member not named
 * `<time>:<n>`, an entry more than `AHEAD_MS` ahead (`+inf` included), a log found idle whose
 * newest member is scored other than its name says, or a refusal's leaving entry whose time
 * (by name, else by score) is not in the log's live span, is deleted and read as an empty log,
 * so `ZADD` then starts a new one.
 */
export const slidingLogLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'limit', 'window'],
  body: (ret, io) => `
${inlineLua(slidingLogStateLua, ['key', 'now', 'limit', 'window'], ['live', 'newest'], io)}
local at = now
if newest and newest > now then at = newest end
local reset_ms = 0
if live > 0 then reset_ms = max(0, newest + window - now) end
if cost > limit then ${ret('2, max(0, limit - live), reset_ms, 0')} end
if live + cost > limit then
  -- The oldest live units must leave first: the k-th of them leaves at its time + window.
  local leaving = redis.call('ZRANGEBYSCORE', key, '(' .. format('%d', at - window), '+inf', 'LIMIT',
    format('%d', live + cost - limit - 1), '1')[1]
  -- Its time from its name too, which a live entry's lies in (at - window, newest]; a name not
  -- of the log's making, or out of that range, costs a ZSCORE.
  local left = tonumber(match(leaving, '^(-?%d+):'))
  if not (left and left > at - window and left <= newest) then
    left = tonumber(redis.call('ZSCORE', key, leaving))
  end
  if left and left > at - window and left <= newest then
    ${ret('1, max(0, limit - live), reset_ms, left + window - now')}
  end
  -- Its score out of that range too (+inf, or ahead of the newest's name): no wait can be told
  -- from it. The log is not of sluice's making: deleted, and the request decided on none.
  ${io.del('key')}
  live, newest, at, reset_ms = 0, false, now, 0
end
if cost == 0 then ${ret('0, limit - live, reset_ms, 0')} end
local ttl_ms = at + window - now
-- The expiry a write that sets one gives: the end of the span after at's (see above).
local keep = at - at % window + 2 * window - now
if not newest then
  log_mode[key] = 'new'
elseif newest == at then
  log_mode[key] = 'named'
elseif newest - newest % window ~= at - at % window then
  log_mode[key] = at - window
else
  log_mode[key] = false
end
${ret('0, limit - live - cost, ttl_ms, 0, keep, at')}`,
};

/**
 * The sliding log's write, `log_write`, and the table `log_mode` its step sets: the functions
 * a script with the sliding log's step defines before it.
 *
 * With `memo` (a script deciding many requests: see `StateIo.memo`), the texts of the numbers the
 * commands are sent are kept, the last of each (the cutoff a log was counted at, the time entries
 * were added at, the first entry's name then): a batch decides its requests at one "now", so
 * its logs share them, and a format costs Redis about 2 k instructions, a comparison a few dozen
 * (callgrind, a batch of 64 logs of their own: 58.1 k → 54.6 k instructions per decision). A
 * lone decision's script makes each text once: without the memo, whose locals cost it about 1 k.
 */
export const slidingLogWriteLua = (memo: boolean): string => `
-- What the write of an admission must do besides its ZADD, by key: set by the step that admits,
-- read and cleared by the write that follows it. false: nothing (the usual request); 'named':
-- entries are named at its time already, number after them; 'new': no log yet, set its expiry;
-- a number: the span changed, trim the entries at or before that time and set the expiry.
local log_mode = {}
${memo ? 'local log_cut_ms, log_cut_text, log_at_ms, log_at_text, log_at_first' : ''}

-- Trims only when writing: a rejection leaves the log exactly as it was, as the reference does.
-- Returns the index of the first member added, the admission's receipt for a give-back.
local function log_write(key, keep_ms, time, now, cost)
  local mode = log_mode[key]
  log_mode[key] = nil
  if type(mode) == 'number' then redis.call('ZREMRANGEBYSCORE', key, '-inf', format('%d', mode)) end
  ${intTextLua('at', 'time', 'log_at', memo, 'log_at_first = false')}
  local taken = 0
  if mode == 'named' then
    taken = redis.call('ZCOUNT', key, at, at)
    -- The names in use are at:0 to at:(taken - 1), so at:taken is free, unless a give-back removed
    -- one below the highest. NX adds it only if free: no need to read every name of the
    -- millisecond (a hot key's run in one batch read them all at each request).
    if cost == 1 and redis.call('ZADD', key, 'NX', at, at .. ':' .. format('%d', taken)) == 1 then
      return taken
    end
    -- Number after the highest in use, so that a name is never reused while it is in the log.
    for _, name in ipairs(redis.call('ZRANGEBYSCORE', key, at, at)) do
      local index = tonumber(match(name, ':(%d+)$'))
      if index and index >= taken then taken = index + 1 end
    end
  end
  if cost == 1 then
    -- The usual request, without the batches' table and unpack; the first name of a millisecond
    -- without a format (each costs Redis about 0.4 k instructions).
    local name
    if taken > 0 then
      name = at .. ':' .. format('%d', taken)
    else
      ${
        memo
          ? `-- The memo's, made again when its time changed.
      name = log_at_first
      if not name then
        name = at .. ':0'
        log_at_first = name
      end`
          : `name = at .. ':0'`
      }
    end
    redis.call('ZADD', key, at, name)
  else
    -- ZADD in batches: Lua's unpack fails past a few thousand values.
    local BATCH = 1000
    for first = 0, cost - 1, BATCH do
      local entries = {}
      for i = first, min(cost, first + BATCH) - 1 do
        entries[#entries + 1] = at
        entries[#entries + 1] = at .. ':' .. format('%d', taken + i)
      end
      redis.call('ZADD', key, unpack(entries))
    end
  end
  if mode ~= false and mode ~= 'named' then redis.call('PEXPIRE', key, format('%d', keep_ms)) end
  return taken
end
`;
