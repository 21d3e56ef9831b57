import { inlineLua, type LuaBlock } from './lua-block';
import { ceilLua, floorLua } from './lua-math';
import { slackExpiryLua } from './expiry.lua';
import { AHEAD_MS } from './prelude.lua';
import { packStateLua, unpackStateLua, wholeLua } from './state-bytes.lua';

/**
 * The key's excess, last and stored expiry, or nil (see the prelude): an admission never leaves
 * an excess past the burst's capacity, and giving back never leaves one a whole request below
 * empty.
 */
export const leakyBucketStateLua: LuaBlock = {
  params: ['key', 'now', 'capacity'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['excess', 'last', 'expires'],
  `if ${wholeLua(['excess', 'last'])} and excess > -1000 and excess <= capacity and last >= 0 and last <= now + ${AHEAD_MS} then
    ${ret('excess, last, expires')}
  end`,
)}
${io.del('key')}`,
};

/**
 * Leaky bucket, the Lua twin of `algorithms/leaky-bucket.ts` (nginx `limit_req`). State: three
 * numbers (see `state-bytes.lua.ts`): excess in thousandths of a request, ms of the last leak, and
 * the key's expiry (see `expiry.lua.ts`: the period is the time a full bucket takes to leak).
 * `nodelay` arrives as 1 or 0 (0 is true in Lua, so it is compared, never tested).
 */
export const leakyBucketLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'per_window', 'window', 'burst', 'nodelay', 'delay'],
  body: (ret, io) => `
local MILLI = 1000
local limit = burst + 1
local capacity = burst * MILLI
local rate = per_window * MILLI
${inlineLua(leakyBucketStateLua, ['key', 'now', 'capacity'], ['stored', 'stored_last', 'stored_expires'], io)}
local value = stored ~= nil
local elapsed = 0
if value then
  elapsed = now - stored_last
  -- nginx: a clock that went back more than a minute counts as 1 ms, a smaller step back as 0.
  if elapsed < -60000 then
    elapsed = 1
  elseif elapsed < 0 then
    elapsed = 0
  end
end
-- ms needed to leak an amount of thousandths: smallest t with floor(t * rate) >= amount,
-- i.e. ceil(amount * window / rate).
local level = -math.huge
local reset_ms = 0
if value then
  level = stored - ${floorLua('(elapsed * rate) / window')}
  reset_ms = ${ceilLua('((stored + MILLI) * window) / rate')} - elapsed
  if not (reset_ms > 0) then reset_ms = 0 end
end
local remaining = limit
if level + MILLI > 0 then
  remaining = ${floorLua('(capacity - level) / MILLI')}
  if not (remaining > 0) then remaining = 0 end
end
if cost > limit then ${ret('2, remaining, reset_ms, 0')} end

-- max(max(0, (cost - 1) * MILLI), level + cost * MILLI)
local excess = (cost - 1) * MILLI
if not (excess > 0) then excess = 0 end
if level + cost * MILLI > excess then excess = level + cost * MILLI end
if excess > capacity then
  -- Only a stored state can overflow: a new key's first excess is (cost - 1) thousand <= capacity.
  local needed = stored + cost * MILLI - capacity
  local retry_ms = ${ceilLua('(needed * window) / rate')} - elapsed
  if not (retry_ms > 0) then retry_ms = 0 end
  ${ret('1, remaining, reset_ms, retry_ms')}
end
if cost == 0 then ${ret('0, remaining, reset_ms, 0')} end

local delay_ms = 0
if nodelay ~= 1 and excess > delay * MILLI then
  delay_ms = ${floorLua('((excess - delay * MILLI) * window) / rate')}
end
-- nginx moves last only when time has passed.
local last = now
if value and elapsed == 0 then last = stored_last end
local drain_ms = ${ceilLua('((excess + MILLI) * window) / rate')}
-- last stays ahead of now after a small clock step back; keep the state until it has leaked.
local ttl_ms = drain_ms
if last - now > 0 then ttl_ms = drain_ms + (last - now) end
${slackExpiryLua('ttl_ms', 'stored_expires', 'limit * window', 'per_window', io)}
${ret(`0, ${floorLua('(capacity - excess) / MILLI')}, drain_ms, delay_ms, write_ttl, ${packStateLua(['excess', 'last', 'expires'])}`)}`,
};
