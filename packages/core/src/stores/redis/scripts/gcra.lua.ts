/**
 * GCRA, the Lua twin of `algorithms/gcra.ts` (redis-cell `CL.THROTTLE`). State: the string
 * `"<last> <debt>"`: ms of the last admission, and TAT − last in 1/limit ms. `max_wait` is the
 * queue (`maxWaitMs`, 0 for none): the TAT may run that far past the tolerance, and the request
 * waits its turn (`wait_ms`).
 */
export const gcraLua = `
local function gcra(key, now, cost, per_window, window, burst, max_wait)
  local limit = burst + 1
  local tolerance = window * limit
  -- (TAT - now) in 1/limit ms; 0 once the TAT is in the past.
  local current = 0
  local value = redis.call('GET', key)
  if value then
    local last, debt = match(value, '^(%-?%d+) (%-?%d+)$')
    current = max(0, tonumber(debt) - (now - tonumber(last)) * per_window)
  end
  -- redis-cell: remaining = (tolerance - (TAT - now)) / interval, truncated, never negative.
  local headroom = tolerance - current
  local before = 0
  if headroom > 0 then before = floor(headroom / window) end
  if cost > limit then return 2, before, ceil(current / per_window), 0 end
  local debt = current + cost * window
  local queue = max_wait * per_window
  if debt > tolerance + queue then
    return 1, before, ceil(current / per_window), ceil((debt - tolerance - queue) / per_window)
  end
  local reset_ms = ceil(debt / per_window)
  local remaining = 0
  if tolerance - debt > 0 then remaining = floor((tolerance - debt) / window) end
  if cost == 0 then return 0, remaining, reset_ms, 0 end
  local delay = 0
  if debt > tolerance then delay = ceil((debt - tolerance) / per_window) end
  return 0, remaining, reset_ms, delay, reset_ms, format('%d %d', now, debt)
end
`;
