import { inlineLua, type LuaBlock } from './lua-block';
import { ceilLua, floorLua } from './lua-math';
import { slackExpiryLua } from './expiry.lua';
import { AHEAD_MS } from './prelude.lua';
import { packStateLua, unpackStateLua, wholeLua } from './state-bytes.lua';

/**
 * The key's last, debt and stored expiry, or nil (see the prelude): an admission never leaves a
 * debt past the tolerance and the queue, nor below 0. The expiry is only compared (see
 * `expiry.lua.ts`), so any number there is safe.
 */
export const gcraStateLua: LuaBlock = {
  params: ['key', 'now', 'max_debt'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['last', 'debt', 'expires'],
  `if ${wholeLua(['last', 'debt'])} and last >= 0 and debt >= 0 and last <= now + ${AHEAD_MS} and debt <= max_debt then ${ret('last, debt, expires')} end`,
)}
${io.del('key')}`,
};

/**
 * GCRA, the Lua twin of `algorithms/gcra.ts` (redis-cell `CL.THROTTLE`). State: three numbers
 * (see `state-bytes.lua.ts`): ms of the last admission, TAT − last in 1/limit ms, and the key's
 * expiry (see `expiry.lua.ts`: the period is the tolerance, the time a full bucket takes to
 * refill). `max_wait` is the queue (`maxWaitMs`, 0 for none): the TAT may run that far past the
 * tolerance, and the request waits its turn (`wait_ms`).
 */
export const gcraLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'per_window', 'window', 'burst', 'max_wait'],
  body: (ret, io) => {
    // redis-cell: remaining = (tolerance - (TAT - now)) / interval, truncated, never negative.
    // Computed where a refusal needs it: an admission's remaining is after its own units.
    const before = `local before = 0
  if tolerance - current > 0 then before = ${floorLua('(tolerance - current) / window')} end`;
    return `
local limit = burst + 1
local tolerance = window * limit
local queue = max_wait * per_window
-- (TAT - now) in 1/limit ms; 0 once the TAT is in the past.
local current = 0
${inlineLua(gcraStateLua, ['key', 'now', 'tolerance + queue'], ['last', 'stored', 'stored_expires'], io)}
if last then
  current = stored - (now - last) * per_window
  if not (current > 0) then current = 0 end
end
if cost > limit then
  ${before}
  ${ret(`2, before, ${ceilLua('current / per_window')}, 0`)}
end
local debt = current + cost * window
if debt > tolerance + queue then
  ${before}
  ${ret(`1, before, ${ceilLua('current / per_window')}, ${ceilLua('(debt - tolerance - queue) / per_window')}`)}
end
-- Each quotient once, rounded by arithmetic (each operation of Lua costs Redis a few dozen).
local reset_ms = -debt / per_window
reset_ms = -(reset_ms - reset_ms % 1)
local remaining = 0
if tolerance - debt > 0 then
  remaining = (tolerance - debt) / window
  remaining = remaining - remaining % 1
end
if cost == 0 then ${ret('0, remaining, reset_ms, 0')} end
local delay = 0
if debt > tolerance then delay = ${ceilLua('(debt - tolerance) / per_window')} end
${slackExpiryLua('reset_ms', 'stored_expires', 'tolerance', 'per_window', io)}
${ret(`0, remaining, reset_ms, delay, write_ttl, ${packStateLua(['now', 'debt', 'expires'])}`)}`;
  },
};
