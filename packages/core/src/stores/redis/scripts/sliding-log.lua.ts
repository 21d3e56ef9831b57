/**
 * Sliding log, the Lua twin of `algorithms/sliding-log.ts`. State: a sorted set with one member
 * per admitted unit, scored by its time (ms). Members with score t are named `t:0`, `t:1`, …:
 * the units of one millisecond stay distinct (ten requests in one ms count as ten), and since
 * trimming removes whole scores, the names in use at t are always `t:0` to `t:(n-1)`.
 */
export const slidingLogLua = `
local limit = per_window
local cutoff = now - window
local after_cutoff = '(' .. fmt(cutoff)
local live = redis.call('ZCOUNT', key, after_cutoff, '+inf')
local newest = 0
local reset_ms = 0
if live > 0 then
  newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
  reset_ms = math.max(0, newest + window - now)
end
if cost > limit then return cost_exceeds_capacity(limit, math.max(0, limit - live), reset_ms) end
if live + cost > limit then
  -- The oldest live units must leave first: the k-th of them leaves at its time + window.
  local leaving = redis.call('ZRANGEBYSCORE', key, after_cutoff, '+inf', 'WITHSCORES', 'LIMIT', live + cost - limit - 1, 1)
  return rejected(limit, math.max(0, limit - live), reset_ms, tonumber(leaving[2]) + window - now)
end
if cost == 0 then return peeked(limit, limit - live, reset_ms) end

-- Trim only when writing: a rejection leaves the log exactly as it was, as the reference does.
redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(cutoff))
local at = fmt(now)
local taken = redis.call('ZCOUNT', key, at, at)
-- ZADD in batches: Lua's unpack fails past a few thousand values.
local BATCH = 1000
for first = 0, cost - 1, BATCH do
  local entries = {}
  for i = first, math.min(cost, first + BATCH) - 1 do
    entries[#entries + 1] = at
    entries[#entries + 1] = at .. ':' .. fmt(taken + i)
  end
  redis.call('ZADD', key, unpack(entries))
end
-- A clock that went back leaves newer entries than now: the log lives until the newest leaves.
local last = now
if live > 0 and newest > now then last = newest end
local ttl_ms = last + window - now
redis.call('PEXPIRE', key, fmt(ttl_ms))
return admitted(limit, limit - live - cost, ttl_ms, 0)
`;
