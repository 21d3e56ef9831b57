import { blockLua } from './block.lua';

/**
 * The joint decision, the function `joint` (which the joint script and the batch script call):
 * several limiters' parts of one request (several limits on a route, say per address and per
 * SKU), decided in one call, all or none. Every key's step runs
 * first; a part admits when all its keys admit; only when every enforcing part admits (a dry-run
 * part counts but never refuses) are the admitted parts' states written, each with its own TTL.
 * Otherwise nothing is written and the keys that would have admitted report their state as it
 * stays (their step at cost 0), as the several-rules script does. A probe part is decided as any
 * (its refusal refuses) but never written: admitting, its keys report their state as it stays.
 *
 * A part with a block (the limiter's `block` option) has one more key after its rules', its
 * block record (see `block.lua.ts`): while the record's block lasts, the part is refused whole
 * (code 3, `'blocked'`, on each of its keys; its rules not stepped, so nothing of any part is
 * written), and a part refused as limited (code 1) that is no probe and takes units blocks its
 * key at once, whatever the other parts say, its refusals' waits no shorter than the block. The
 * TypeScript reference is `prepareJoint` with `algorithms/block.ts`.
 *
 * Two parts must not share a key (the client checks): a step reads the state as stored, not as
 * an earlier part of the same call would leave it.
 *
 * KEYS: every part's keys, in order (on Cluster, all in one slot). ARGV: `now` ('' for the
 * server's TIME, read once), the number of parts, then per part `keys, cost, now ('' for the
 * first), flags (1: a dry run, 2: a probe, never written, 4: a block; or several)`, with a block
 * its `durationMs, backoff, maxDurationMs`, followed per key (`keys`: its rules' keys, not
 * counting the block's) by the
 * number of its kind of state (from 1, in
 * `STATE_KINDS` order) and the policy's numbers, padded to 5. Replies six integers per key:
 * `code, remaining, resetMs, waitMs` as the other scripts, then the admission's receipt
 * `at, member` (see `Receipt`; 0 0 when nothing was written).
 */
export const jointLua = `
-- The parts' description at ARGV[a] (the number of parts, then per part as above), read into
-- one table: a batch's alike joint requests share it (their run's shared values), so it is read
-- once per run, not once per request (each tonumber of a value costs Redis a strtod).
local function joint_parts(a)
  local parts = { count = tonumber(ARGV[a]), keys = 0 }
  a = a + 1
  for p = 1, parts.count do
    local flags = tonumber(ARGV[a + 3])
    local part = { n = tonumber(ARGV[a]), cost = tonumber(ARGV[a + 1]), now = tonumber(ARGV[a + 2]),
      dry = flags % 2 == 1, probe = flags % 4 >= 2 }
    a = a + 4
    if flags >= 4 then
      part.block = { tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]) }
      a = a + 3
    end
    for i = 1, part.n do
      -- Per key: its kind, then its policy's five numbers, one after the other.
      part[i * 6 - 5] = tonumber(ARGV[a])
      for j = 1, 5 do part[i * 6 - 5 + j] = tonumber(ARGV[a + j]) end
      a = a + 6
    end
    parts.keys = parts.keys + part.n
    parts[p] = part
  end
  return parts
end

-- Each key's step results, eight values by its place in the request (its code, remaining,
-- reset, wait, TTL, value, then its receipt's at and member), and whether each part admits:
-- kept across requests, where a table per request and key cost Redis, and its collector, more
-- than the decision (callgrind, [perIp, perSku] in batches of 64: 118 k → 74 k per request).
local J, j_admitted = {}, {}
${blockLua}

-- Decides the parts (see joint_parts) on the keys after KEYS[k], with now for the parts without
-- a time of their own; writes six integers per key into reply after reply[r] and returns how
-- many it wrote. (The batch script calls it too.) at counts the parts' rule keys (the reply's
-- places), key the keys (a block's too).
local function joint(parts, k, now, reply, r)
  local all = true
  -- A part with a time of its own is clocked (its writes get exact expiries: see expiry.lua.ts).
  local run_clocked = clocked
  local at, key = 0, k
  for p = 1, parts.count do
    local part = parts[p]
    local part_now = part.now or now
    clocked = part.now ~= nil or run_clocked
    local admitted = true
    local blocked = part.block and block_part(part, KEYS[key + part.n + 1], part_now, at)
    if blocked then
      admitted = false
      at = at + part.n
    else
      for i = 1, part.n do
        at = at + 1
        local b = i * 6 - 5
        local code, remaining, reset_ms, wait_ms, ttl_ms, value = STEPS[part[b]](KEYS[key + i], part_now,
          part.cost, part[b + 1], part[b + 2], part[b + 3], part[b + 4], part[b + 5])
        if code ~= 0 then admitted = false end
        local o = at * 8 - 8
        J[o + 1], J[o + 2], J[o + 3], J[o + 4], J[o + 5], J[o + 6], J[o + 7], J[o + 8] =
          code, remaining, reset_ms, wait_ms, ttl_ms, value, 0, 0
      end
      if part.block and not admitted then block_refused(part, KEYS[key + part.n + 1], part_now, at) end
    end
    key = key + part.n + (part.block and 1 or 0)
    j_admitted[p] = admitted
    if not admitted and not part.dry then all = false end
  end
  clocked = run_clocked
  at, key = 0, k
  for p = 1, parts.count do
    local part = parts[p]
    local part_now = part.now or now
    for i = 1, part.n do
      at = at + 1
      key = key + 1
      local b = i * 6 - 5
      local kind = part[b]
      local o = at * 8 - 8
      if all and j_admitted[p] and not part.probe then
        local value = J[o + 6]
        if value then
          -- WRITES holds false for a string's kind in the batch script: there it is set_state.
          local first = (WRITES[kind] or set_state)(KEYS[key], J[o + 5], value, part_now, part.cost)
          local receipt = RECEIPTS[kind]
          if receipt == 'start' then
            J[o + 7] = sunpack('<d', value)
          elseif receipt == 'log' then
            -- The log's own time, which value holds (part_now unless the clock is behind the log).
            J[o + 7], J[o + 8] = value, first
          elseif receipt == 'reset' then
            -- The packed log's own time: its reset is that time + the window (its second number).
            J[o + 7] = part_now + J[o + 3] - part[b + 2]
          end
        end
      elseif J[o + 1] == 0 and part.cost > 0 then
        -- Nothing of this part is written (or it is a probe): it reports its state as it stays.
        J[o + 1], J[o + 2], J[o + 3], J[o + 4] = STEPS[kind](KEYS[key], part_now, 0,
          part[b + 1], part[b + 2], part[b + 3], part[b + 4], part[b + 5])
      end
    end
    if part.block then key = key + 1 end
  end
  for i = 1, at do
    local o, q = r + (i - 1) * 6, i * 8 - 8
    reply[o + 1], reply[o + 2], reply[o + 3], reply[o + 4], reply[o + 5], reply[o + 6] =
      J[q + 1], J[q + 2], J[q + 3], J[q + 4], J[q + 7], J[q + 8]
    -- Nothing of a request is kept for the next: a string value is let go.
    J[q + 6] = false
  end
  return at * 6
end
`;

/** The joint script's own driver, after {@link jointLua}: every part of ARGV, keys from KEYS[1]. */
export const jointDriverLua = `
local reply = {}
joint(joint_parts(2), 0, now, reply, 0)
return reply
`;
