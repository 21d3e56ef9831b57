import { floorLua } from './lua-math';
import type { StateIo } from './lua-block';
import { KEEP_TTL } from './prelude.lua';

/**
 * The shortest slack a key may keep past its state's end (ms): a policy whose period is shorter
 * (10 r/s, no burst: 100 ms) still keeps its key's expiry for a second of admissions.
 */
export const MIN_SLACK_MS = 1000;

/**
 * How a bucket's admission (gcra, token bucket, leaky bucket) writes its key's expiry: the key may
 * outlive its state by a bounded slack, the larger of {@link MIN_SLACK_MS} and the policy's period
 * (the time to refill a full bucket, `period_num / period_den` ms), in whole ms, so that most
 * writes keep the key's expiry (`SET … KEEPTTL`, about half the cost of a `PSETEX` to Redis: 6.7 k
 * instructions from Lua against 12.3 k) instead of setting a new one.
 *
 * The state stores the expiry its key was given (epoch ms on the server's clock, 0 for none
 * known), so that a write knows it without a `PTTL`: a write keeps it while the new state ends at
 * or before it and no more than the slack before it (a state that moved back, a policy changed
 * since: `over`, in whole ms, is compared as `over * period_den <= period_num`, without the
 * division and rounding that cost a batch about 0.9 k instructions per decision, callgrind), else
 * sets the state's end + the slack and stores that. Every write that stores an expiry gives the
 * key at least that one (the key's real expiry runs from when Redis ran the command, at or after
 * the script's `now`), so the key never expires before its state ends, and outlives it by at most
 * the slack.
 *
 * A time sent by the caller (`clocked`: a limiter's `clock`, possibly skewed between instances)
 * gets an exact expiry and stores none (0): its frame is not the server's, so a later write on
 * the server's clock sets its own. A step without a state to keep gives no `stored` (nil).
 *
 * Declares the locals `write_ttl` (the TTL for the write, or `KEEP_TTL`) and `expires` (the
 * expiry to store with the state).
 *
 * @param needed - Lua expression: the ms from `now` the state needs its key (the exact TTL)
 * @param stored - Lua expression: the expiry the state read holds, or nil
 * @param periodNum - Lua expression: the policy's period in ms times `periodDen`
 * @param periodDen - Lua expression: see `periodNum` (both positive)
 * @param io - the step's reads and writes (which say how it learns whether Redis keeps TTLs)
 */
export function slackExpiryLua(
  needed: string,
  stored: string,
  periodNum: string,
  periodDen: string,
  io: StateIo,
): string {
  return `local write_ttl, expires = ${needed}, 0
if not clocked then
  local over = ${stored}
  if over then over = over - (now + write_ttl) end
  if over and over >= 0 and (over <= ${MIN_SLACK_MS} or over * ${periodDen} <= ${periodNum}) and ${io.keepsTtl} then
    write_ttl, expires = ${KEEP_TTL}, ${stored}
  else
    local slack = ${floorLua(`${periodNum} / ${periodDen}`)}
    if slack < ${MIN_SLACK_MS} then slack = ${MIN_SLACK_MS} end
    write_ttl = write_ttl + slack
    expires = now + write_ttl
  end
end`;
}
