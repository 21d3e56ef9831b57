/**
 * Fixed window, the Lua twin of `algorithms/fixed-window.ts`. State: hash { start = ms the
 * window opened, count }, expiring when the window closes.
 */
export const fixedWindowLua = `
local limit = per_window
local state = load('start', 'count')
local start, count, ends_in_ms = now, 0, 0
if state and now < state.start + window then
  start = state.start
  count = state.count
  ends_in_ms = start + window - now
end
if cost > limit then return cost_exceeds_capacity(limit, limit - count, ends_in_ms) end
if count + cost > limit then return rejected(limit, limit - count, ends_in_ms, ends_in_ms) end
if cost == 0 then return peeked(limit, limit - count, ends_in_ms) end
local ttl_ms = start + window - now
save(ttl_ms, 'start', start, 'count', count + cost)
return admitted(limit, limit - count - cost, ttl_ms, 0)
`;
