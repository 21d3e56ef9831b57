import { fixedWindowStateLua } from './fixed-window.lua';
import { gcraStateLua } from './gcra.lua';
import { leakyBucketStateLua } from './leaky-bucket.lua';
import { packedLogBackLua } from './packed-log.lua';
import { callIo, inlineLua } from './lua-block';
import { slidingLogStateLua } from './sliding-log.lua';
import { slidingWindowStateLua } from './sliding-window.lua';
import { packStateLua } from './state-bytes.lua';
import { tokenBucketStateLua } from './token-bucket.lua';
import { warmCurveLua, warmUpStateLua } from './warm-up.lua';

/**
 * Giving back, the Lua twin of `algorithms/give-back.ts` (placed after every kind's script; the
 * state readers and the warm-up curve are inlined): `cost` units of an admission that will not be
 * served (a queued or delayed request whose client left, or a request a later limit refused)
 * return to each key's state. State that cannot be read is deleted, as the steps do: nothing to
 * give back. Each function takes `key, now, cost`, the admission's receipt `at, member` (nil
 * without one: the windows and the sliding log then give nothing back), then its step's policy
 * numbers, and returns `ttl_ms, value` to write (a bucket's with no expiry stored: its exact TTL
 * is set, and its next admission sets its own, see `expiry.lua.ts`), `ttl_ms` alone when it
 * changed the key itself (the sliding log's set: only the expiry is left to set), `0` to delete
 * the key (back to its initial state), or nothing to leave it as it is.
 *
 * KEYS: one per rule. ARGV: `now` ('' for the server's TIME), `cost`, then per key the number of
 * its kind of state (from 1, in `STATE_KINDS` order) and the policy's numbers, padded to a fixed
 * stride, as the several-rules script reads them, and optionally the receipt's `at` and `member`
 * (stride 8 instead of 6). Replies the number of keys changed.
 */
