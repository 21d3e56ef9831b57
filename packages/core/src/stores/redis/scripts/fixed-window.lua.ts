import { AHEAD_MS } from './prelude.lua';

/**
 * Fixed window, the Lua twin of `algorithms/fixed-window.ts`. State: the string
 * `"<start> <count>"`: ms the window opened, and units taken in it; it expires when the window
 * closes.
 */
export const fixedWindowLua = `
-- The key's start and count, or nil (see the prelude): no window ever counts past the limit.
local function fixed_window_state(key, now, limit)
  local value = packed(key)
  if not value then return end
  local opened, taken = match(value, '^(%d+) (%d+)$')
  opened, taken = tonumber(opened), tonumber(taken)
  if opened and opened <= now + ${AHEAD_MS} and taken <= limit then return opened, taken end
  del(key)
end

local function fixed_window(key, now, cost, limit, window)
  local start, count, ends_in_ms = now, 0, 0
  local opened, taken = fixed_window_state(key, now, limit)
  if opened and now < opened + window then
    start, count, ends_in_ms = opened, taken, opened + window - now
  end
  if cost > limit then return 2, limit - count, ends_in_ms, 0 end
  if count + cost > limit then return 1, limit - count, ends_in_ms, ends_in_ms end
  if cost == 0 then return 0, limit - count, ends_in_ms, 0 end
  local ttl_ms = start + window - now
  return 0, limit - count - cost, ttl_ms, 0, ttl_ms, format('%d %d', start, count + cost)
end
`;
