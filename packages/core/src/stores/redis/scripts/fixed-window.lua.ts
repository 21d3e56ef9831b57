import { inlineLua, type LuaBlock } from './lua-block';
import { AHEAD_MS, KEEP_TTL } from './prelude.lua';
import { packStateLua, unpackStateLua, wholeLua } from './state-bytes.lua';

/**
 * The key's start and count, or nil (see the prelude): no window ever counts past the limit, and
 * none is kept at 0 (an admission counts at least 1; giving back to 0 deletes the key).
 */
export const fixedWindowStateLua: LuaBlock = {
  params: ['key', 'now', 'limit'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('')} end
${unpackStateLua(
  'value',
  ['opened', 'taken'],
  `if ${wholeLua(['opened', 'taken'])} and opened >= 0 and taken >= 1 and opened <= now + ${AHEAD_MS} and taken <= limit then ${ret('opened, taken')} end`,
)}
${io.del('key')}`,
};

/**
 * Fixed window, the Lua twin of `algorithms/fixed-window.ts`. State: two numbers
 * (see `state-bytes.lua.ts`): ms the window opened, and units taken in it; it expires when the window
 * closes: the admission that opens a window sets that expiry, the others keep it.
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
-- A window that has counted already has its expiry, its end: the write keeps it (see the prelude).
local write_ttl = ttl_ms
if count > 0 and ${io.keepsTtl} then write_ttl = ${KEEP_TTL} end
${ret(`0, limit - count - cost, ttl_ms, 0, write_ttl, ${packStateLua(['start', 'count + cost'])}`)}`,
};
