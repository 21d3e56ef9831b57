/**
 * Lua shared by every script, placed before each algorithm's body.
 *
 * Redis runs Lua 5.1, where every number is an IEEE double as in JavaScript: the bodies repeat
 * the TypeScript `step` functions operation for operation, so both compute the same integers.
 * Two traps are handled here once: numbers are written with `%d` (never `tostring`, which
 * prints 14 significant digits) and replies are integers only (Redis truncates a float).
 *
 * KEYS[1]: the key holding the state. ARGV: now (epoch ms, or '' for the server's TIME), cost,
 * per-window limit, window (ms), burst, nodelay ('1' or '0'), delay.
 */
export const preludeLua = `
local key = KEYS[1]
local now
if ARGV[1] == '' then
  -- The server's clock, so app servers whose clocks disagree still share one exact limit.
  -- Writing after TIME needs effects replication: the default since Redis 5, asked for before.
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local cost = tonumber(ARGV[2])
local per_window = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local burst = tonumber(ARGV[5])
local nodelay = ARGV[6] == '1'
local delay = tonumber(ARGV[7])

-- Exact text of an integer below 2^53 (Lua 5.1 formats %d through a C long).
local function fmt(n)
  return string.format('%d', n)
end

-- A verdict travels as seven integers: allowed, limit, remaining, resetMs, retryAfterMs,
-- delayMs, reason (0 none, 1 limited, 2 cost-exceeds-capacity).
local function admitted(limit, remaining, reset_ms, delay_ms)
  return { 1, limit, remaining, reset_ms, 0, delay_ms, 0 }
end
local function peeked(limit, remaining, reset_ms)
  return { 1, limit, remaining, reset_ms, 0, 0, 0 }
end
local function rejected(limit, remaining, reset_ms, retry_after_ms)
  return { 0, limit, remaining, reset_ms, retry_after_ms, 0, 1 }
end
local function cost_exceeds_capacity(limit, remaining, reset_ms)
  return { 0, limit, remaining, reset_ms, 0, 0, 2 }
end

-- The state kept in the key's hash, fields as numbers; nil for a key never seen or expired.
local function load(...)
  local names = { ... }
  local values = redis.call('HMGET', key, ...)
  if not values[1] then return nil end
  local state = {}
  for i, name in ipairs(names) do state[name] = tonumber(values[i]) end
  return state
end

-- Writes the state (name, value, ...) and its time-to-live together: no key ever lives without
-- an expiry, and none outlives the state it holds.
local function save(ttl_ms, ...)
  local fields = { ... }
  for i = 2, #fields, 2 do fields[i] = fmt(fields[i]) end
  redis.call('HSET', key, unpack(fields))
  redis.call('PEXPIRE', key, fmt(ttl_ms))
end
`;
