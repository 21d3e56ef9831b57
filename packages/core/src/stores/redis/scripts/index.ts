import { capacityOf } from '../../../policy/resolve-policy';
import { ALGORITHMS, type Policy } from '../../../types';
import { packedReplyLua } from '../packed-reply';
import { permitsLua } from '../concurrency-scripts.lua';
import { genericOpsLua, permitOpsLua } from './batch-ops.lua';
import { batchDriverLua } from './batch.lua';
import { batchReadsLua, viewLua } from './batch-view.lua';
import { fixedWindowLua } from './fixed-window.lua';
import { gcraLua } from './gcra.lua';
import { giveBackDriverLua, giveBackLua, giveBackTakenLua } from './give-back.lua';
import { jointDriverLua, jointLua } from './joint.lua';
import { leakyBucketLua } from './leaky-bucket.lua';
import { consumeRunLua } from './consume-run.lua';
import { callIo, defineLua, inlineIo, inlineLua, type LuaBlock } from './lua-block';
import { multiDriverLua } from './multi.lua';
import { nowLua, setStateLua, stateAccessLua, withPrelude, writeStateLua } from './prelude.lua';
import { packedLogLua, PACKED_LOG_MAX } from './packed-log.lua';
import { slidingLogLua, slidingLogWriteLua } from './sliding-log.lua';
import { slidingWindowLua } from './sliding-window.lua';
import { tokenBucketLua } from './token-bucket.lua';
import { warmUpLua } from './warm-up.lua';

/** One algorithm's Lua: the step it computes, and how its state is written. */
interface AlgorithmLua {
  /** The step, inlined in a policy's own script and the function `fn` in the others. */
  readonly step: LuaBlock;
  /**
   * Lua the step needs defined before it: `write` when it is not `set_state`, helpers; `memo`
   * in the scripts that choose steps by kind, whose reads and writes are {@link callIo}'s.
   */
  readonly helpers?: (memo: boolean) => string;
  /** Name of the step function. */
  readonly fn: string;
  /** Name of the function that writes the step's state. */
  readonly write: 'set_state' | 'log_write';
  /** The policy fields the step takes after `key`, `now` and `cost`, in order (`nodelay` as 1 or 0). */
  readonly params: readonly PolicyParam[];
  /**
   * Fields the step takes after `params`, 0 for most policies: a single-rule script is sent them
   * (after `cost` and `now`) only when one is not 0, so the usual request pays nothing for them.
   */
  readonly optional: readonly PolicyParam[];
  /** Name of the function of `give-back.lua.ts` for kinds that delay admissions. */
  readonly back?: string;
  /** Name of the function of `give-back.lua.ts` for kinds that give back only with a receipt. */
  readonly backTaken?: string;
  /**
   * What an admission's receipt holds: the window's start (`start`), the log's member (`log`),
   * or the packed log's time, told by its reset less its window (`reset`).
   */
  readonly receipt?: 'start' | 'log' | 'reset';
}

type PolicyParam = 'limit' | 'windowMs' | 'burst' | 'nodelay' | 'delay' | 'maxWaitMs' | 'warmupMs';
const bucket: readonly PolicyParam[] = ['limit', 'windowMs', 'burst'];
const window: readonly PolicyParam[] = ['limit', 'windowMs'];
const queue: readonly PolicyParam[] = ['maxWaitMs'];

/**
 * The kinds of state a script keeps: one per algorithm, Guava's warm-up, which replaces the step
 * of a `gcra` or `token-bucket` policy with `warmup` (its state differs, so its key and script do
 * too), and the packed log, the sliding log of a limit up to `PACKED_LOG_MAX` (one string instead
 * of a sorted set: see `packed-log.lua.ts`).
 */
export const STATE_KINDS = [...ALGORITHMS, 'warm-up', 'packed-log'] as const;

/** An algorithm, `warm-up` or `packed-log`: names a script and, by {@link KEY_NAMES}, a state's key. */
export type StateKind = (typeof STATE_KINDS)[number];

/** The kind of state a policy's step keeps. */
export function stateKindOf(policy: Policy): StateKind {
  if (policy.warmupMs > 0) return 'warm-up';
  if (policy.algorithm === 'sliding-log' && policy.limit <= PACKED_LOG_MAX) return 'packed-log';
  return policy.algorithm;
}

