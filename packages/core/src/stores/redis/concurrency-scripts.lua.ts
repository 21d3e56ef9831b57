import { intTextLua } from './scripts/int-text.lua';
import { nowLua } from './scripts/prelude.lua';

/** The locals every permit script starts with. */
const permitsHeadLua = `
local floor, format, match = math.floor, string.format, string.match
-- Longest leaseMs (a day) + an hour of clocks disagreeing: no lease of sluice is further ahead.
local FAR_MS = 90000000
`;

/**
 * Counting a key's live leases and keeping its expiry (`permits_live`, `permits_keep`): what the
 * acquire and renew scripts need. With `memo` (the batch script, which decides many requests in
 * one call), the last key counted and its count are kept through the call (see the Lua's
 * `live_key`); a lone call would only pay for them (about 4.4 k instructions a lone acquire,
 * callgrind).
 */
const permitsCountLua = (memo: boolean): string => `
${
  memo
    ? `-- Within one call (a batch decides at one "now"), what was last counted, so that a hot key's
-- acquires in a batch drop and count its leases once, not each: the key, the time it was counted
-- at, and its live leases then, kept up to date by the acquires, releases and renewals on it
-- that follow (nothing else writes the key, and no lease expires within a call). The texts of
-- the last times sent are kept too (see intTextLua).
local live_key, live_now, live_held = false, 0, 0
local permit_cut_ms, permit_cut_text, permit_expiry_ms, permit_expiry_text`
    : ''
}

-- Live leases at key once the expired ones are dropped, and those from too far ahead once
-- check_from leases are counted: an acquire checks them only when they would refuse it, so bad
-- data refuses nothing and the usual acquire runs one command fewer (about 3 k instructions).
local function permits_live(key, now, check_from)
  ${memo ? 'if key == live_key and now == live_now and live_held < check_from then return live_held end' : ''}
  ${intTextLua('cut_text', 'now', 'permit_cut', memo)}
  local dropped = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', cut_text)
  local held = 0
  if type(dropped) == 'table' then
    if not match(dropped.err, '^WRONGTYPE') then error(dropped) end
    redis.call('DEL', key)
  else
    held = redis.call('ZCARD', key)
    if held >= check_from and redis.call('ZREMRANGEBYSCORE', key, '(' .. format('%d', now + FAR_MS), '+inf') > 0 then
      held = redis.call('ZCARD', key)
    end
  end
  ${memo ? 'live_key, live_now, live_held = key, now, held' : ''}
  return held
end

-- The key outlives every lease in it, and no longer than the longest: its expiry is lengthened
-- to lease_ms, never shortened. A key the caller just made (no expiry yet) is given it at once.
-- Redis 7 (which has REDIS_VERSION) lengthens in one command, PEXPIRE ... GT, which leaves alone
-- a key with no expiry as if endless: only when it did nothing does PTTL tell why (a longer
-- expiry, or none: someone else's PERSIST, which gets one here). Within one call (a batch is one
-- "now"), a key given lease_ms or more already is left as it is, without a command: a batch's
-- acquires on a hot key would each find its expiry as the first set it, which GT does not lengthen.
local kept_key, kept_lease = false, 0
local function permits_keep(key, lease_ms, made)
  if made then
    redis.call('PEXPIRE', key, lease_ms)
  elseif key == kept_key and lease_ms <= kept_lease then
    return
  elseif not (redis.REDIS_VERSION and redis.call('PEXPIRE', key, lease_ms, 'GT') == 1) then
    if redis.call('PTTL', key) < lease_ms then redis.call('PEXPIRE', key, lease_ms) end
  end
  kept_key, kept_lease = key, lease_ms
end
`;

const permitAcquireLua = (memo: boolean): string => `
-- Takes lease id when fewer than max_n are live: acquired (1 or 0), live leases after. With none
-- live the key is gone (Redis deletes an emptied set): ZADD makes it anew.
local function permit_acquire(key, now, max_n, lease_ms, id)
  local held = permits_live(key, now, max_n)
  if held >= max_n then return 0, held end
  local expiry_ms = now + lease_ms
  ${intTextLua('expiry', 'expiry_ms', 'permit_expiry', memo)}
  redis.call('ZADD', key, expiry, id)
  ${
    memo
      ? `-- Counted as soon as it is in: whatever fails after, the kept count is the set's.
  live_held = held + 1`
      : ''
  }
  permits_keep(key, lease_ms, held == 0)
  return 1, held + 1
end
`;

const permitReleaseLua = `
-- Removes lease id: 1 when it was there, else 0.
local function permit_release(key, id)
  local removed = redis.pcall('ZREM', key, id)
  if type(removed) == 'table' then
    if not match(removed.err, '^WRONGTYPE') then error(removed) end
    return 0
  end
  return removed
end
`;

