/**
 * Leaky bucket, the Lua twin of `algorithms/leaky-bucket.ts` (nginx `limit_req`). State: hash
 * { excess in thousandths of a request, last = ms of the last leak }.
 */
export const leakyBucketLua = `
local MILLI = 1000
local limit = burst + 1
local capacity = burst * MILLI
local state = load('excess', 'last')
local elapsed = 0
if state then elapsed = now - state.last end
-- nginx: a clock that went back more than a minute counts as 1 ms, a smaller step back as 0.
if elapsed < -60000 then
  elapsed = 1
elseif elapsed < 0 then
  elapsed = 0
end
local level = -math.huge
if state then level = state.excess - math.floor((elapsed * per_window * MILLI) / window) end
-- ms needed to leak amount thousandths: smallest t with floor(t * rate) >= amount.
local function leak_ms(amount)
  return math.ceil((amount * window) / (per_window * MILLI))
end
local reset_ms = 0
if state then reset_ms = math.max(0, leak_ms(state.excess + MILLI) - elapsed) end
local remaining = limit
if level + MILLI > 0 then remaining = math.max(0, math.floor((capacity - level) / MILLI)) end
if cost > limit then return cost_exceeds_capacity(limit, remaining, reset_ms) end

local excess = math.max(math.max(0, (cost - 1) * MILLI), level + cost * MILLI)
if excess > capacity then
  -- Only a stored state can overflow: a new key's first excess is (cost - 1) thousand <= capacity.
  local needed = state.excess + cost * MILLI - capacity
  return rejected(limit, remaining, reset_ms, math.max(0, leak_ms(needed) - elapsed))
end
if cost == 0 then return peeked(limit, remaining, reset_ms) end

local delay_ms = 0
if not nodelay and excess > delay * MILLI then
  delay_ms = math.floor(((excess - delay * MILLI) * window) / (per_window * MILLI))
end
-- nginx moves last only when time has passed.
local last = now
if state and elapsed == 0 then last = state.last end
local drain_ms = leak_ms(excess + MILLI)
-- last stays ahead of now after a small clock step back; keep the state until it has leaked.
save(drain_ms + math.max(0, last - now), 'excess', excess, 'last', last)
return admitted(limit, math.floor((capacity - excess) / MILLI), drain_ms, delay_ms)
`;
