import { inlineLua, type LuaBlock } from './lua-block';
import { AHEAD_MS } from './prelude.lua';

/**
 * The key's start and count, or nil (see the prelude): no window ever counts past the limit.
 */
export const fixedWindowStateLua: LuaBlock = {
  params: ['key', 'now', 'limit'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
local opened, taken = match(value, '^(%d+) (%d+)$')
-- Arithmetic reads each matched number once (tonumber reads its text twice).
if opened then
  opened, taken = opened + 0, taken + 0
  if opened <= now + ${AHEAD_MS} and taken <= limit then ${ret('opened, taken')} end
end
${io.del('key')}`,
};

/**
 * Fixed window, the Lua twin of `algorithms/fixed-window.ts`. State: the string
 * `"<start> <count>"`: ms the window opened, and units taken in it; it expires when the window
 * closes.
 */
export const fixedWindowLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'limit', 'window'],
  body: (ret, io) => `
local start, count, ends_in_ms = now, 0, 0
${inlineLua(fixedWindowStateLua, ['key', 'now', 'limit'], ['opened', 'taken'], io)}
if opened and now < opened + window then
  start, count, ends_in_ms = opened, taken, opened + window - now
end
if cost > limit then ${ret('2, limit - count, ends_in_ms, 0')} end
if count + cost > limit then ${ret('1, limit - count, ends_in_ms, ends_in_ms')} end
if cost == 0 then ${ret('0, limit - count, ends_in_ms, 0')} end
local ttl_ms = start + window - now
${ret("0, limit - count - cost, ttl_ms, 0, ttl_ms, format('%d %d', start, count + cost)")}`,
};
