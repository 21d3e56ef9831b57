/**
 * The driver of the several-rules script: one request against every rule of a limiter, all or
 * nothing. Every rule's step runs on its own key first; only when every one admits are their
 * states written (each with its own TTL), so a rejection by any rule consumes from none, and the
 * rules that would have admitted then report their state as it stays (their step at cost 0).
 *
 * KEYS: one per rule, all under one hash tag (one Cluster slot). ARGV: `now` ('' for the
 * server's TIME), `cost`, then per rule six values: the algorithm's number
 * (its place in `ALGORITHMS`, from 1) and the policy's numbers, padded. Replies four integers
 * per rule, in rule order: `code, remaining, resetMs, waitMs`.
 */
export const multiDriverLua = `
local cost = tonumber(ARGV[2])
local STRIDE = 6
local reply, ttls, values = {}, {}, {}
local admitted = true
for i = 1, #KEYS do
  local at = 2 + (i - 1) * STRIDE
  local code, remaining, reset_ms, wait_ms, ttl_ms, value = STEPS[tonumber(ARGV[at + 1])](
    KEYS[i], now, cost, tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]),
    tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6]))
  if code ~= 0 then admitted = false end
  local r = (i - 1) * 4
  reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = code, remaining, reset_ms, wait_ms
  ttls[i], values[i] = ttl_ms, value
end
if admitted then
  for i = 1, #KEYS do
    if values[i] then WRITES[tonumber(ARGV[2 + (i - 1) * STRIDE + 1])](KEYS[i], ttls[i], values[i], now, cost) end
  end
elseif cost > 0 then
  -- Nothing is written: a rule that would have admitted reports its state as it stays (a peek).
  for i = 1, #KEYS do
    local r = (i - 1) * 4
    if reply[r + 1] == 0 then
      local at = 2 + (i - 1) * STRIDE
      reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = STEPS[tonumber(ARGV[at + 1])](
        KEYS[i], now, 0, tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]),
        tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6]))
    end
  end
end
return reply
`;
