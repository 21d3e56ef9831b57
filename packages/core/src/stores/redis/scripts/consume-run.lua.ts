import { inlineLua, type LuaBlock, type StateIo } from './lua-block';
import { APPEND_TTL, KEEP_TTL, keepStateLua } from './prelude.lua';

/**
 * How `consume_run`'s steps read and delete: the run reads the key itself (into `held`, as the
 * batch script reads, see `batch-view.lua.ts`) before its step, and deletes through the view in
 * a batch that took it.
 */
const runIo: StateIo = {
  read: (target) => `local ${target} = held`,
  // (A state deleted is a step's effect on its key: the run does not take its outcome as a
  // function of the state alone, see consume_run.)
  del: (key) => `dropped = true
if in_view then del(${key}) else del_now(${key}) end`,
  keepsTtl: 'can_keep_ttl',
};

/**
 * The batch script's `consume_run`: a run of one-key consumes on one policy whose state is a
 * string, from its request `from` on, each decided and replied as `consume` decides and
 * replies it, through the view when `in_view` (the batch took it: its keys repeat, a flash
 * sale's hot item), else reading and writing Redis at once, on the run's one key when `same`,
 * its kind's step inline (no call, no pcall per request: a request that raises ends the run,
 * the driver replies its error in its place and runs on from the next; `deciding` says which
 * it was). A step is a function of the key's state, now, the cost and the policy, which a run
 * shares: a key whose state is the one the run last decided on (none, or the same bytes)
 * decides as that one did, without its step: a batch of new keys (a flood of new clients), or
 * of keys last admitted together (clients that come back together: their states are one
 * string), or a hot key refused again and again. A step that deleted its key's state
 * (unreadable) is not taken for another key's: that key's state is deleted by its own step.
 *
 * @param steps - the string-state kinds' steps, by the number the batch knows each kind by
 * @param runsTable - the Lua table `RUNS` (kind number → whether its consumes run here)
 */
export function consumeRunLua(
  steps: ReadonlyArray<{ readonly number: number; readonly step: LuaBlock }>,
  runsTable: string,
): string {
  const branches = steps.map(({ number, step }, i) => {
    const args = ['key', 'now', 'cost', 'a1', 'a2', 'a3', 'a4', 'a5'];
    const outs = ['code', 'remaining', 'reset_ms', 'wait_ms', 'ttl_ms', 'value'];
    const test = `kind == ${number}`;
    return `${i === 0 ? 'if' : 'elseif'} ${test} then
${inlineLua(step, args, outs, runIo, true)}`;
  });
  return `
${runsTable}
local deciding
local function consume_run(p, count, cost, now, k, from, in_view, same)
  local b = p * STRIDE
  local kind, a1, a2, a3, a4, a5 = pol[b - 5], pol[b - 4], pol[b - 3], pol[b - 2], pol[b - 1], pol[b]
  -- The last state decided on (held: a string, or false for none) and what its step gave.
  local seen, s_code, s_remaining, s_reset_ms, s_wait_ms, s_ttl_ms, s_value
  -- The last TTL written and its text: a run's keys mostly share one (see seen).
  local ttl_last, ttl_text
  -- Read once per run, not per request: each global or field read costs Redis about 0.1 k.
  local KEYS, call = KEYS, redis.call
  -- A run on one key (see the batch's runs): KEYS holds it once.
  local one_key = same and KEYS[k + 1]
  for i = from, count do
    deciding = i
    local key = one_key or KEYS[k + i]
    local held
    if in_view then
      held = packed(key)
    else
      held = fetched[key]
      if held == nil then
        held = read(key)
      else
        fetched[key] = nil
      end
    end
    local code, remaining, reset_ms, wait_ms, ttl_ms, value
    if held == seen then
      code, remaining, reset_ms, wait_ms, ttl_ms, value = s_code, s_remaining, s_reset_ms, s_wait_ms, s_ttl_ms, s_value
    else
      local dropped = false
${branches.join('\n')}
end
      if not dropped then
        seen, s_code, s_remaining, s_reset_ms, s_wait_ms, s_ttl_ms, s_value = held, code, remaining, reset_ms, wait_ms, ttl_ms, value
      end
    end
    -- As set_now writes (the read above left no fetched value for the key), or into the view.
    if value then
      if in_view then
        set_state(key, ttl_ms, value)
      elseif ttl_ms == 0 then
        del_now(key)
      elseif ttl_ms == ${KEEP_TTL} then
        ${keepStateLua('key', 'value', 'call')}
      elseif ttl_ms == ${APPEND_TTL} then
        call('APPEND', key, value)
      else
        if ttl_ms ~= ttl_last then ttl_last, ttl_text = ttl_ms, format('%d', ttl_ms) end
        call('PSETEX', key, ttl_text, value)
      end
    end
    -- As consume replies a one-key request.
    if code == 0 and wait_ms == 0 then
      reply[r + 1], reply[r + 2] = remaining, reset_ms
      r = r + 2
    else
      reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = -1 - code, remaining, reset_ms, wait_ms
      r = r + 4
    end
  end
end
`;
}
