import { callIo, inlineLua, type LuaBlock } from './lua-block';
import { floorLua } from './lua-math';
import { AHEAD_MS, APPEND_TTL } from './prelude.lua';

/**
 * The largest limit whose sliding log Redis keeps as one string of its entries' times (see
 * {@link packedLogLua}); a larger limit's log is a sorted set (`sliding-log.lua.ts`). Measured
 * (see {@link packedLogLua}): a log of up to 256 live entries (a full log at this limit, the
 * most it holds) costs Redis no more than the sorted set alone (61.7 k instructions per decision
 * against 64.2 k) and 1.13 × in batches (49.4 k against 43.8 k), a shorter one less (16
 * entries: 51.0 k against 75.2 k alone, 33.1 k against 54.7 k in batches); at 512, 1.15 × and
 * 1.42 ×. A string also holds an entry in 4 bytes, a sorted set in about 60.
 */
export const PACKED_LOG_MAX = 256;

/** Bytes of the log's base time, ahead of its entries (a double). */
const BASE_BYTES = 8;

/** Bytes of one entry: its time less the base, in ms (an unsigned 32-bit integer). */
const ENTRY_BYTES = 4;

/** An entry's offset from the base must stay below this (2^32 ms, about 49 days). */
const MAX_OFFSET = 2 ** 32;

/** Lua: the time of the 0-based entry `i` of the string `log` whose base is `base`. */
const entryLua = (log: string, i: string, base = 'base'): string =>
  `${base} + sunpack('<I4', ${log}, ${BASE_BYTES + 1} + (${i}) * ${ENTRY_BYTES})`;

/**
 * The packed log's state (see {@link packedLogLua}): the string `log` (false for none), its
 * `entries`, the `newest` entry's time (false for none), `cut`, how many entries have left (at
 * or before the log's own time, `now` or the newest entry when that is later, minus `window`),
 * and its `base` time. The cut is found by galloping then binary search from the oldest: a
 * decision reads a few entries, whatever the log's length.
 *
 * Read defensively, as the packed states are (see the prelude): a string that is not a base and
 * whole entries, that holds more entries than two windows may (twice the limit), whose base is
 * not a whole number of ms, whose newest entry is more than `AHEAD_MS` ahead or before its
 * oldest, or that holds more live entries than the limit (no admission leaves one) is deleted and
 * read as none. Entries between are read only where a decision needs one (the cut, a refusal's
 * leaving entry), each checked there.
 */
export const packedLogStateLua: LuaBlock = {
  params: ['key', 'now', 'limit', 'window'],
  body: (ret, io) => `
${io.read('value', 'key')}
if not value then ${ret('false, 0, false, 0, 0')} end
local size = #value
local entries = (size - ${BASE_BYTES}) / ${ENTRY_BYTES}
if entries >= 1 and entries % 1 == 0 and entries <= 2 * limit then
  local base = sunpack('<d', value)
  local newest, oldest = ${entryLua('value', 'entries - 1')}, ${entryLua('value', '0')}
  if base % 1 == 0 and base >= 0 and oldest <= newest and newest <= now + ${AHEAD_MS} then
    local cutoff = now - window
    if newest > now then cutoff = newest - window end
    if oldest > cutoff then
      if entries <= limit then ${ret('value, entries, newest, 0, base')} end
    elseif newest <= cutoff then
      ${ret('value, entries, newest, entries, base')}
    else
      -- 0-based: the entry at lo has left, the one at hi has not.
      local lo, hi = 0, 1
      while hi < entries - 1 do
        if not (${entryLua('value', 'hi')} <= cutoff) then break end
        lo, hi = hi, hi * 2 + 1
      end
      if hi > entries - 1 then hi = entries - 1 end
      while hi - lo > 1 do
        local mid = ${floorLua('(lo + hi) / 2')}
        if ${entryLua('value', 'mid')} <= cutoff then lo = mid else hi = mid end
      end
      if entries - hi <= limit then ${ret('value, entries, newest, hi, base')} end
    end
  end
end
${io.del('key')}
${ret('false, 0, false, 0, 0')}`,
};

