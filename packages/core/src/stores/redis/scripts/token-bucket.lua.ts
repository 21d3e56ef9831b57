import { inlineLua, type LuaBlock } from './lua-block';
import { ceilLua, floorLua } from './lua-math';
import { slackExpiryLua } from './expiry.lua';
import { AHEAD_MS } from './prelude.lua';
import { packStateLua, unpackStateLua, wholeLua } from './state-bytes.lua';

/**
 * The key's tokens, last and stored expiry, or nil (see the prelude): tokens stay within the
 * capacity and, with a queue, at most the queue's worth below 0.
 */
export const tokenBucketStateLua: LuaBlock = {
  params: ['key', 'now', 'capacity', 'queue'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['tokens', 'last', 'expires'],
  `if ${wholeLua(['tokens', 'last'])} and tokens >= -queue and tokens <= capacity and last >= 0 and last <= now + ${AHEAD_MS} then
    ${ret('tokens, last, expires')}
  end`,
)}
${io.del('key')}`,
};

/**
 * Token bucket, the Lua twin of `algorithms/token-bucket.ts` (Spring Cloud Gateway
 * `RedisRateLimiter`). State: three numbers (see `state-bytes.lua.ts`): tokens in 1/window of a
 * token, ms of the refill, and the key's expiry (see `expiry.lua.ts`: the period is the time an
 * empty bucket takes to fill). `max_wait` is the queue (`maxWaitMs`, 0 for none): the bucket may
 * go that many ms of refill into debt (negative tokens), and the request waits for it (`wait_ms`).
 */
export const tokenBucketLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'per_window', 'window', 'burst', 'max_wait'],
  body: (ret, io) => {
    // Whole tokens now, for a refusal (an admission's remaining is after its own units).
    const before = `local before = 0
  if filled > 0 then before = ${floorLua('filled / window')} end`;
    return `
local limit = burst + 1
local capacity = limit * window
local queue = max_wait * per_window
local filled = capacity
${inlineLua(tokenBucketStateLua, ['key', 'now', 'capacity', 'queue'], ['tokens', 'last', 'stored_expires'], io)}
if tokens then
  local elapsed = now - last
  if not (elapsed > 0) then elapsed = 0 end
  filled = tokens + elapsed * per_window
  if not (filled < capacity) then filled = capacity end
end
if cost > limit then
  ${before}
  ${ret(`2, before, ${ceilLua('(capacity - filled) / per_window')}, 0`)}
end
local requested = cost * window
if filled - requested < -queue then
  ${before}
  ${ret(`1, before, ${ceilLua('(capacity - filled) / per_window')}, ${ceilLua('(requested - queue - filled) / per_window')}`)}
end
tokens = filled - requested
local reset_ms = ${ceilLua('(capacity - tokens) / per_window')}
local remaining = 0
if tokens > 0 then remaining = ${floorLua('tokens / window')} end
if cost == 0 then ${ret('0, remaining, reset_ms, 0')} end
local delay = 0
if tokens < 0 then delay = ${ceilLua('-tokens / per_window')} end
-- As of the later of last and now (see algorithms/token-bucket.ts): no span credited twice.
local at = now
if last and last > now then at = last end
${slackExpiryLua('reset_ms + (at - now)', 'stored_expires', 'capacity', 'per_window', io)}
${ret(`0, remaining, reset_ms, delay, write_ttl, ${packStateLua(['tokens', 'at', 'expires'])}`)}`;
  },
};
