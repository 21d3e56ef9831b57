import calculateSlot from 'cluster-key-slot';
import type { Policy, Receipt, Verdict } from '../../types';
import type { Outcome } from '../outcome';
import type { JointPart, JointVerdicts, RulesRequest, StoreRequest } from '../store';
import type { OwnCall } from './batch-call';
import { luaScript } from './client-adapters';
import type { ScriptClient } from './redis-client';
import { timeArg, verdictAt } from './redis-command';
import {
  GIVE_BACK_SCRIPT,
  JOINT_SCRIPT,
  MAX_PARAMS,
  policyParams,
  STATE_KINDS,
  stateKindOf,
} from './scripts';

/**
 * Several limiters' parts of one request in one script call, and exact give-backs, for
 * `RedisStore` (see `Store.consumeAll`, `Store.canJoin`, `Store.giveBackTaken`): each is a request
 * of the store's batch queue, sent alone as its own script's call, or with others as one op of
 * the batch script (`scripts/batch-ops.lua.ts`).
 */

const JOINT = luaScript('joint', JOINT_SCRIPT);
const GIVE_BACK_TAKEN = luaScript('give-back-taken', GIVE_BACK_SCRIPT);
const RECEIPT_FIELDS = 6;

/**
 * A part's keys, in rule order: the keys `consume` or `consumeRules` use for it; for a joint
 * decision, followed by its block record's key when it has a `block`.
 */
export type PartKeys = (part: RulesRequest) => string[];

/**
 * Whether the parts can be decided in one script call: no key twice (a step reads the state as
 * stored), and on Cluster every key in one slot (sluice's keys hash by their one `{…}` tag, the
 * escaped user key: the same tag, or tags that hash alike). Any other client is one node
 * (standalone, or the master Sentinel points to).
 */
export function canJoin(client: ScriptClient, keys: readonly string[]): boolean {
  if (new Set(keys).size !== keys.length) return false;
  if (!client.isCluster) return true;
  // The slot as the clients compute it: keys whose tags differ may still share one.
  const slot = calculateSlot(keys[0] ?? '');
  return keys.every((key) => calculateSlot(key) === slot);
}

/** A request of the joint or the give-back ops, ready for the store's queue: its keys, its time, its call. */
export interface JointCall {
  readonly keys: readonly string[];
  /** The time the call is sent with: `undefined` for the server's `TIME`. */
  readonly nowMs: number | undefined;
  readonly own: OwnCall;
}

/**
 * The joint decision of every part (see `joint.lua.ts`): one call of the joint script alone, or
 * one request of a batch; all or none.
 */
export function jointCall(client: ScriptClient, parts: readonly JointPart[], keysOf: PartKeys): JointCall {
  const keys: string[] = [];
  // The server's TIME unless every part brings its own time.
  const nowMs = parts.every((part) => part.nowMs !== undefined) ? parts[0]?.nowMs : undefined;
  const args: string[] = [String(parts.length)];
  for (const part of parts) {
    const own = keysOf(part);
    keys.push(...own);
    args.push(String(part.policies.length), String(part.cost), timeArg(part.nowMs), flagsOf(part));
    const { block } = part;
    if (block !== undefined)
      args.push(String(block.durationMs), String(block.backoff), String(block.maxDurationMs));
    for (const policy of part.policies) args.push(...kindAndParams(policy));
  }
  // Six values a rule key; a block's key has none of its own.
  const width = parts.reduce((n, part) => n + part.policies.length, 0) * RECEIPT_FIELDS;
  return {
    keys,
    nowMs,
    own: {
      // All of it the run's shared values: alike requests in a row (one route's limits, the usual
      // batch) send the parts' description once for the run, then only their keys. Each value
      // sent costs Redis about a thousand instructions, and this process its encoding.
      shared: args,
      args: NO_ARGS,
      alone: (until) => client.command(JOINT)(keys, [timeArg(nowMs, until), ...args]),
      readAlone: (reply) => jointVerdicts(reply, parts),
      read: (reply, at) => [jointVerdicts(reply.slice(at, at + width), parts), width],
    },
  };
}

/**
 * A decision of a limiter with `block` (one rule or several): the joint decision of one part, its
 * rules' keys then its block record's (see `block.lua.ts`), so the record is read and written in
 * the same script call as the states; `outcome` tells `to` the part's verdicts. The usual
 * request, without a block, keeps its own scripts.
 */
