import calculateSlot from 'cluster-key-slot';
import type { Policy, Receipt, Verdict } from '../../types';
import type { JointPart, JointVerdicts, RulesRequest } from '../store';
import { luaScript } from './client-adapters';
import type { ScriptClient } from './redis-client';
import { verdictAt } from './redis-command';
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
 * `RedisStore` (see `Store.consumeAll`, `Store.canJoin`, `Store.giveBackTaken`). Kept apart from
 * the store's single-decision path: these calls go through their own commands.
 */

const JOINT = luaScript('joint', JOINT_SCRIPT);
const GIVE_BACK_TAKEN = luaScript('give-back-taken', GIVE_BACK_SCRIPT);
const RECEIPT_FIELDS = 6;

/** A part's keys, in rule order: the keys `consume` or `consumeRules` use for it. */
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

/** Runs the joint script (see `joint.lua.ts`) on every part: one round trip, all or none. */
export async function consumeJoint(
  client: ScriptClient,
  parts: readonly JointPart[],
  keysOf: PartKeys,
): Promise<JointVerdicts> {
  const keys: string[] = [];
  // '' (the server's TIME) unless every part brings its own time.
  const now = parts.every((part) => part.nowMs !== undefined) ? String(parts[0]?.nowMs ?? '') : '';
  const args: string[] = [now, String(parts.length)];
  for (const part of parts) {
    const own = keysOf(part);
    keys.push(...own);
    args.push(String(own.length), String(part.cost), timeArg(part.nowMs), part.dryRun === true ? '1' : '0');
    for (const policy of part.policies) args.push(...kindAndParams(policy));
  }
  const reply = await client.command(JOINT)(keys, args);
  return jointVerdicts(reply, parts);
}

/** Gives back what a part took, with its receipts: one call of the give-back script. */
export async function giveBackJoint(
  client: ScriptClient,
  part: RulesRequest,
  receipts: readonly Receipt[],
  keysOf: PartKeys,
): Promise<void> {
  const keys = keysOf(part);
  const args = [timeArg(part.nowMs), String(part.cost)];
  part.policies.forEach((policy, i) => {
    const receipt = receipts[i] ?? { at: 0, member: 0 };
    args.push(...kindAndParams(policy), String(receipt.at), String(receipt.member));
  });
  await client.command(GIVE_BACK_TAKEN)(keys, args);
}

function timeArg(nowMs: number | undefined): string {
  return nowMs === undefined ? '' : String(nowMs);
}

/** The number of a policy's kind of state (from 1) and its numbers, padded, as the scripts read them. */
function kindAndParams(policy: Policy): string[] {
  const params = policyParams(policy);
  const out = [String(STATE_KINDS.indexOf(stateKindOf(policy)) + 1)];
  for (let i = 0; i < MAX_PARAMS; i++) out.push(String(params[i] ?? 0));
  return out;
}

function jointVerdicts(reply: unknown, parts: readonly JointPart[]): JointVerdicts {
  const expected = parts.reduce((n, part) => n + part.policies.length, 0) * RECEIPT_FIELDS;
  if (!Array.isArray(reply) || reply.length !== expected || !reply.every(isCount)) {
    throw new Error(`sluice: unexpected reply from the Redis joint script: ${JSON.stringify(reply)}`);
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
    // Written only when every part that may refuse admitted and this one did too.
    receipts.push(own.every((v) => v.allowed) && part.cost > 0 ? taken : undefined);
  }
  // A part reported as a peek was not written: its receipt is none.
  const written = verdicts.every((own, p) => own.every((v) => v.allowed) || parts[p]?.dryRun === true);
  return { verdicts, receipts: written ? receipts : receipts.map(() => undefined) };
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}