/** Typed by kind: an algorithm added to `ALGORITHMS` without its Lua fails the type check. */
const LUA: Readonly<Record<StateKind, AlgorithmLua>> = {
  gcra: {
    step: gcraLua,
    fn: 'gcra',
    write: 'set_state',
    params: bucket,
    optional: queue,
    back: 'gcra_back',
  },
  'token-bucket': {
    step: tokenBucketLua,
    fn: 'token_bucket',
    write: 'set_state',
    params: bucket,
    optional: queue,
    back: 'token_bucket_back',
  },
  'leaky-bucket': {
    step: leakyBucketLua,
    fn: 'leaky_bucket',
    write: 'set_state',
    params: ['limit', 'windowMs', 'burst', 'nodelay', 'delay'],
    optional: [],
    back: 'leaky_bucket_back',
  },
  'fixed-window': {
    step: fixedWindowLua,
    fn: 'fixed_window',
    write: 'set_state',
    params: window,
    optional: [],
    backTaken: 'fixed_window_back',
    receipt: 'start',
  },
  'sliding-window': {
    step: slidingWindowLua,
    fn: 'sliding_window',
    write: 'set_state',
    params: window,
    optional: [],
    backTaken: 'sliding_window_back',
    receipt: 'start',
  },
  'sliding-log': {
    step: slidingLogLua,
    helpers: slidingLogWriteLua,
    fn: 'sliding_log',
    write: 'log_write',
    params: window,
    optional: [],
    backTaken: 'sliding_log_back',
    receipt: 'log',
  },
  'packed-log': {
    step: packedLogLua,
    fn: 'packed_log',
    write: 'set_state',
    params: window,
    optional: [],
    backTaken: 'packed_log_back',
    receipt: 'reset',
  },
  'warm-up': {
    step: warmUpLua,
    fn: 'warm_up',
    write: 'set_state',
    params: ['limit', 'windowMs', 'maxWaitMs', 'warmupMs'],
    optional: [],
    back: 'warm_up_back',
  },
};

/**
 * Each kind's name in its state's keys (see `redis-keys.ts`): the kind, and after `@` the version
 * of its state's format when it changed since the first. A new format takes new keys, so two
 * versions of sluice running side by side during a deploy never read each other's state (each
 * would read the other's as corrupt and delete it): the new one starts those keys afresh, and the
 * old keys expire on their own. Format 2 of the buckets stores the key's expiry with the state
 * (see `expiry.lua.ts`); format 2 of the sliding log is the packed log (`packed-log.lua.ts`), the
 * sorted set's format is unchanged.
 */
export const KEY_NAMES: Readonly<Record<StateKind, string>> = {
  gcra: 'gcra@2',
  'token-bucket': 'token-bucket@2',
  'leaky-bucket': 'leaky-bucket@2',
  'fixed-window': 'fixed-window',
  'sliding-window': 'sliding-window',
  'sliding-log': 'sliding-log',
  'warm-up': 'warm-up',
  'packed-log': 'sliding-log@2',
};

/**
 * The name of a key's block record (the limiter's `block` option) in its Redis key,
 * `<prefix>:{<key>}:block@1` (see `redis-keys.ts`): one per prefix and user key, whatever the
 * algorithm or scope, with the version of its format (two doubles: see `block.lua.ts`) from the
 * first, as the state formats' marks (`KEY_NAMES`).
 */
export const BLOCK_KEY_NAME = 'block@1';

/** Most policy numbers any step takes (leaky bucket: limit, window, burst, nodelay, delay). */
export const MAX_PARAMS = 5;

/**
 * One rule's script: KEYS[1] the state key; ARGV the policy's numbers, then `cost` (left out when
 * 1), then `now` (left out, or `''`, for the server's TIME), then the optional numbers (left out
 * when all are 0): each argument sent costs Redis a conversion, so the usual request (cost 1,
 * server time, no queue) sends only the policy, and with a deadline only `-<deadline>` after it,
 * in the cost's place (see the prelude's `nowLua`). Replies `{ code, remaining, resetMs, waitMs }`
 * (see the prelude); a policy's own script, one integer when they fit in one (see
 * `packed-reply.ts`). The state is written with `PSETEX`, which Redis parses with less work
 * than `SET … PX` (0.7 k instructions fewer), or a window's with `SET … KEEPTTL` when the
 * window's expiry is set already (see `KEEP_TTL`).
 */