export function blockingCall(
  client: ScriptClient,
  { prefix, key, cost, nowMs, scope, timeoutMs, block }: Omit<StoreRequest, 'policy'>,
  policies: readonly Policy[],
  keysOf: PartKeys,
  to: Outcome<Verdict[]>,
): JointCall & { readonly outcome: Outcome<unknown> } {
  const part: JointPart = { prefix, key, policies, cost, nowMs, scope, timeoutMs, block };
  return {
    ...jointCall(client, [part], keysOf),
    outcome: {
      answered: (joint) => to.answered((joint as JointVerdicts).verdicts[0] as Verdict[]),
      failed: (error) => to.failed(error),
      startedAt: to.startedAt,
    },
  };
}

/** Gives back what a part took, with its receipts: one call of the give-back script, alone or in a batch. */
export function giveBackJointCall(
  client: ScriptClient,
  part: RulesRequest,
  receipts: readonly Receipt[],
  keysOf: PartKeys,
): JointCall {
  const keys = keysOf(part);
  const args = [String(part.cost)];
  part.policies.forEach((policy, i) => {
    const receipt = receipts[i] ?? { at: 0, member: 0 };
    args.push(...kindAndParams(policy), String(receipt.at), String(receipt.member));
  });
  return {
    keys,
    nowMs: part.nowMs,
    own: {
      args,
      alone: () => client.command(GIVE_BACK_TAKEN)(keys, [timeArg(part.nowMs), ...args]),
      readAlone: () => undefined,
      read: (reply, at) => {
        if (!isCount(reply[at])) throw unexpected('give-back', reply);
        return [undefined, 1];
      },
    },
  };
}

const NO_ARGS: readonly string[] = [];

/** A part's flags as the joint script reads them: 1 for a dry run, plus 2 for a probe, plus 4 for a block. */
function flagsOf(part: JointPart): string {
  return String(
    (part.dryRun === true ? 1 : 0) + (part.probe === true ? 2 : 0) + (part.block === undefined ? 0 : 4),
  );
}

/** {@link kindAndParams} by policy: a policy's arguments are the same at every call. */
const policyArgs = new WeakMap<Policy, readonly string[]>();

/** The number of a policy's kind of state (from 1) and its numbers, padded, as the scripts read them. */
function kindAndParams(policy: Policy): readonly string[] {
  let out = policyArgs.get(policy);
  if (out !== undefined) return out;
  const params = policyParams(policy);
  const made = [String(STATE_KINDS.indexOf(stateKindOf(policy)) + 1)];
  for (let i = 0; i < MAX_PARAMS; i++) made.push(String(params[i] ?? 0));
  policyArgs.set(policy, (out = made));
  return out;
}

function jointVerdicts(reply: unknown, parts: readonly JointPart[]): JointVerdicts {
  const expected = parts.reduce((n, part) => n + part.policies.length, 0) * RECEIPT_FIELDS;
  if (!Array.isArray(reply) || reply.length !== expected || !reply.every(isCount)) {
    throw unexpected('joint', reply);
  }
  const numbers = reply as number[];
  let at = 0;
  const verdicts: Verdict[][] = [];
  const receipts: Array<Receipt[] | undefined> = [];
  for (const part of parts) {
    const own: Verdict[] = [];
    const taken: Receipt[] = [];
    for (const policy of part.policies) {
      // The four numbers every script answers a verdict with, then the receipt: when and which entry.
      own.push(verdictAt(numbers, at, policy));
      taken.push({ at: numbers[at + 4] as number, member: numbers[at + 5] as number });
      at += RECEIPT_FIELDS;
    }
    verdicts.push(own);
    // Written only when every part that may refuse admitted and this one did too (a probe never).
    receipts.push(own.every((v) => v.allowed) && part.cost > 0 && part.probe !== true ? taken : undefined);
  }
  // A part reported as a peek was not written: its receipt is none.
  const written = verdicts.every((own, p) => own.every((v) => v.allowed) || parts[p]?.dryRun === true);
  return { verdicts, receipts: written ? receipts : receipts.map(() => undefined) };
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function unexpected(script: string, reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis ${script} script: ${JSON.stringify(reply)}`);
}
