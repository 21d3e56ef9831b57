import { SluiceConfigError } from '../../policy/config-error';
import { capacityOf } from '../../policy/resolve-policy';
import { StoreKeyError } from '../../resilience/store-errors';
import type { RulesRequest, StoreRequest } from '../store';
import { luaScript } from './client-adapters';
import { unpackReply } from './packed-reply';
import type { LuaScript } from './redis-client';
import type { Policy, RejectReason, Verdict } from '../../types';
import {
  BATCH_SCRIPT,
  GIVE_BACK_SCRIPT,
  LUA_SCRIPTS,
  MAX_PARAMS,
  MULTI_SCRIPT,
  policyParams,
  singleParams,
  STATE_KINDS,
  stateKindOf,
  type StateKind,
} from './scripts';

/** Each single-rule script, of one key, which takes the policy's numbers as arguments. */
export const SINGLE_SCRIPTS: Readonly<Record<StateKind, LuaScript>> = Object.fromEntries(
  STATE_KINDS.map((kind) => [kind, luaScript(kind, LUA_SCRIPTS[kind], 1)]),
) as Record<StateKind, LuaScript>;

/** The several-rules script; the number of keys goes first. */
export const RULES_SCRIPT = luaScript('rules', MULTI_SCRIPT);

/** The give-back script (several keys). */
export const GIVE_BACK = luaScript('give-back', GIVE_BACK_SCRIPT);

/** The batch script (many requests in one call). */
export const BATCH = luaScript('batch', BATCH_SCRIPT);

/** The name each single-rule script is defined under with ioredis `defineCommand`. */
export const COMMAND_NAMES: Readonly<Record<StateKind, string>> = Object.fromEntries(
  STATE_KINDS.map((kind) => [kind, SINGLE_SCRIPTS[kind].name]),
) as Record<StateKind, string>;

/** The name the several-rules script is defined under. */
export const MULTI_COMMAND_NAME = RULES_SCRIPT.name;

/** A policy's own script (see `policyScript`): one key, its numbers written in. */
export function policyLuaScript(source: string): LuaScript {
  return luaScript('policy', source, 1);
}

/** The name a policy's own script is defined under. */
export function policyCommandName(source: string): string {
  return policyLuaScript(source).name;
}

const NO_ARGS: readonly string[] = [];

/**
 * A request's deadline on the Redis server's clock (whole epoch ms, see `ServerClock`): past it
 * the script decides nothing and answers `SLUICE_LATE`. `undefined`: none.
 */
export interface Until {
  readonly until?: number | undefined;
}

/**
 * A policy's own script's arguments: `cost` unless it is 1, then `now` unless the server's `TIME`
 * is to be used and there is no deadline. The usual request without a deadline sends none; with
 * one (cost 1, the server's time), only `-<deadline>`, in the cost's place: each argument costs
 * Redis about a thousand instructions (callgrind, a lone gcra decision: 48.2 k with the cost and
 * the deadline apart, 46.3 k folded, 43.5 k with no deadline).
 */
export function policyScriptArgs({
  cost,
  nowMs,
  until,
}: Pick<StoreRequest, 'cost' | 'nowMs'> & Until): readonly string[] {
  if (until !== undefined && nowMs === undefined && cost === 1) return [`-${until}`];
  if (nowMs !== undefined || until !== undefined) return [String(cost), timeArg(nowMs, until)];
  return cost === 1 ? NO_ARGS : [String(cost)];
}

/** The name the give-back script is defined under. */
export const GIVE_BACK_COMMAND_NAME = GIVE_BACK.name;

/** The name the batch script is defined under. */
export const BATCH_COMMAND_NAME = BATCH.name;

/**
 * The script's `now`: `''` makes it read the server's `TIME`; with a deadline (see the prelude's
 * `nowLua`), `-<until>` on the server's time, or `<now>@<until>`.
 */
export function timeArg(nowMs: number | undefined, until?: number): string {
  if (until === undefined) return nowMs === undefined ? '' : String(nowMs);
  return nowMs === undefined ? `-${until}` : `${nowMs}@${until}`;
}

/** A policy's numbers as text, as a single-rule script reads them. */
interface ParamsText {
  readonly params: readonly string[];
  /** `undefined` when every optional number is 0 (no queue): then none is sent. */
  readonly optional: readonly string[] | undefined;
}

/** Each policy's numbers as text, built once: policies live as long as their limiter. */
const PARAMS = new WeakMap<Policy, ParamsText>();

function paramsOf(policy: Policy): ParamsText {
  let text = PARAMS.get(policy);
  if (text === undefined) {
    const { params, optional } = singleParams(policy);
    text = { params: params.map(String), optional: optional?.map(String) };
    PARAMS.set(policy, text);
  }
  return text;
}

/**
 * The single-rule script's arguments (ARGV) for one request: the policy's numbers its step
 * reads (see `scripts/index.ts`), then `cost` unless it is 1, then `now` unless the server's
 * `TIME` is to be used without a deadline, then the optional numbers (a queue's `maxWaitMs`)
 * unless all are 0. The usual request sends the policy alone, or with a deadline the policy and
 * `-<deadline>` in the cost's place (see {@link policyScriptArgs}): every argument costs Redis.
 */
