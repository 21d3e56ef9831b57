/**
 * Token bucket, the Lua twin of `algorithms/token-bucket.ts` (Spring Cloud Gateway
 * `RedisRateLimiter`). State: the string `"<tokens> <last>"`: tokens in 1/window of a token, and
 * ms of the refill.
 */
export const tokenBucketLua = `
local function token_bucket(key, now, cost, per_window, window, burst)
  local limit = burst + 1
  local capacity = limit * window
  local filled = capacity
  local value = redis.call('GET', key)
  if value then
    local tokens, last = match(value, '^(%-?%d+) (%-?%d+)$')
    filled = min(capacity, tonumber(tokens) + max(0, now - tonumber(last)) * per_window)
  end
  if cost > limit then
    return 2, floor(filled / window), ceil((capacity - filled) / per_window), 0
  end
  local requested = cost * window
  if filled < requested then
    return 1, floor(filled / window), ceil((capacity - filled) / per_window),
      ceil((requested - filled) / per_window)
  end
  local tokens = filled - requested
  local reset_ms = ceil((capacity - tokens) / per_window)
  if cost == 0 then return 0, floor(tokens / window), reset_ms, 0 end
  return 0, floor(tokens / window), reset_ms, 0, reset_ms, format('%d %d', tokens, now)
end
`;
