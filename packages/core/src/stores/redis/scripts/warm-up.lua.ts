import { inlineLua, type LuaBlock } from './lua-block';
import { ceilLua, minLua } from './lua-math';
import { packStateLua, unpackStateLua } from './state-bytes.lua';

/**
 * The warm-up curve, the twin of `curve`: `stable, threshold, max_permits, slope, cool_down` of a
 * policy, inlined in the step and the give-back (no function for Redis to make on each call: the
 * batch script's usual run inlines the step).
 */
export const warmCurveLua: LuaBlock = {
  params: ['per_window', 'window', 'warmup'],
  body: (ret) => `
local stable = window / per_window
local cold = stable * 3
local threshold = (0.5 * warmup) / stable
local max_permits = threshold + (2 * warmup) / (stable + cold)
${ret('stable, threshold, max_permits, (cold - stable) / (max_permits - threshold), warmup / max_permits')}`,
};

/**
 * The key's stored permits and next free time, or nil (see the prelude): stored permits never
 * exceed the curve's maximum, and an admission's next free time is at most the queue and one
 * cold interval (3 stable ones) ahead. Both are fractions, stored as the doubles they are.
 */
export const warmUpStateLua: LuaBlock = {
  params: ['key', 'now', 'max_permits', 'ahead'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['stored', 'next_free'],
  `if stored >= 0 and stored <= max_permits and next_free >= 0 and next_free <= now + ahead then
    ${ret('stored, next_free')}
  end`,
)}
${io.del('key')}`,
};

/**
 * Warm-up, the Lua twin of `algorithms/warm-up.ts` (Guava SmoothWarmingUp), which replaces the
 * rate algorithm's step when a policy has `warmup`. State: two numbers (see
 * `state-bytes.lua.ts`): the stored (cold) permits and the next free time in epoch ms, both
 * fractional, stored as the very doubles the TypeScript step keeps.
 *
 * Operation for operation as the TypeScript step (the same order, so the same roundings):
 * `stable` ms per request at the full rate, a cold start at a third of it, a curve of
 * `max_permits` stored permits above `threshold` (`warmCurveLua`, the twin of `curve`, which the
 * give-back inlines too).
 */
export const warmUpLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'per_window', 'window', 'max_wait', 'warmup'],
  body: (ret, io) => `
${inlineLua(warmCurveLua, ['per_window', 'window', 'warmup'], ['stable', 'threshold', 'max_permits', 'slope', 'cool_down'], io)}
${inlineLua(warmUpStateLua, ['key', 'now', 'max_permits', 'AHEAD_MS + max_wait + 3 * stable'], ['stored', 'next_free'], io)}
if not stored then stored, next_free = max_permits, now end
-- Guava resync: idle time adds stored permits (cools the limiter down), up to the maximum.
if now > next_free then
  stored = stored + (now - next_free) / cool_down
  if not (stored < max_permits) then stored = max_permits end
  next_free = now
end
local wait = next_free - now
local reset_ms = ${ceilLua('wait')}
local remaining = 0
if wait <= 0 then remaining = 1 end
if cost > 1 then ${ret('2, remaining, reset_ms, 0')} end
if wait > max_wait then ${ret(`1, 0, reset_ms, ${ceilLua('wait - max_wait')}`)} end
if cost == 0 then ${ret('0, remaining, reset_ms, 0')} end
-- Fresh permits cost the stable interval; stored ones above the threshold the area under the slope.
local from_stored = ${minLua('cost', 'stored')}
local spend = stable * (cost - from_stored)
local above = stored - threshold
local below = from_stored
if above > 0 then
  local take_above = ${minLua('above', 'from_stored')}
  local length = stable + above * slope + (stable + (above - take_above) * slope)
  spend = spend + (take_above * length) / 2
  below = from_stored - take_above
end
spend = spend + stable * below
local next_at = next_free + spend
local next_stored = stored - from_stored
local ahead = next_at - now
if not (ahead > 0) then ahead = 0 end
local ttl_ms = ${ceilLua('ahead + (max_permits - next_stored) * cool_down')} + 1
local until_free = ${ceilLua('ahead')}
local free = 0
if until_free == 0 then free = 1 end
${ret(`0, free, until_free, reset_ms, ttl_ms, ${packStateLua(['next_stored', 'next_at'])}`)}`,
};
