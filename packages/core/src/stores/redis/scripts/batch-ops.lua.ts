/**
 * The batch script's ops with arguments of their own, each made by the driver's loader of its
 * group (see `batch.lua.ts`): several limiters' parts of one request (op 4) and an exact
 * give-back with receipts (5), after `joint`, `give_back_taken` and the `TAKEN_BACKS` table; the
 * permits of concurrency limits, acquire (6), release (7) and renew (8), after the permit
 * functions. Each is what its own script does
 * alone (`joint.lua.ts`, `give-back.lua.ts`, `concurrency-scripts.lua.ts`), by the same
 * function, so a request decides the same in a batch as alone.
 *
 * Alike such requests in a row (the same op, `n`, `m`, time and shared values) are one run in
 * the driver's arguments: `count`, `op`, `n` (keys per request), `m` (how many arguments of its
 * own each request has), `now` (`''` for the server's time), `s` and the `s` values the run's
 * requests share, then each request's `m` arguments in turn:
 *
 * - joint: as shared values, the number of parts, then per part `keys, cost, now, flags` (1 a dry
 *   run, 2 a probe) and six values per key (one route's requests are alike: each sends only its
 *   keys); no arguments of its own; replies six integers per key (as the joint script);
 * - exact give-back: `cost`, then per key eight values (kind, five numbers, `at`, `member`);
 *   replies the number of keys changed;
 * - acquire: shared `max` and `leaseMs`, then the lease id; replies `acquired` (1 or 0) and the
 *   live leases;
 * - release: the lease id; replies 1 when the lease was there, else 0;
 * - renew: shared `max` and `leaseMs`, then the ids; replies the live leases, how many ids had
 *   lapsed (taken back), then those ids.
 *
 * Each op is called `(n, m, now, k, a, reply, r, s)`: its keys follow `KEYS[k]`, its arguments
 * start at `ARGV[a]` and its run's shared values at `ARGV[s]`; it writes its answer after
 * `reply[r]` and returns how many values it wrote.
 */
export const genericOpsLua = `
-- The parts' description is the run's shared values (see redis-joint.ts), read once per run.
local joint_at, joint_run = false, nil
local function joint_op(n, m, now, k, a, reply, r, s)
  if s ~= joint_at then joint_at, joint_run = s, joint_parts(s) end
  return joint(joint_run, k, now, reply, r)
end

local function give_back_taken_op(n, m, now, k, a, reply, r)
  reply[r + 1] = give_back_taken(TAKEN_BACKS, k, a, n, now, tonumber(ARGV[a]), 8)
  return 1
end

OPS[4], OPS[5] = joint_op, give_back_taken_op
`;

/** The permits' ops (6 to 8), after their functions (see {@link genericOpsLua}). */
export const permitOpsLua = `
-- A run's max and leaseMs, read once per run (s: where its shared values start).
local run_s, run_max, run_lease = false, 0, 0
local function run_limits(s)
  if s ~= run_s then run_s, run_max, run_lease = s, tonumber(ARGV[s]), tonumber(ARGV[s + 1]) end
  return run_max, run_lease
end

local function permit_acquire_op(n, m, now, k, a, reply, r, s)
  local max_n, lease_ms = run_limits(s)
  reply[r + 1], reply[r + 2] = permit_acquire(KEYS[k + 1], now, max_n, lease_ms, ARGV[a])
  return 2
end

local function permit_release_op(n, m, now, k, a, reply, r)
  local key = KEYS[k + 1]
  local removed = permit_release(key, ARGV[a])
  -- A lease of the key last counted: one fewer live (see permits_live).
  if removed == 1 and key == live_key then live_held = live_held - 1 end
  reply[r + 1] = removed
  return 1
end

local function permit_renew_op(n, m, now, k, a, reply, r, s)
  local _, lease_ms = run_limits(s)
  local held, lapsed = permit_renew(KEYS[k + 1], now, lease_ms, a, a + m - 1)
  reply[r + 1], reply[r + 2] = held, #lapsed
  for i = 1, #lapsed do reply[r + 2 + i] = lapsed[i] end
  return 2 + #lapsed
end

OPS[6], OPS[7], OPS[8] = permit_acquire_op, permit_release_op, permit_renew_op
`;
