import { inlineLua, type LuaBlock } from './lua-block';
import { AHEAD_MS } from './prelude.lua';

/** Live entries (after the cutoff) and the newest time, or 0, 0 for none (see the prelude). */
export const slidingLogStateLua: LuaBlock = {
  params: ['key', 'now', 'limit', 'after_cutoff'],
  body: (ret, io) => `
local live = redis.pcall('ZCOUNT', key, after_cutoff, '+inf')
if live == 0 then ${ret('0, 0')} end
if type(live) == 'number' and live <= limit then
  -- The newest time from its member's name, not WITHSCORES: Redis prints a score as a double
  -- (about 4 k instructions), and the name starts with the same whole number.
  local newest = tonumber(match(redis.call('ZRANGE', key, '-1', '-1')[1], '^(-?%d+):%d+$'))
  if newest and newest <= now + ${AHEAD_MS} then ${ret('live, newest')} end
elseif type(live) == 'table' and not match(live.err, '^WRONGTYPE') then
  error(live)
end
${io.del('key')}
${ret('0, 0')}`,
};

/**
 * Sliding log, the Lua twin of `algorithms/sliding-log.ts`. State: a sorted set with one member
 * per admitted unit, scored by its time (ms). Members with score t are named `t:0`, `t:1`, …
 * (the steps read a member's time from its name: cheaper than a score in the reply), so
 * the units of one millisecond stay distinct (ten requests in one ms count as ten). Trimming
 * removes whole scores, so the names in use at t are `t:0` to `t:(n-1)` unless a give-back
 * removed an admission's members (`log_write` then numbers after the highest in use).
 *
 * The write is `log_write`, not `set_state`: `value` is the cutoff below which entries are trimmed.
 *
 * Read defensively, as the packed states are (see the prelude): a key of another type, a log
 * with more live entries than the limit (no admission leaves one), a newest member not named
 * `<time>:<n>` or an entry more than `AHEAD_MS` ahead (`+inf` included) is deleted and read as an empty log, so `ZADD` then
 * starts a new one.
 */
export const slidingLogLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'limit', 'window'],
  body: (ret, io) => `
local cutoff = now - window
local after_cutoff = '(' .. format('%d', cutoff)
${inlineLua(slidingLogStateLua, ['key', 'now', 'limit', 'after_cutoff'], ['live', 'newest'], io)}
local reset_ms = 0
if live > 0 then reset_ms = max(0, newest + window - now) end
if cost > limit then ${ret('2, max(0, limit - live), reset_ms, 0')} end
if live + cost > limit then
  -- The oldest live units must leave first: the k-th of them leaves at its time + window.
  local leaving = redis.call('ZRANGEBYSCORE', key, after_cutoff, '+inf', 'LIMIT',
    format('%d', live + cost - limit - 1), '1')[1]
  -- Its time from its name too; a name not of the log's making costs a ZSCORE.
  local left = tonumber(match(leaving, '^(-?%d+):')) or tonumber(redis.call('ZSCORE', key, leaving))
  ${ret('1, max(0, limit - live), reset_ms, left + window - now')}
end
if cost == 0 then ${ret('0, limit - live, reset_ms, 0')} end
-- No live entry at now or later: none is named at now, log_write need not look (see log_fresh).
log_fresh[key] = live == 0 or newest < now
-- A clock that went back leaves newer entries than now: the log lives until the newest leaves.
local last = now
if live > 0 and newest > now then last = newest end
local ttl_ms = last + window - now
${ret('0, limit - live - cost, ttl_ms, 0, ttl_ms, cutoff')}`,
};

/**
 * The sliding log's write, `log_write`, and the table `log_fresh` its step sets: the functions
 * a script with the sliding log's step defines before it.
 */
export const slidingLogWriteLua = `
-- Keys whose step just found no entry named at its now: set by the step that admits, read and
-- cleared by the write that follows it (a second write on the key in one call looks again).
local log_fresh = {}

-- Trims only when writing: a rejection leaves the log exactly as it was, as the reference does.
-- Returns the index of the first member added, the admission's receipt for a give-back.
local function log_write(key, ttl_ms, cutoff, now, cost)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', format('%d', cutoff))
  local at = format('%d', now)
  local taken = 0
  if not log_fresh[key] then taken = redis.call('ZCOUNT', key, at, at) end
  log_fresh[key] = nil
  if taken > 0 then
    -- A give-back may have removed members of this millisecond below the highest: number after
    -- the highest in use, so that a name is never reused while it is in the log.
    for _, name in ipairs(redis.call('ZRANGEBYSCORE', key, at, at)) do
      local index = tonumber(match(name, ':(%d+)$'))
      if index and index >= taken then taken = index + 1 end
    end
  end
  if cost == 1 then
    -- The usual request, without the batches' table and unpack; the first name of a millisecond
    -- without a format (each costs Redis about 0.4 k instructions).
    redis.call('ZADD', key, at, taken == 0 and at .. ':0' or at .. ':' .. format('%d', taken))
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
  redis.call('PEXPIRE', key, format('%d', ttl_ms))
  return taken
end
`;
