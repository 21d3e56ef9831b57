/**
 * Token bucket, the Lua twin of `algorithms/token-bucket.ts` (Spring Cloud Gateway
 * `RedisRateLimiter`). State: hash { tokens in 1/window of a token, last = ms of the refill }.
 */
export const tokenBucketLua = `
local limit = burst + 1
local capacity = limit * window
local state = load('tokens', 'last')
local filled = capacity
if state then
  local elapsed = math.max(0, now - state.last)
  filled = math.min(capacity, state.tokens + elapsed * per_window)
end
local function reset_of(tokens)
  return math.ceil((capacity - tokens) / per_window)
end
if cost > limit then
  return cost_exceeds_capacity(limit, math.floor(filled / window), reset_of(filled))
end
local requested = cost * window
if filled < requested then
  return rejected(limit, math.floor(filled / window), reset_of(filled), math.ceil((requested - filled) / per_window))
end
local tokens = filled - requested
local reset_ms = reset_of(tokens)
if cost == 0 then return peeked(limit, math.floor(tokens / window), reset_ms) end
save(reset_ms, 'tokens', tokens, 'last', now)
return admitted(limit, math.floor(tokens / window), reset_ms, 0)
`;
