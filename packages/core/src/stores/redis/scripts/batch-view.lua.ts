import { APPEND_TTL, KEEP_TTL, keepStateLua, readStringLua } from './prelude.lua';

/**
 * How the batch script's steps read and write string state, in place of the prelude's
 * `stateAccessLua` and `set_state`. A batch whose keys repeat (a key one or two places after
 * itself: a flash sale's item, one client's address) goes through its own view of its keys, so
 * that a key many of its requests share costs one `GET` and one `PSETEX` per batch instead of
 * per request; any other batch writes as it goes, as the requests would alone (the view costs
 * Redis about 2 k instructions per decision that a batch of distinct keys would not win back),
 * and so does a batch with a sliding log (its sorted sets are written as they go). All give the
 * same verdicts and leave the same state.
 *
 * Without the view, a batch of 16 keys or more reads them all up front (`fetch`): one `MGET`
 * (about 1 k instructions per key, a `GET` 3 k) and, when some came back empty, one `EXISTS` of
 * those, since `MGET` answers nil for a key of another type as for none. When none of them
 * exists they are none; else each of them is read at its first read, as alone (so a key of
 * another type is deleted then, as one by one). A key's fetched value serves its first read
 * only, and only while no write came first: every read after is Redis's. Writes go as they go,
 * so a refused write meets the same requests as one by one. Redis 7 counted (callgrind, gcra,
 * 64 distinct keys a call): 3 % fewer instructions per decision on keys with no state, 5 % on
 * keys holding state; 16 keys is about where `MGET` and `EXISTS` begin to pay.
 *
 * With the view (`view_of_keys`, made by the driver only for a batch that takes it): each key is
 * read once, at its first read (`held`: the value Redis would hold, false for none); a write or
 * a deletion (a reset, a give-back back to the initial state, a key of another type found at a
 * read) only changes the view and is listed (`written_keys`, `written_ttls`: its TTL, 0 to
 * delete; a write that keeps the key's expiry takes the TTL of the key's last write in the view
 * that set one, as Redis has not been sent that one); after the last request `flush` sends
 * each listed key once, as its last write left it. The stored state is the last write's, as if
 * each request had written in turn; its TTL runs from the end of the batch instead of from its
 * own request (the same millisecond but for a long batch). Nothing is written before `flush`,
 * so a request that failed midway left in the view exactly what it would have left in Redis.
 *
 * A write Redis refuses (OOM under maxmemory, a read-only replica) fails, request by request,
 * only the requests that write. Under maxmemory Redis refuses a script's `PSETEX` until its first
 * write that is not refused (a `DEL`), whatever the key: `flush` sends first a write of the kind
 * the requests would have sent first, and when Redis refuses it (nothing written yet), the batch
 * is decided again without the view, so that each request meets the refusal itself.
 */
export const batchReadsLua = `
-- The functions the steps call: Redis's at once (set below), or the view's (view_of_keys).
local del, packed, set_state
${readStringLua('read')}
-- Without the view, a batch of FETCH_FROM keys or more reads them all up front (see
-- batchReadsLua): each key's value as one MGET found it, false for none, until a request reads
-- it or writes it; from then on (or for a key not found here) Redis is asked, as alone.
local fetched = {}

local function del_now(key)
  -- (Setting an absent field to nil would add it to the table, in Lua 5.1.)
  if fetched[key] ~= nil then fetched[key] = nil end
  return redis.call('DEL', key)
end

-- Each TTL's text, made once per batch: a batch mostly writes a few TTLs over and over (one
-- policy's keys admitted in the same millisecond), and a format costs Redis about 1 k
-- instructions, a table lookup a tenth of that.
local ttl_texts = {}

-- ttl_ms 0 deletes the key (a give-back back to the initial state), KEEP_TTL keeps its expiry,
-- APPEND_TTL appends value to the key's string (keeping its expiry).
local function set_now(key, ttl_ms, value)
  if ttl_ms == 0 then return del_now(key) end
  if fetched[key] ~= nil then fetched[key] = nil end
  if ttl_ms == ${KEEP_TTL} then return ${keepStateLua('key', 'value')} end
  if ttl_ms == ${APPEND_TTL} then return redis.call('APPEND', key, value) end
  local ttl = ttl_texts[ttl_ms]
  if not ttl then
    ttl = format('%d', ttl_ms)
    ttl_texts[ttl_ms] = ttl
  end
  -- SET … PX with less to parse (as the prelude's set_state).
  redis.call('PSETEX', key, ttl, value)
end

-- Below 16 keys, MGET and EXISTS cost Redis more than the GETs they save.
local FETCH_FROM = 16

-- One MGET per thousand keys (a batch never spans two slots). MGET answers nil for a key of
-- another type as for none: the keys it found empty are taken as none only when EXISTS finds
-- none of them, else each is read at its first read (and a key of another type deleted then).
-- Reads then go through fetched, made here only for a batch that fetches (see view_of_keys).
local function fetch()
  local keys, empty, empties = #KEYS, {}, 0
  for from = 1, keys, 1000 do
    local to = min(keys, from + 999)
    local values = redis.call('MGET', unpack(KEYS, from, to))
    for i = from, to do
      local value = values[i - from + 1]
      if value then
        fetched[KEYS[i]] = value
      else
        empties = empties + 1
        empty[empties] = KEYS[i]
      end
    end
  end
  for from = 1, empties, 1000 do
    local to = min(empties, from + 999)
    if redis.call('EXISTS', unpack(empty, from, to)) == 0 then
      for i = from, to do fetched[empty[i]] = false end
    end
  end
  packed = function(key)
    local value = fetched[key]
    if value == nil then return read(key) end
    fetched[key] = nil
    return value
  end
end

-- Without the view: each read and write sent as it happens.
del, packed, set_state = del_now, read, set_now

-- flush, once view_of_keys made it, and how many writes Redis took from it.
local flush
local flushed = 0
`;