export function scriptArgs({
  policy,
  cost,
  nowMs,
  until,
}: Pick<StoreRequest, 'policy' | 'cost' | 'nowMs'> & Until): readonly string[] {
  const { params, optional } = paramsOf(policy);
  if (optional !== undefined) return [...params, String(cost), timeArg(nowMs, until), ...optional];
  if (until !== undefined && nowMs === undefined && cost === 1) return [...params, `-${until}`];
  if (nowMs !== undefined || until !== undefined) return [...params, String(cost), timeArg(nowMs, until)];
  return cost === 1 ? params : [...params, String(cost)];
}

/**
 * The several-rules script's arguments: `now`, `cost`, then per rule the number of its kind of
 * state (from 1, in `STATE_KINDS` order) and its numbers padded to a fixed stride.
 */
export function rulesArgs({
  policies,
  cost,
  nowMs,
  until,
}: Pick<RulesRequest, 'policies' | 'cost' | 'nowMs'> & Until): string[] {
  const args = [timeArg(nowMs, until), String(cost)];
  for (const policy of policies) {
    const params = policyParams(policy);
    args.push(String(STATE_KINDS.indexOf(stateKindOf(policy)) + 1));
    for (let i = 0; i < MAX_PARAMS; i++) args.push(String(params[i] ?? 0));
  }
  return args;
}

const REASONS: readonly (RejectReason | undefined)[] = [
  undefined,
  'limited',
  'cost-exceeds-capacity',
  'blocked',
];

/** The error of a reply that is not what the script sends (a proxy or module answering in its place). */
export function unexpectedReply(reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis rate-limit script: ${JSON.stringify(reply)}`);
}

/**
 * Reads four integers of a script's reply, from `at`: `code` (0 admitted, 1 limited, 2 cost
 * exceeds capacity, 3 blocked: only the joint decision's parts with a block), `remaining`, `resetMs`, and `waitMs` (the delay of an admission, the retry
 * time of a rejection). `limit` is the policy's capacity, which the script need not send.
 */
export function verdictAt(reply: readonly unknown[], at: number, policy: Policy): Verdict {
  return verdictOf(reply, policy, reply[at], reply[at + 1], reply[at + 2], reply[at + 3]);
}

/**
 * The verdict of `code`, `remaining`, `resetMs` and `waitMs` (see {@link verdictAt}), read from
 * `reply`.
 * @throws Error naming the whole reply when one of them is not what the script sends
 */
export function verdictOf(
  reply: unknown,
  policy: Policy,
  code: unknown,
  remaining: unknown,
  resetMs: unknown,
  waitMs: unknown,
): Verdict {
  if (
    (code !== 0 && code !== 1 && code !== 2 && code !== 3) ||
    !isCount(remaining) ||
    !isCount(resetMs) ||
    !isCount(waitMs)
  ) {
    // Numbers, but none a step gives: the script, reading that key's state, went astray; that
    // request's error alone. Anything else is not the script's reply at all.
    const numbers = [code, remaining, resetMs, waitMs].every((n) => typeof n === 'number');
    if (numbers)
      throw new StoreKeyError(
        `sluice: the Redis rate-limit script answered numbers no step gives: ${JSON.stringify([code, remaining, resetMs, waitMs])}`,
      );
    throw unexpectedReply(reply);
  }
  const limit = capacityOf(policy);
  if (code === 0) return { allowed: true, limit, remaining, resetMs, retryAfterMs: 0, delayMs: waitMs };
  return {
    allowed: false,
    limit,
    remaining,
    resetMs,
    retryAfterMs: waitMs,
    delayMs: 0,
    reason: REASONS[code] as RejectReason,
  };
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/**
 * Reads a single-rule script's reply into a {@link Verdict}: the table of four, or a policy's
 * own script's one integer (see `packed-reply.ts`).
 * @throws Error when the reply has another shape (a proxy or module answering in its place)
 */
export function toVerdict(reply: unknown, policy: Policy): Verdict {
  if (typeof reply === 'number' && Number.isSafeInteger(reply)) {
    return verdictAt(unpackReply(reply, capacityOf(policy)), 0, policy);
  }
  if (!Array.isArray(reply) || reply.length !== 4) throw unexpectedReply(reply);
  return verdictAt(reply, 0, policy);
}

/**
 * Reads the several-rules script's reply: one {@link Verdict} per policy, in order.
 * @throws Error when the reply has another shape
 */
export function toVerdicts(reply: unknown, policies: readonly Policy[]): Verdict[] {
  if (!Array.isArray(reply) || reply.length !== 4 * policies.length) throw unexpectedReply(reply);
  return policies.map((policy, i) => verdictAt(reply, 4 * i, policy));
}

/** A time that is not whole epoch ms would be computed on as a fraction: refused. */
export function invalidTime(nowMs: number | undefined): SluiceConfigError | undefined {
  if (nowMs === undefined || (Number.isSafeInteger(nowMs) && nowMs >= 0)) return undefined;
  return new SluiceConfigError(
    'nowMs',
    nowMs,
    'must be epoch milliseconds: a whole number >= 0',
    'SLUICE_INVALID_ARGUMENT',
  );
}
