/**
 * GCRA, the Lua twin of `algorithms/gcra.ts` (redis-cell `CL.THROTTLE`). State: hash
 * { last = ms of the last admission, debt = TAT − last in 1/limit ms }.
 */
export const gcraLua = `
local limit = burst + 1
local tolerance = window * limit
local state = load('last', 'debt')
-- (TAT - now) in 1/limit ms; 0 once the TAT is in the past.
local current = 0
if state then current = math.max(0, state.debt - (now - state.last) * per_window) end
local function remaining_of(headroom)
  if headroom > 0 then return math.floor(headroom / window) end
  return 0
end
if cost > limit then
  return cost_exceeds_capacity(limit, remaining_of(tolerance - current), math.ceil(current / per_window))
end
local debt = current + cost * window
if debt > tolerance then
  return rejected(limit, remaining_of(tolerance - current), math.ceil(current / per_window),
    math.ceil((debt - tolerance) / per_window))
end
local reset_ms = math.ceil(debt / per_window)
local remaining = remaining_of(tolerance - debt)
if cost == 0 then return peeked(limit, remaining, reset_ms) end
save(reset_ms, 'last', now, 'debt', debt)
return admitted(limit, remaining, reset_ms, 0)
`;
