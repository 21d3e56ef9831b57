import { inlineLua, type LuaBlock } from './lua-block';
import { floorLua } from './lua-math';
import { AHEAD_MS, KEEP_TTL } from './prelude.lua';
import { packStateLua, unpackStateLua, wholeLua } from './state-bytes.lua';

/**
 * The key's start and both counters, or nil (see the prelude): no window counts past the limit,
 * and none is kept with both at 0 (an admission counts at least 1; giving back to 0 deletes it).
 */
export const slidingWindowStateLua: LuaBlock = {
  params: ['key', 'now', 'limit'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['opened', 'before', 'taken'],
  `if ${wholeLua(['opened', 'before', 'taken'])} and opened >= 0 and before >= 0 and taken >= 0 and before + taken >= 1 and opened <= now + ${AHEAD_MS} and before <= limit and taken <= limit then
    ${ret('opened, before, taken')}
  end`,
)}
${io.del('key')}`,
};

/**
 * Sliding window (two counters), the Lua twin of `algorithms/sliding-window.ts`. State: three
 * numbers (see `state-bytes.lua.ts`): ms of the current aligned window, and both counters.
 */
export const slidingWindowLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'limit', 'window'],
  body: (ret, io) => `
-- math.fmod is exact, as JavaScript's %; Lua's own % divides first and could round.
local start = now - math.fmod(now, window)
local previous, current = 0, 0
${inlineLua(slidingWindowStateLua, ['key', 'now', 'limit'], ['opened', 'before', 'taken'], io)}
if opened then
  if opened >= start then
    -- Same window, or a clock a little behind the one that wrote the state: stay in its window.
    start, previous, current = opened, before, taken
  elseif opened == start - window then
    previous = taken
  end
end
local elapsed = now - start
if not (elapsed > 0) then elapsed = 0 end
local used = previous * (window - elapsed) + current * window
local full = limit * window
local remaining = ${floorLua('(full - used) / window')}
if not (remaining > 0) then remaining = 0 end
local reset_ms = 0
if current > 0 then
  reset_ms = 2 * window - elapsed
elseif previous > 0 then
  reset_ms = window - elapsed
end
if cost > limit then ${ret('2, remaining, reset_ms, 0')} end

if used + cost * window > full then
  local retry_after_ms
  if current + cost <= limit then
    -- Within this window, once the previous window's weight has decayed enough.
    retry_after_ms = window - ${floorLua('((limit - current - cost) * window) / previous')} - elapsed
  else
    -- In the next window, where this window's count becomes the decaying one.
    local into = window - ${floorLua('((limit - cost) * window) / current')}
    if not (into > 0) then into = 0 end
    retry_after_ms = window - elapsed + into
  end
  ${ret('1, remaining, reset_ms, retry_after_ms')}
end
if cost == 0 then ${ret('0, remaining, reset_ms, 0')} end
-- current + cost > 0 here, so the state lives two windows from this one's start; a window that
-- has counted already has that expiry: the write keeps it (see the prelude).
local ttl_ms = start + 2 * window - now
if current > 0 and ${io.keepsTtl} then ttl_ms = ${KEEP_TTL} end
local left = ${floorLua('(full - used - cost * window) / window')}
if not (left > 0) then left = 0 end
${ret(`0, left, 2 * window - elapsed, 0, ttl_ms, ${packStateLua(['start', 'previous', 'current + cost'])}`)}`,
};