function singleScript(
  { step, helpers, write, params, optional }: AlgorithmLua,
  baked?: { readonly params: readonly string[]; readonly capacity: number },
): string {
  // A policy's own script has its numbers written in: ARGV holds only `cost` and `now`.
  const n = baked === undefined ? params.length : 0;
  const args = baked?.params ?? [
    ...params.map((_, i) => `tonumber(ARGV[${i + 1}])`),
    ...optional.map((_, i) => `tonumber(ARGV[${n + 3 + i}]) or 0`),
  ];
  const save =
    write === 'set_state'
      ? writeStateLua('KEYS[1]', 'ttl_ms', 'value')
      : `${write}(KEYS[1], ttl_ms, value, now, cost)`;
  // The step inline (no closure made per call): its function's first parameters are named
  // `key, now, cost`, the rest are the policy's numbers.
  const decide = inlineLua(
    step,
    ['KEYS[1]', 'now', 'cost', ...args],
    ['code', 'remaining', 'reset_ms', 'wait_ms', 'ttl_ms', 'value'],
    inlineIo,
  );
  return withPrelude(`${helpers?.(false) ?? ''}
-- cost (absent: 1), or in its place the deadline of a request of cost 1 on the server's time,
-- as -<deadline> (see redis-command's scriptArgs): one argument fewer for the usual request.
-- Arithmetic reads it as tonumber would, without a call.
local cost, folded = ARGV[${n + 1}], nil
if cost then
  cost = cost + 0
  if cost < 0 then cost, folded = 1, -cost end
else
  cost = 1
end
${nowLua(`ARGV[${n + 2}]`, 'folded')}
${decide}
if value then ${save} end
${baked === undefined ? 'return { code, remaining, reset_ms, wait_ms }' : packedReplyLua(baked.capacity)}
`);
}

/**
 * The single-rule script of one policy, its numbers written into the source: ARGV is only
 * `cost` (left out when 1) and `now` (left out for the server's TIME). Redis receives and
 * converts no policy argument per call: 15 % fewer instructions of redis-server per decision
 * than the shared script (gcra, counted with callgrind: 62 k instead of 73 k per EVALSHA). The
 * numbers are integers below 2^53, so their text is exact.
 */
export function policyScript(policy: Policy): string {
  return singleScript(LUA[stateKindOf(policy)], {
    params: policyParams(policy).map(String),
    capacity: capacityOf(policy),
  });
}

/**
 * The complete Lua source of each kind's single-rule script (prelude + step + driver).
 * Typed by kind, so an algorithm added to `ALGORITHMS` without its script fails the type check.
 */
export const LUA_SCRIPTS: Readonly<Record<StateKind, string>> = Object.fromEntries(
  STATE_KINDS.map((kind) => [kind, singleScript(LUA[kind])]),
) as Record<StateKind, string>;

/** A kind's helpers and its step as the function `fn` (for the scripts that choose steps by kind). */
function stepFunctionLua(kind: StateKind): string {
  const { helpers, fn, step } = LUA[kind];
  return `${helpers?.(callIo.memo === true) ?? ''}\n${defineLua(fn, step, callIo)}\n`;
}

/** A Lua table of one entry per kind of state, by its number (see {@link kindNumberOf}): `local NAME = { … }`. */
function kindTable(name: string, entry: (kind: (typeof STATE_KINDS)[number]) => string): string {
  return `local ${name} = { ${STATE_KINDS.map(entry).join(', ')} }`;
}
const STEPS_TABLE = kindTable('STEPS', (kind) => LUA[kind].fn);
const WRITES_TABLE = kindTable('WRITES', (kind) => LUA[kind].write);
const RECEIPTS_TABLE = kindTable('RECEIPTS', (kind) =>
  LUA[kind].receipt === undefined ? 'false' : `'${LUA[kind].receipt}'`,
);
/** Every kind's give-back with a receipt: the exact give-back's table (`false` for none). */
const TAKEN_BACKS_TABLE = (name: string): string =>
  kindTable(name, (kind) => LUA[kind].back ?? LUA[kind].backTaken ?? 'false');

/**
 * A script deciding by kind at run time: every step function with `STEPS` and `WRITES`, then
 * `tail` (the several-rules and the joint scripts).
 */
function byKindScript(...tail: string[]): string {
  return withPrelude(
    [
      stateAccessLua,
      setStateLua,
      // Before the steps, which read `clocked` (see nowLua).
      nowLua('ARGV[1]'),
      ...STATE_KINDS.map(stepFunctionLua),
      STEPS_TABLE,
      WRITES_TABLE,
      ...tail,
    ].join('\n'),
  );
}