const permitRenewLua = (memo: boolean): string => `
-- Renews the ids ARGV[from..to] (see RENEW_PERMITS_SCRIPT): live leases after, and the ids that
-- had lapsed. Every id is a request still running at its holder: one that lapsed (Redis lost its
-- data, or the holder was away longer than its lease) is taken back whatever the count, so that
-- it counts again; its holder never lets more than max run.
local function permit_renew(key, now, lease_ms, from, to)
  local held = permits_live(key, now, 0)
  ${
    memo
      ? `-- Not kept while the leases change below: a renewal that fails midway leaves no count.
  live_key = false`
      : ''
  }
  -- None live: the key is gone, and the leases added below make it anew.
  local made = held == 0
  local lapsed = {}
  local expiry_ms = now + lease_ms
  ${intTextLua('expiry', 'expiry_ms', 'permit_expiry', memo)}
  for i = from, to do
    local id = ARGV[i]
    -- ZADD answers 1 for a member it added: a lease that was not there.
    if redis.call('ZADD', key, expiry, id) == 1 then
      lapsed[#lapsed + 1] = id
      held = held + 1
    end
  end
  if to >= from then permits_keep(key, lease_ms, made) end
  ${memo ? 'live_key, live_held = key, held' : ''}
  return held, lapsed
end
`;

/**
 * Lua of the concurrency limits' permits (`createConcurrencyLimiter` on a `RedisStore`): one
 * script per operation, each one round trip, atomic.
 *
 * State: one sorted set per key, `<prefix>:{<key>}:permits`, a member per lease (its id, unique
 * across processes) scored by the epoch ms at which it expires. A holder renews its leases while
 * its requests run; a crashed or partitioned holder stops, and its leases expire by themselves,
 * so its permits come back after `leaseMs` without anyone cleaning up. The key itself expires
 * once its longest lease has (an idle key costs nothing), and Redis deletes an emptied set.
 *
 * Read defensively, as the rate-limit states are: another type at the key is no permits of ours
 * (deleted, read as none), and a lease scored further ahead than sluice ever writes (the longest
 * `leaseMs` plus an hour of clock disagreement, `+inf` included) is dropped before it could
 * refuse anyone (an acquire that counts `max` leases, and every renewal), so bad data can neither
 * fail a request nor hold a permit forever.
 *
 * The batch script holds every function (see `batch-ops.lua.ts`); each operation's own script
 * only those it runs, as Redis makes a script's functions anew at each call (callgrind, a permit
 * taken and given back alone: 98.6 k instructions with every function in both scripts, 94.0 k).
 */
export const permitsLua = [
  permitsHeadLua,
  permitsCountLua(true),
  permitAcquireLua(true),
  permitReleaseLua,
  permitRenewLua(true),
].join('');

/**
 * KEYS: the permits key. ARGV: `max`, `leaseMs`, the lease id, `now` (`''`: the server's `TIME`).
 * Replies `{ acquired (1 or 0), live leases after }`.
 */
export const ACQUIRE_PERMIT_SCRIPT = `${permitsHeadLua}${permitsCountLua(false)}${permitAcquireLua(false)}
${nowLua('ARGV[4]')}
local acquired, held = permit_acquire(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return { acquired, held }
`;

/** KEYS: the permits key. ARGV: the lease id. Replies 1 when the lease was there, else 0. */
export const RELEASE_PERMIT_SCRIPT = `${permitsHeadLua}${permitReleaseLua}
return permit_release(KEYS[1], ARGV[1])
`;

/**
 * KEYS: the permits key. ARGV: `max` (unused: a renewal takes every lease back), `leaseMs`, `now`
 * (`''`: `TIME`), then the ids to renew. Each id is set to expire at `now + leaseMs`: one still
 * live is extended, one that lapsed meanwhile (expired, or gone with Redis's data) is taken back
 * whatever the count, as its request still runs. Replies `{ live leases after, lapsed ids... }`;
 * with no ids it only counts.
 */
export const RENEW_PERMITS_SCRIPT = `${permitsHeadLua}${permitsCountLua(false)}${permitRenewLua(false)}
${nowLua('ARGV[3]')}
local held, lapsed = permit_renew(KEYS[1], now, tonumber(ARGV[2]), 4, #ARGV)
local reply = { held }
for i = 1, #lapsed do reply[i + 1] = lapsed[i] end
return reply
`;

/** Longest `leaseMs` the scripts accept (a day): see `FAR_MS`. */
export const MAX_LEASE_MS = 86_400_000;
