/**
 * A part's block record (the limiter's `block` option), as the joint decision reads and writes
 * it (see `joint.lua.ts`): the functions `block_part` and `block_refused`, which fill the joint's
 * `J` (eight values per rule key). The record is a string of two doubles (`struct`, as the
 * states: see `state-bytes.lua.ts`), the block's end (epoch ms) and its length, at
 * `<prefix>:{<key>}:block@1`; it expires `maxDurationMs` after the block ends. Whether it still
 * counts is decided from its own times (a caller's clock and the server's agree), the expiry
 * only frees the key. Repeats `algorithms/block.ts` operation for operation.
 *
 * A part's block is `{ durationMs, backoff, maxDurationMs }` (see `joint_parts`).
 */
export const blockLua = `
-- The block record at key when it still counts at now: its end and length; else false.
local function block_read(key, now, keep)
  local value = redis.pcall('GET', key)
  if type(value) == 'string' and #value == 16 then
    local ends, length = sunpack('<dd', value)
    if now < ends + keep then return ends, length end
  end
  return false, 0
end

-- Whether the part's key is blocked at now: then each of its rule keys (after J's place at) is
-- refused, code 3, nothing remaining, its wait the block's remaining time; nothing is stepped.
local function block_part(part, key, now, at)
  local ends, length = block_read(key, now, part.block[3])
  part.block_end, part.block_length = ends, length
  if not ends or now >= ends then return false end
  local left = ends - now
  for i = at + 1, at + part.n do
    local o = i * 8 - 8
    J[o + 1], J[o + 2], J[o + 3], J[o + 4], J[o + 5], J[o + 6], J[o + 7], J[o + 8] =
      3, 0, left, left, 0, false, 0, 0
  end
  return true
end

-- A part refused: when a rule (its J before at) refused as limited (code 1), the part takes units
-- and is no probe, its key is blocked from now: the first block's length, or (the last one still
-- remembered) backoff times the last one's, at most maxDurationMs; its refusals wait no less.
local function block_refused(part, key, now, at)
  if part.probe or part.cost <= 0 then return end
  local from, limited = at - part.n + 1, false
  for i = from, at do
    if J[i * 8 - 7] == 1 then limited = true end
  end
  if not limited then return end
  local block = part.block
  local length = block[1]
  if part.block_end then
    length = floor(part.block_length * block[2])
    if length > block[3] then length = block[3] end
  end
  local ends = now + length
  redis.call('PSETEX', key, length + block[3], spack('<dd', ends, length))
  for i = from, at do
    local o = i * 8 - 8
    if J[o + 1] == 1 and J[o + 4] < length then J[o + 4] = length end
  end
end
`;
