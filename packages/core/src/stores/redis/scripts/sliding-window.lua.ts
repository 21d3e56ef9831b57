/**
 * Sliding window (two counters), the Lua twin of `algorithms/sliding-window.ts`. State: hash
 * { start = ms of the current aligned window, previous, current }.
 */
export const slidingWindowLua = `
local limit = per_window
-- math.fmod is exact, as JavaScript's %; Lua's own % divides first and could round.
local start = now - math.fmod(now, window)
local previous, current = 0, 0
local state = load('start', 'previous', 'current')
if state then
  if state.start >= start then
    -- Same window, or a clock a little behind the one that wrote the state: stay in its window.
    start = state.start
    previous = state.previous
    current = state.current
  elseif state.start == start - window then
    previous = state.current
  end
end
local elapsed = math.max(0, now - start)
local used = previous * (window - elapsed) + current * window
local full = limit * window
local function remaining_of(used_scaled)
  return math.max(0, math.floor((full - used_scaled) / window))
end
local function reset_of(cur)
  if cur > 0 then return 2 * window - elapsed end
  if previous > 0 then return window - elapsed end
  return 0
end
if cost > limit then return cost_exceeds_capacity(limit, remaining_of(used), reset_of(current)) end

if used + cost * window > full then
  local retry_after_ms
  if current + cost <= limit then
    -- Within this window, once the previous window's weight has decayed enough.
    retry_after_ms = window - math.floor(((limit - current - cost) * window) / previous) - elapsed
  else
    -- In the next window, where this window's count becomes the decaying one.
    local into = math.max(0, window - math.floor(((limit - cost) * window) / current))
    retry_after_ms = window - elapsed + into
  end
  return rejected(limit, remaining_of(used), reset_of(current), retry_after_ms)
end
if cost == 0 then return peeked(limit, remaining_of(used), reset_of(current)) end
local reset_ms = reset_of(current + cost)
save(reset_ms, 'start', start, 'previous', previous, 'current', current + cost)
return admitted(limit, remaining_of(used + cost * window), reset_ms, 0)
`;
