import { runStep, type Step } from '../../algorithms';
import { blockedVerdict, nextBlock, refusalOfBlock, startsBlock } from '../../algorithms/block';
import { capacityOf } from '../../policy/resolve-policy';
import { giveBackOf, giveBackTakenOf, receiptOf } from '../../algorithms/give-back';
import type { Policy, Receipt, Verdict } from '../../types';
import type { JointPart, PreparedJoint, RulesRequest } from '../store';
import type { SlotTable } from './slot-table';
import { heldKey } from '../key-digest';
import { codecOf } from './state-columns';
import { readBlock, writeBlock } from './blocks';

/** The index (key → slot) of rule `rule` of a part, as the memory store keeps it. */
export type PartIndex = (part: RulesRequest, rule: number) => Map<string, number>;

/** The index of a part's block record, as the memory store keeps it. */
export type BlockIndex = (part: RulesRequest) => Map<string, number>;

interface RuleStep {
  readonly policy: Policy;
  readonly index: Map<string, number>;
  /** The state as stored, for the verdict of a part that is not written. */
  readonly stored: unknown;
  readonly step: Step<unknown>;
}

interface PartSteps {
  readonly part: JointPart;
  /** The part's key as the table holds it. */
  readonly key: string;
  readonly now: number;
  readonly rules: readonly RuleStep[];
  readonly admitted: boolean;
}

/**
 * A joint decision on the memory store's slot table, computed without writing (see
 * `Store.prepareAllSync`). Two parts on the same state (one limiter twice on a route with the
 * same key) are chained: the later one steps from the state the earlier one would write, so
 * together they take what two requests would.
 *
 * A part with `block` is refused whole while its key is blocked (its rules not stepped, so
 * nothing is taken from the other parts either: the request is refused); a part refused as
 * `'limited'` blocks its key at once, whatever the other parts say (a refusal is a fact of the
 * request, not a write that waits for the others), unless it is a probe.
 */
export function prepareJoint(
  table: SlotTable,
  parts: readonly JointPart[],
  indexOf: PartIndex,
  blockIndexOf: BlockIndex,
): PreparedJoint {
  const pending = new Map<Map<string, number>, Map<string, unknown>>();
  const rows: PartSteps[] = parts.map((part) => {
    const now = part.nowMs ?? Date.now();
    // Held as the store holds keys: a long key by its digest (see heldKey).
    const key = heldKey(part.key);
    const { block } = part;
    const blockIndex = block === undefined ? undefined : blockIndexOf(part);
    const live =
      blockIndex === undefined
        ? undefined
        : readBlock(table, blockIndex, key, now, block as NonNullable<typeof block>);
    if (live !== undefined && now < live.until) {
      const blocked = part.policies.map((policy, i): RuleStep => ({
        policy,
        index: indexOf(part, i),
        stored: undefined,
        step: { verdict: blockedVerdict(capacityOf(policy), live, now), state: undefined, ttlMs: 0 },
      }));
      return { part, key, now, rules: blocked, admitted: false };
    }
    let rules = part.policies.map((policy, i): RuleStep => {
      const index = indexOf(part, i);
      const slot = table.find(index, key, now);
      const stored = slot === undefined ? undefined : codecOf(policy).decode(table.columns, slot);
      const chained = pending.get(index);
      const state = chained?.has(key) === true ? chained.get(key) : stored;
      return { policy, index, stored, step: runStep(state, policy, now, part.cost) };
    });
    const admitted = rules.every(({ step }) => step.verdict.allowed);
    if (
      blockIndex !== undefined &&
      part.probe !== true &&
      rules.some(({ step }) => startsBlock(step.verdict, part.cost))
    ) {
      const next = nextBlock(live, block as NonNullable<typeof block>, now);
      writeBlock(table, blockIndex, key, now, next, block as NonNullable<typeof block>);
      rules = rules.map((rule) => ({
        ...rule,
        step: { ...rule.step, verdict: refusalOfBlock(rule.step.verdict, next, now) },
      }));
    }
    if (admitted) {
      for (const { index, step } of rules) {
        if (step.state === undefined) continue;
        let states = pending.get(index);
        if (states === undefined) pending.set(index, (states = new Map()));
        states.set(key, step.state);
      }
    }
    return { part, key, now, rules, admitted };
  });
  return {
    verdicts: rows.map(({ rules }) => rules.map(({ step }) => step.verdict)),
    commit(write) {
      return rows.map(({ key, now, rules, admitted }, p) => {
        if (write[p] !== true || !admitted) return undefined;
        return rules.map(({ policy, index, step }) => {
          if (step.state !== undefined) {
            const slot = table.claim(index, key, now, now + step.ttlMs);
            codecOf(policy).encode(step.state, table.columns, slot);
          }
          return receiptOf(policy, step);
        });
      });
    },
    unchanged(p) {
      const { part, now, rules } = rows[p] as PartSteps;
      return rules.map(({ policy, stored, step }): Verdict =>
        step.verdict.allowed && part.cost > 0 ? runStep(stored, policy, now, 0).verdict : step.verdict,
      );
    },
  };
}

/** Gives back what a part's admission took, rule by rule, with its receipts (see `Store.giveBackTaken`). */
export function giveBackTaken(
  table: SlotTable,
  part: RulesRequest,
  receipts: readonly Receipt[],
  indexOf: PartIndex,
): void {
  const now = part.nowMs ?? Date.now();
  const key = heldKey(part.key);
  part.policies.forEach((policy, i) => {
    const index = indexOf(part, i);
    const slot = table.find(index, key, now);
    if (slot === undefined) return;
    const codec = codecOf(policy);
    const back = giveBackTakenOf(policy);
    const step = back(codec.decode(table.columns, slot), policy, now, part.cost, receipts[i]);
    // Back to its initial state: a bucket's slot is kept, expired (as absent to every read), for
    // the key's next request to reuse (a request whose units all come back, as `countWhen` gives
    // them, would otherwise free and claim a slot each time); the table reclaims it as any
    // expired slot. The sliding log's entries go with its slot.
    if (step === 'delete' && giveBackOf(policy) !== undefined) table.expire(slot);
    else if (step === 'delete') table.release(index, key);
    else if (step !== undefined)
      codec.encode(step.state, table.columns, table.claim(index, key, now, now + step.ttlMs));
  });
}
