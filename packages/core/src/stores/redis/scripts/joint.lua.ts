/**
 * The joint decision, the function `joint` (which the joint script and the batch script call):
 * several limiters' parts of one request (several limits on a route, say per address and per
 * SKU), decided in one call, all or none. Every key's step runs
 * first; a part admits when all its keys admit; only when every enforcing part admits (a dry-run
 * part counts but never refuses) are the admitted parts' states written, each with its own TTL.
 * Otherwise nothing is written and the keys that would have admitted report their state as it
 * stays (their step at cost 0), as the several-rules script does.
 *
 * Two parts must not share a key (the client checks): a step reads the state as stored, not as
 * an earlier part of the same call would leave it.
 *
 * KEYS: every part's keys, in order (on Cluster, all in one slot). ARGV: `now` ('' for the
 * server's TIME, read once), the number of parts, then per part `keys, cost, now ('' for the
 * first), dryRun (1 or 0)` followed per key by the number of its kind of state (from 1, in
 * `STATE_KINDS` order) and the policy's numbers, padded to 5. Replies six integers per key:
 * `code, remaining, resetMs, waitMs` as the other scripts, then the admission's receipt
 * `at, member` (see `Receipt`; 0 0 when nothing was written).
 */
export const jointLua = `
-- Decides the parts whose arguments start at ARGV[a] (per part as above), on the keys after
-- KEYS[k], with now for the parts without a time of their own; writes six integers per key
-- into reply after reply[r] and returns how many it wrote. (The batch script calls it too.)
local function joint(a, k, count, now, reply, r)
  local parts, steps = {}, {}
  local all = true
  local from_k = k
  -- A part with a time of its own is clocked (its writes get exact expiries: see expiry.lua.ts).
  local run_clocked = clocked
  for p = 1, count do
    local own_now = tonumber(ARGV[a + 2])
    clocked = own_now ~= nil or run_clocked
    local part = { n = tonumber(ARGV[a]), cost = tonumber(ARGV[a + 1]), now = own_now or now,
      admitted = true, from = k + 1 }
    local dry = ARGV[a + 3] == '1'
    a = a + 4
    for _ = 1, part.n do
      k = k + 1
      local kind = tonumber(ARGV[a])
      local args = { tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]),
        tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]) }
      local code, remaining, reset_ms, wait_ms, ttl_ms, value = STEPS[kind](KEYS[k], part.now, part.cost,
        args[1], args[2], args[3], args[4], args[5])
      if code ~= 0 then part.admitted = false end
      steps[k] = { kind = kind, args = args, code = code, remaining = remaining, reset_ms = reset_ms,
        wait_ms = wait_ms, ttl_ms = ttl_ms, value = value, at = 0, member = 0 }
      a = a + 6
    end
    if not part.admitted and not dry then all = false end
    parts[p] = part
  end
  clocked = run_clocked
  for _, part in ipairs(parts) do
    for i = part.from, part.from + part.n - 1 do
      local s = steps[i]
      if all and part.admitted then
        if s.value then
          -- WRITES holds false for a string's kind in the batch script: there it is set_state.
          local first = (WRITES[s.kind] or set_state)(KEYS[i], s.ttl_ms, s.value, part.now, part.cost)
          local receipt = RECEIPTS[s.kind]
          if receipt == 'start' then
            s.at = sunpack('<d', s.value)
          elseif receipt == 'log' then
            -- The log's own time, which value holds (part.now unless the clock is behind the log).
            s.at, s.member = s.value, first
          elseif receipt == 'reset' then
            -- The packed log's own time: its reset is that time + the window (its second number).
            s.at = part.now + s.reset_ms - s.args[2]
          end
        end
      elseif s.code == 0 and part.cost > 0 then
        -- Nothing of this part is written: it reports its state as it stays.
        local args = s.args
        s.code, s.remaining, s.reset_ms, s.wait_ms = STEPS[s.kind](KEYS[i], part.now, 0, args[1], args[2],
          args[3], args[4], args[5])
      end
    end
  end
  for i = from_k + 1, k do
    local s, at = steps[i], r + (i - from_k - 1) * 6
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5], reply[at + 6] =
      s.code, s.remaining, s.reset_ms, s.wait_ms, s.at, s.member
  end
  return (k - from_k) * 6
end
`;

/** The joint script's own driver, after {@link jointLua}: every part of ARGV, keys from KEYS[1]. */
export const jointDriverLua = `
local reply = {}
joint(3, 0, tonumber(ARGV[2]), now, reply, 0)
return reply
`;