/**
 * Sliding log as one string, the Lua twin of `algorithms/sliding-log.ts` for a limit up to
 * {@link PACKED_LOG_MAX}: a base time (a double), then its admitted units' times less the base,
 * ascending, as little-endian 32-bit integers, one per unit (ten requests in one millisecond are
 * ten entries); a rejection writes nothing.
 *
 * The log's time never goes back (see the reference): a request behind the newest entry is
 * decided and recorded at the newest entry's time. So, as the sorted set (see
 * `sliding-log.lua.ts`), the log is trimmed and given its expiry only by the first admission of
 * each window-long span of time (spans start at the multiples of `window`): it writes the live
 * entries and its own, with the expiry of the end of the next span, which outlives every entry
 * added in the span. The span's other admissions append their entries to the string Redis holds
 * (`APPEND`, which keeps the expiry; see `APPEND_TTL`). A log holds at most the entries of two
 * windows. The log's time never goes back, so this holds with clocks that disagree.
 *
 * Why so: Redis's Lua hashes every byte of each string it makes (about 8 instructions a byte),
 * so a log costs in proportion to its bytes each time the script makes it (reading it, cutting
 * it, joining it). Counted with callgrind (bench/src/redis/log-lengths.ts: 64 keys, each a log of
 * n live entries that loses one and takes one per decision), instructions of redis-server per
 * decision, alone / in batches of 64, for n = 16, 64, 128, 256, 512:
 *
 * - entries as doubles, the log written whole at each admission: 49.3 / 28.1, 62.4 / 47.1,
 *   82.4 / 66.0, 119.6 / 103.9, 195.1 / 177.2 k;
 * - as doubles, appended: 49.9 / 32.2, 53.9 / 41.0, 60.0 / 47.2, 72.8 / 60.9, 96.9 / 86.8 k;
 * - as 32-bit offsets from a base, appended (this format): 51.0 / 33.1, 53.2 / 39.6,
 *   56.0 / 42.5, 61.7 / 49.4, 73.5 / 62.0 k;
 * - the sorted set: 75.2 / 54.7, 93.9 / 76.5, 64.0 / 43.2, 64.2 / 43.8, 63.9 / 43.7 k (Redis
 *   keeps a set of up to 128 members as a list that its commands walk).
 *
 * The base is the first entry's time when a log starts, and is kept while entries are written:
 * a write whose entries would lie 2^32 ms (49 days) or more past it writes the log afresh from
 * its oldest live entry.
 *
 * A refusal's leaving entry is read by its index and must lie in the log's live span, else the
 * log is not of sluice's making: deleted, and the request decided on none.
 */
export const packedLogLua: LuaBlock = {
  params: ['key', 'now', 'cost', 'limit', 'window'],
  body: (ret, io) => `
${inlineLua(packedLogStateLua, ['key', 'now', 'limit', 'window'], ['log', 'entries', 'newest', 'cut', 'base'], io)}
local live = entries - cut
local at = now
if newest and newest > now then at = newest end
local reset_ms = 0
if live > 0 then reset_ms = newest + window - now end
if cost > limit then ${ret('2, limit - live, reset_ms, 0')} end
if live + cost > limit then
  -- The oldest live units must leave first: the k-th of them leaves at its time + window.
  local left = ${entryLua('log', 'cut + live + cost - limit - 1')}
  if left > at - window and left <= newest then
    ${ret('1, limit - live, reset_ms, left + window - now')}
  end
  ${io.del('key')}
  log, live, cut, newest, at, reset_ms = false, 0, 0, false, now, 0
end
if cost == 0 then ${ret('0, limit - live, reset_ms, 0')} end
local span = at - at % window
if not log or cut == entries then
  -- No live entry: the log starts afresh, based on this admission's time.
  local added = spack('<dI4', at, 0)
  if cost > 1 then added = added .. srep(spack('<I4', 0), cost - 1) end
  ${ret('0, limit - live - cost, at + window - now, 0, span + 2 * window - now, added')}
end
local whole = newest - newest % window ~= span
if at - base >= ${MAX_OFFSET} then
  -- Based afresh on the oldest live entry (once in 49 days of a busy key): each entry rewritten,
  -- and the log written whole.
  local first = ${entryLua('log', 'cut')}
  local parts = { spack('<d', first) }
  for i = cut, entries - 1 do parts[#parts + 1] = spack('<I4', ${entryLua('log', 'i')} - first) end
  log, base, cut, whole = table.concat(parts), first, 0, true
end
local added = spack('<I4', at - base)
if cost > 1 then added = srep(added, cost) end
if not whole then
  ${ret(`0, limit - live - cost, at + window - now, 0, ${APPEND_TTL}, added`)}
end
if cut > 0 then log = spack('<d', base) .. ssub(log, ${BASE_BYTES + 1} + cut * ${ENTRY_BYTES}) end
-- The span's first admission: the live entries and its own, with the expiry of the next span's end.
${ret('0, limit - live - cost, at + window - now, 0, span + 2 * window - now, log .. added')}`,
};

/**
 * The packed log's give-back, `packed_log_back` (see `give-back.lua.ts`): removes up to `cost`
 * entries of the admission's time `at` while they still count on the log's own time, as the
 * reference removes them (entries of one time are alike), and drops those that have left. The
 * expiry is set as a write that moves the newest entry to another span sets it.
 */
export const packedLogBackLua = `
local function packed_log_back(key, now, cost, at, _member, limit, window)
  if not at then return end
  ${inlineLua(packedLogStateLua, ['key', 'now', 'limit', 'window'], ['log', 'entries', 'newest', 'cut', 'base'], callIo)}
  if not log or cut == entries then return end
  if at <= max(now, newest) - window then return end
  -- From the newest back to the last entry at or before at, then the entries at at.
  local i = entries - 1
  while i >= cut and ${entryLua('log', 'i')} > at do i = i - 1 end
  local removed = 0
  while removed < cost and i - removed >= cut and ${entryLua('log', 'i - removed')} == at do
    removed = removed + 1
  end
  if removed == 0 then return end
  if entries - cut == removed then return 0 end
  local kept = spack('<d', base) .. ssub(log, ${BASE_BYTES + 1} + cut * ${ENTRY_BYTES}, ${BASE_BYTES} + (i - removed + 1) * ${ENTRY_BYTES})
    .. ssub(log, ${BASE_BYTES + 1} + (i + 1) * ${ENTRY_BYTES})
  local last = ${entryLua('kept', `(#kept - ${BASE_BYTES}) / ${ENTRY_BYTES} - 1`)}
  return last - last % window + 2 * window - now, kept
end
`;
