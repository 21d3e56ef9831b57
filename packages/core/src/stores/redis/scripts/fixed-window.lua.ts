/**
 * Fixed window, the Lua twin of `algorithms/fixed-window.ts`. State: the string
 * `"<start> <count>"`: ms the window opened, and units taken in it; it expires when the window
 * closes.
 */
export const fixedWindowLua = `
local function fixed_window(key, now, cost, limit, window)
  local start, count, ends_in_ms = now, 0, 0
  local value = redis.call('GET', key)
  if value then
    local opened, taken = match(value, '^(%-?%d+) (%-?%d+)$')
    opened = tonumber(opened)
    if now < opened + window then
      start, count, ends_in_ms = opened, tonumber(taken), opened + window - now
    end
  end
  if cost > limit then return 2, limit - count, ends_in_ms, 0 end
  if count + cost > limit then return 1, limit - count, ends_in_ms, ends_in_ms end
  if cost == 0 then return 0, limit - count, ends_in_ms, 0 end
  local ttl_ms = start + window - now
  return 0, limit - count - cost, ttl_ms, 0, ttl_ms, format('%d %d', start, count + cost)
end
`;
