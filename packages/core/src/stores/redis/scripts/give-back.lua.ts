/**
 * Giving back, the Lua twin of `algorithms/give-back.ts` (placed after the warm-up script, whose
 * `warm_curve` it uses): `cost` units of an admission that will
 * not be served (a queued or delayed request whose client left) return to each key's state.
 * Each function has the shape of its algorithm's step and returns `ttl_ms, value` to write,
 * `0` to delete the key (back to its initial state), or nothing to leave it as it is.
 *
 * KEYS: one per rule. ARGV: `now` ('' for the server's TIME), `cost`, then per key the number of
 * its kind of state (from 1, in `STATE_KINDS` order) and the policy's numbers, padded to a fixed
 * stride, as the several-rules script reads them. Kinds that never delay give nothing back.
 * Replies the number of keys changed.
 */
export const giveBackLua = `
local function gcra_back(key, now, cost, per_window, window)
  local value = redis.call('GET', key)
  if not value then return end
  local last, debt = match(value, '^(%-?%d+) (%-?%d+)$')
  local current = max(0, tonumber(debt) - (now - tonumber(last)) * per_window)
  if current == 0 then return end
  local left = max(0, current - cost * window)
  if left == 0 then return 0 end
  return ceil(left / per_window), format('%d %d', now, left)
end

local function token_bucket_back(key, now, cost, per_window, window, burst)
  local value = redis.call('GET', key)
  if not value then return end
  local capacity = (burst + 1) * window
  local tokens, last = match(value, '^(%-?%d+) (%-?%d+)$')
  local filled = min(capacity, tonumber(tokens) + max(0, now - tonumber(last)) * per_window)
  if filled == capacity then return end
  local back = min(capacity, filled + cost * window)
  if back == capacity then return 0 end
  return ceil((capacity - back) / per_window), format('%d %d', back, now)
end

local function leaky_bucket_back(key, now, cost, per_window, window)
  local MILLI = 1000
  local value = redis.call('GET', key)
  if not value then return end
  local excess, last = match(value, '^(%-?%d+) (%-?%d+)$')
  excess, last = tonumber(excess), tonumber(last)
  local rate = per_window * MILLI
  local elapsed = now - last
  if elapsed < -60000 then
    elapsed = 1
  elseif elapsed < 0 then
    elapsed = 0
  end
  local level = excess - floor((elapsed * rate) / window)
  if level + MILLI <= 0 then return end
  local left = level - cost * MILLI
  if left + MILLI <= 0 then return 0 end
  if elapsed ~= 0 then last = now end
  return ceil(((left + MILLI) * window) / rate) + max(0, last - now), format('%d %d', left, last)
end

local function warm_up_back(key, now, cost, per_window, window, max_wait, warmup)
  local value = redis.call('GET', key)
  if not value then return end
  local s, n = match(value, '^(%S+) (%S+)$')
  local stored, next_free = tonumber(s), tonumber(n)
  if next_free <= now then return end
  local stable, _, max_permits, _, cool_down = warm_curve(per_window, window, warmup)
  local back = max(now, next_free - stable * cost)
  return ceil(back - now + (max_permits - stored) * cool_down) + 1, format('%.17g %.17g', stored, back)
end
`;

/** The driver: `BACKS` lists each kind's give-back (or `false`), in `STATE_KINDS` order. */
export const giveBackDriverLua = `
local cost = tonumber(ARGV[2])
local STRIDE = 6
local changed = 0
for i = 1, #KEYS do
  local at = 2 + (i - 1) * STRIDE
  local back = BACKS[tonumber(ARGV[at + 1])]
  if back then
    local ttl_ms, value = back(KEYS[i], now, cost, tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]),
      tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6]))
    if ttl_ms == 0 then
      redis.call('DEL', KEYS[i])
      changed = changed + 1
    elseif ttl_ms then
      redis.call('SET', KEYS[i], value, 'PX', ttl_ms)
      changed = changed + 1
    end
  end
end
return changed
`;
