import { ALGORITHMS, type AlgorithmName, type Policy } from '../../../types';
import { fixedWindowLua } from './fixed-window.lua';
import { gcraLua } from './gcra.lua';
import { leakyBucketLua } from './leaky-bucket.lua';
import { multiDriverLua } from './multi.lua';
import { nowLua, preludeLua, setStateLua } from './prelude.lua';
import { slidingLogLua } from './sliding-log.lua';
import { slidingWindowLua } from './sliding-window.lua';
import { tokenBucketLua } from './token-bucket.lua';

/** One algorithm's Lua: the function that computes a step, and how its state is written. */
interface AlgorithmLua {
  /** Defines `fn` (and `write` when it is not the prelude's `set_state`). */
  readonly source: string;
  /** Name of the step function. */
  readonly fn: string;
  /** Name of the function that writes the step's state. */
  readonly write: 'set_state' | 'log_write';
  /** The policy fields the step takes after `key`, `now` and `cost`, in order (`nodelay` as 1 or 0). */
  readonly params: readonly PolicyParam[];
}

type PolicyParam = 'limit' | 'windowMs' | 'burst' | 'nodelay' | 'delay';
const bucket: readonly PolicyParam[] = ['limit', 'windowMs', 'burst'];
const window: readonly PolicyParam[] = ['limit', 'windowMs'];

/** Typed by algorithm name: an algorithm added to `ALGORITHMS` without its Lua fails the type check. */
const LUA: Readonly<Record<AlgorithmName, AlgorithmLua>> = {
  gcra: { source: gcraLua, fn: 'gcra', write: 'set_state', params: bucket },
  'token-bucket': { source: tokenBucketLua, fn: 'token_bucket', write: 'set_state', params: bucket },
  'leaky-bucket': {
    source: leakyBucketLua,
    fn: 'leaky_bucket',
    write: 'set_state',
    params: ['limit', 'windowMs', 'burst', 'nodelay', 'delay'],
  },
  'fixed-window': { source: fixedWindowLua, fn: 'fixed_window', write: 'set_state', params: window },
  'sliding-window': { source: slidingWindowLua, fn: 'sliding_window', write: 'set_state', params: window },
  'sliding-log': { source: slidingLogLua, fn: 'sliding_log', write: 'log_write', params: window },
};

/** Most policy numbers any step takes (leaky bucket: limit, window, burst, nodelay, delay). */
export const MAX_PARAMS = 5;

/**
 * One rule's script: KEYS[1] the state key; ARGV the policy's numbers, then `cost` (left out when
 * 1), then `now` (left out for the server's TIME): each argument sent costs Redis a conversion,
 * so the usual request (cost 1, server time) sends only the policy. Replies
 * `{ code, remaining, resetMs, waitMs }` (see the prelude).
 */
function singleScript({ source, fn, write, params }: AlgorithmLua): string {
  const args = params.map((_, i) => `tonumber(ARGV[${i + 1}])`).join(', ');
  const n = params.length;
  const save =
    write === 'set_state'
      ? `redis.call('SET', KEYS[1], value, 'PX', ttl_ms)`
      : `${write}(KEYS[1], ttl_ms, value, now, cost)`;
  return `${preludeLua}${source}${nowLua(`ARGV[${n + 2}]`)}
local cost = tonumber(ARGV[${n + 1}]) or 1
local code, remaining, reset_ms, wait_ms, ttl_ms, value = ${fn}(KEYS[1], now, cost, ${args})
if value then ${save} end
return { code, remaining, reset_ms, wait_ms }
`;
}

/**
 * The complete Lua source of each algorithm's single-rule script (prelude + step + driver).
 * Typed by algorithm name, so an algorithm added to `ALGORITHMS` without its script fails the type check.
 */
export const LUA_SCRIPTS: Readonly<Record<AlgorithmName, string>> = Object.fromEntries(
  ALGORITHMS.map((algorithm) => [algorithm, singleScript(LUA[algorithm])]),
) as Record<AlgorithmName, string>;

/**
 * The script that decides several rules at once, all or nothing: every step function, then the
 * driver of `multi.lua.ts`. Algorithms are numbered by their place in `ALGORITHMS`, from 1.
 */
export const MULTI_SCRIPT: string = [
  preludeLua,
  setStateLua,
  ...ALGORITHMS.map((algorithm) => LUA[algorithm].source),
  nowLua('ARGV[1]'),
  `local STEPS = { ${ALGORITHMS.map((a) => LUA[a].fn).join(', ')} }`,
  `local WRITES = { ${ALGORITHMS.map((a) => LUA[a].write).join(', ')} }`,
  multiDriverLua,
].join('\n');

/** The policy's numbers as its script reads them (single-rule scripts: before `cost` and `now`). */
export function policyParams(policy: Policy): number[] {
  return LUA[policy.algorithm].params.map((name) => {
    const value = policy[name];
    return typeof value === 'boolean' ? (value ? 1 : 0) : value;
  });
}