export const giveBackLua = `
local function gcra_back(key, now, cost, _at, _member, per_window, window, burst, max_wait)
  ${inlineLua(gcraStateLua, ['key', 'now', 'window * (burst + 1) + max_wait * per_window'], ['last', 'debt'], callIo)}
  if not last then return end
  if now < last then
    if debt == 0 then return end
    local kept = max(0, debt - cost * window)
    return last - now + ceil(kept / per_window), ${packStateLua(['last', 'kept', '0'])}
  end
  local current = max(0, debt - (now - last) * per_window)
  if current == 0 then return end
  local left = max(0, current - cost * window)
  if left == 0 then return 0 end
  return ceil(left / per_window), ${packStateLua(['now', 'left', '0'])}
end

local function token_bucket_back(key, now, cost, _at, _member, per_window, window, burst, max_wait)
  local capacity = (burst + 1) * window
  ${inlineLua(tokenBucketStateLua, ['key', 'now', 'capacity', 'max_wait * per_window'], ['tokens', 'last'], callIo)}
  if not tokens then return end
  local filled = min(capacity, tokens + max(0, now - last) * per_window)
  if filled == capacity then return end
  local back = min(capacity, filled + cost * window)
  if back == capacity then return 0 end
  return ceil((capacity - back) / per_window), ${packStateLua(['back', 'now', '0'])}
end

local function leaky_bucket_back(key, now, cost, _at, _member, per_window, window, burst)
  local MILLI = 1000
  ${inlineLua(leakyBucketStateLua, ['key', 'now', 'burst * MILLI'], ['excess', 'last'], callIo)}
  if not excess then return end
  local rate = per_window * MILLI
  local elapsed = now - last
  if elapsed < -60000 then
    elapsed = 1
  elseif elapsed < 0 then
    elapsed = 0
  end
  local level = excess - floor((elapsed * rate) / window)
  if level + MILLI <= 0 then return end
  local left = level - cost * MILLI
  if left + MILLI <= 0 then return 0 end
  if elapsed ~= 0 then last = now end
  return ceil(((left + MILLI) * window) / rate) + max(0, last - now), ${packStateLua(['left', 'last', '0'])}
end

local function warm_up_back(key, now, cost, _at, _member, per_window, window, max_wait, warmup)
  ${inlineLua(warmCurveLua, ['per_window', 'window', 'warmup'], ['stable', 'threshold', 'max_permits', 'slope', 'cool_down'], callIo)}
  ${inlineLua(warmUpStateLua, ['key', 'now', 'max_permits', 'AHEAD_MS + max_wait + 3 * stable'], ['stored', 'next_free'], callIo)}
  if not stored or next_free <= now then return end
  local back = max(now, next_free - stable * cost)
  return ceil(back - now + (max_permits - stored) * cool_down) + 1, ${packStateLua(['stored', 'back'])}
end

local function fixed_window_back(key, now, cost, at, _, limit, window)
  if not at then return end
  ${inlineLua(fixedWindowStateLua, ['key', 'now', 'limit'], ['opened', 'taken'], callIo)}
  if not opened or opened ~= at or now >= opened + window then return end
  local left = taken - cost
  if left <= 0 then return 0 end
  return opened + window - now, ${packStateLua(['opened', 'left'])}
end

local function sliding_window_back(key, now, cost, at, _, limit, window)
  if not at then return end
  ${inlineLua(slidingWindowStateLua, ['key', 'now', 'limit'], ['opened', 'before', 'taken'], callIo)}
  if not opened then return end
  if opened == at then
    taken = max(0, taken - cost)
  elseif opened == at + window then
    before = max(0, before - cost)
  else
    return
  end
  local span = 0
  if taken > 0 then
    span = 2 * window
  elseif before > 0 then
    span = window
  end
  -- As the step's: from the window's own start, so a clock behind it keeps the state longer.
  local ttl_ms = opened + span - now
  if span == 0 or ttl_ms <= 0 then return 0 end
  return ttl_ms, ${packStateLua(['opened', 'before', 'taken'])}
end

-- Removes exactly the members the admission added (<at>:<member + i>), while they still count
-- on the log's own time (see sliding-log.lua.ts); the expiry as a write that trims sets it.
local function sliding_log_back(key, now, cost, at, member, limit, window)
  if not at then return end
  ${inlineLua(slidingLogStateLua, ['key', 'now', 'limit', 'window'], ['live', 'newest'], callIo)}
  if live == 0 then return end
  local cutoff = max(now, newest) - window
  if at <= cutoff then return end
  local removed = 0
  local BATCH = 1000
  for first = 0, cost - 1, BATCH do
    local names = {}
    for i = first, min(cost, first + BATCH) - 1 do names[#names + 1] = format('%d:%d', at, member + i) end
    removed = removed + redis.call('ZREM', key, unpack(names))
  end
  if removed == 0 then return end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', format('%d', cutoff))
  if live == removed then return 0 end
  local last = tonumber(redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2])
  return last - last % window + 2 * window - now
end
${packedLogBackLua}`;

/**
 * Exact give-backs (with receipts), the function `give_back_taken` (which the give-back script and
 * the batch script call): gives `cost` back to the `n` keys after KEYS[k], each key's arguments
 * `stride` apart from ARGV[a + 1] (kind, five numbers, then the receipt's `at` and `member` when
 * `stride` is 8), by the give-back functions of `backs` (by kind). Returns the number of keys changed.
 */
export const giveBackTakenLua = `
local function give_back_taken(backs, k, a, n, now, cost, stride)
  local changed = 0
  for i = 1, n do
    local at = a + (i - 1) * stride
    local key = KEYS[k + i]
    local back = backs[tonumber(ARGV[at + 1])]
    if back then
      local taken_at, member
      if stride == 8 then taken_at, member = tonumber(ARGV[at + 7]), tonumber(ARGV[at + 8]) end
      local ttl_ms, value = back(key, now, cost, taken_at, member, tonumber(ARGV[at + 2]),
        tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6]))
      if ttl_ms == 0 then
        redis.call('DEL', key)
        changed = changed + 1
      elseif value then
        redis.call('SET', key, value, 'PX', format('%d', ttl_ms))
        changed = changed + 1
      elseif ttl_ms then
        redis.call('PEXPIRE', key, format('%d', ttl_ms))
        changed = changed + 1
      end
    end
  end
  return changed
end
`;

/** The give-back script's driver, after {@link giveBackTakenLua}: `BACKS` lists each kind's give-back (or `false`), in `STATE_KINDS` order. */
export const giveBackDriverLua = `
-- 6 values per key, or 8 with the admissions' receipts.
return give_back_taken(BACKS, 0, 2, #KEYS, now, tonumber(ARGV[2]), (#ARGV - 2) / #KEYS)
`;