/**
 * The script that decides several rules at once, all or nothing: every step function, then the
 * driver of `multi.lua.ts`. Kinds are numbered by their place in `STATE_KINDS`, from 1.
 */
export const MULTI_SCRIPT: string = byKindScript(multiDriverLua);

/**
 * The script that gives back an unserved admission's units to every rule's key (see
 * `give-back.lua.ts`); its arguments are those of the several-rules script, each key's followed
 * by its admission's receipt when there is one.
 */
export const GIVE_BACK_SCRIPT: string = withPrelude(
  [
    stateAccessLua,
    nowLua('ARGV[1]'),
    ...STATE_KINDS.map(stepFunctionLua),
    giveBackLua,
    giveBackTakenLua,
    TAKEN_BACKS_TABLE('BACKS'),
    giveBackDriverLua,
  ].join('\n'),
);

/**
 * The script that decides several limiters' parts of one request at once, all or none (see
 * `joint.lua.ts`): every step function, then the driver.
 */
export const JOINT_SCRIPT: string = byKindScript(RECEIPTS_TABLE, jointLua, jointDriverLua);

/**
 * The script that decides many requests in one call, in order, each as its own call would (see
 * `batch.lua.ts`): the batch's reads and writes, the usual run (`consume_run`, every string
 * kind's step inline), then the driver, which makes the rest only when a batch needs it: the view
 * (`view`), every step as a function, every give-back, the joint decision and the exact
 * give-back (`generic`), the permits' functions (`permits`), each with their ops
 * (`batch-ops.lua.ts`).
 */
export const BATCH_SCRIPT: string = withPrelude(
  [
    batchReadsLua,
    batchDriverLua({
      consumeRun: consumeRunLua(
        STATE_KINDS.filter((kind) => LUA[kind].write === 'set_state').map((kind) => ({
          number: STATE_KINDS.indexOf(kind) + 1,
          step: LUA[kind].step,
        })),
        kindTable('RUNS', (kind) => String(LUA[kind].write === 'set_state')),
      ),
      generic: [
        ...STATE_KINDS.map(stepFunctionLua),
        giveBackLua,
        STEPS_TABLE,
        // A string's write is the batch's own set_state, chosen per pass (see batch-view.lua.ts).
        kindTable('WRITES', (kind) => (LUA[kind].write === 'set_state' ? 'false' : LUA[kind].write)),
        kindTable('BACKS', (kind) => LUA[kind].back ?? 'false'),
        RECEIPTS_TABLE,
        TAKEN_BACKS_TABLE('TAKEN_BACKS'),
        jointLua,
        giveBackTakenLua,
      ].join('\n'),
      view: viewLua,
      genericOps: genericOpsLua,
      permits: permitsLua,
      permitOps: permitOpsLua,
    }),
  ].join('\n'),
);

/** The number the multi, give-back and batch scripts know a policy's kind of state by (from 1). */
export function kindNumberOf(policy: Policy): number {
  return STATE_KINDS.indexOf(stateKindOf(policy)) + 1;
}

/** Whether a policy's kind of state has anything to give back (it may delay admissions). */
export function givesBack(policy: Policy): boolean {
  return LUA[stateKindOf(policy)].back !== undefined;
}

function numbersOf(policy: Policy, names: readonly PolicyParam[]): number[] {
  return names.map((name) => {
    const value = policy[name];
    return typeof value === 'boolean' ? (value ? 1 : 0) : value;
  });
}

/** The policy's numbers its step takes, in order: its `params`, then its optional ones. */
export function policyParams(policy: Policy): number[] {
  const { params, optional } = LUA[stateKindOf(policy)];
  return numbersOf(policy, [...params, ...optional]);
}

/**
 * The policy's numbers split as a single-rule script reads them: `params` always (before `cost`
 * and `now`), `optional` after them, or `undefined` when every optional number is 0.
 */
export function singleParams(policy: Policy): { params: number[]; optional: number[] | undefined } {
  const lua = LUA[stateKindOf(policy)];
  const optional = numbersOf(policy, lua.optional);
  return {
    params: numbersOf(policy, lua.params),
    optional: optional.some((n) => n !== 0) ? optional : undefined,
  };
}