/**
 * `view_of_keys`, which takes the view (see {@link batchReadsLua}): made by the driver only for a
 * batch that takes it, as each closure a script makes costs Redis, on every call.
 */
export const viewLua = `
local function view_of_keys()
  local held, written_keys, written_ttls, written_values, writes = {}, {}, {}, {}, 0
  -- The TTL of each key's last write in the view that set one: a later write that keeps the
  -- expiry (KEEP_TTL, APPEND_TTL) read a state Redis has not been sent yet, so flush sends that TTL.
  local set_ttls = {}

  local function set_held(key, ttl_ms, value)
    if ttl_ms == ${APPEND_TTL} then
      -- Appended to the string the step read (held: it read through the view), sent whole.
      value = held[key] .. value
      ttl_ms = set_ttls[key] or ${KEEP_TTL}
    elseif ttl_ms == ${KEEP_TTL} then
      ttl_ms = set_ttls[key] or ttl_ms
    else
      set_ttls[key] = ttl_ms
    end
    held[key] = value or false
    writes = writes + 1
    written_keys[writes], written_ttls[writes], written_values[writes] = key, ttl_ms, value
  end
  set_state = set_held

  packed = function(key)
    local value = held[key]
    if value == nil then
      value = read(key)
      held[key] = value
    end
    return value
  end

  -- Replies 1 when the key exists (in the view, else in Redis), as DEL would.
  del = function(key)
    local value = held[key]
    local deleted
    if value == nil then
      deleted = redis.call('EXISTS', key)
    else
      deleted = value and 1 or 0
    end
    set_held(key, 0, false)
    return deleted
  end

  -- Sends each listed key once, as its last write left it: going back, a key's last write comes
  -- first and clears its view, so its earlier ones are passed over. Writes of the kind the
  -- first listed is go first (see batchReadsLua). Run under pcall: a refused write raises.
  flush = function()
    if writes == 0 then return end
    local first_deletes = written_ttls[1] == 0
    local later_keys, later_ttls, later_values, later = {}, {}, {}, 0
    for i = writes, 1, -1 do
      local key = written_keys[i]
      local value = held[key]
      if value ~= nil then
        held[key] = nil
        local ttl_ms = written_ttls[i]
        if (ttl_ms == 0) == first_deletes then
          set_now(key, ttl_ms, value)
          flushed = flushed + 1
        else
          later = later + 1
          later_keys[later], later_ttls[later], later_values[later] = key, ttl_ms, value
        end
      end
    end
    if flushed == 0 and not first_deletes then
      -- Every PSETEX overwritten by a deletion: the first is sent still, as the requests sent it.
      set_now(written_keys[1], written_ttls[1], written_values[1])
      flushed = 1
    end
    for i = 1, later do
      set_now(later_keys[i], later_ttls[i], later_values[i])
      flushed = flushed + 1
    end
  end
end
`;
