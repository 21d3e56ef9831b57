import type { Policy, Verdict } from '../../types';
import type { Outcome } from '../consume-to';
import type { Queued } from './batch-queue';
import { StoreKeyError } from '../../resilience/store-errors';
import { timeArg, unexpectedReply, verdictAt, verdictOf } from './redis-command';
import { lateAsTimeout } from './server-clock';
import type { ScriptCommand } from './redis-client';
import { kindNumberOf, MAX_PARAMS, policyParams } from './scripts';

/**
 * What one request asks of its keys; the batch script's `op` (see `scripts/batch.lua.ts`). From
 * `joint` on, ops with arguments of their own (see `scripts/batch-ops.lua.ts`): several limiters'
 * parts of one request, an exact give-back with receipts, and the permits of concurrency limits.
 */
export const Op = {
  consume: 1,
  giveBack: 2,
  reset: 3,
  joint: 4,
  giveBackTaken: 5,
  permitAcquire: 6,
  permitRelease: 7,
  permitRenew: 8,
} as const;
export type Op = (typeof Op)[keyof typeof Op];

/**
 * A request of an op with arguments of its own (from {@link Op.joint} on): what it sends, how it
 * goes alone, and how its answer is read from a batch's reply.
 */
export interface OwnCall {
  /**
   * Values it shares with the alike requests of its op in a row (a permit's `max` and
   * `leaseMs`): sent once for their run, ahead of each one's {@link OwnCall.args}. Absent: none.
   */
  readonly shared?: readonly string[];
  /** Its own arguments, sent after the run's values and the shared ones. */
  readonly args: readonly string[];
  /**
   * The request as its own script call (without batching, or when it finds its slot idle): its
   * raw reply. `until`: its deadline on the server's clock (see `ServerClock`), for the ops that take.
   */
  alone(until?: number): Promise<unknown>;
  /**
   * Its answer from {@link OwnCall.alone}'s reply, read where the store reacts to the reply (no
   * promise of its own); absent: the reply as it came.
   * @throws when the reply is not what the op answers
   */
  readAlone?(reply: unknown): unknown;
  /**
   * Its answer from the batch reply at `at`, and how many elements it took.
   * @throws when the reply there is not what the op answers
   */
  read(reply: readonly unknown[], at: number): readonly [value: unknown, width: number];
}

/**
 * One request on its way through the batch queue: what to run on which keys, and how to settle
 * its promise. `policies` holds one policy per key, in order.
 */
export class ScriptEntry implements Queued {
  constructor(
    readonly op: Op,
    readonly keys: readonly string[],
    readonly policies: readonly Policy[],
    readonly cost: number,
    readonly nowMs: number | undefined,
    /** A consume resolves its rules' verdicts (several rules) or its one verdict. */
    readonly rules: boolean,
    readonly group: number,
    readonly timeoutMs: number,
    readonly deadline: number,
    /** Told how the request ended: the caller's promise, or the caller itself (see `CONSUME_TO`). */
    readonly to: Outcome<unknown>,
    /** Set for the ops with arguments of their own (`keys` then are its keys, `policies` none). */
    readonly own: OwnCall | undefined,
    /**
     * The deadline on the server's clock (whole epoch ms, see `ServerClock`) past which its
     * script takes nothing and answers `SLUICE_LATE`; for consumes and joint decisions, when known.
     */
    readonly until: number | undefined,
  ) {}

  resolve(value: unknown): void {
    this.to.answered(value);
  }

  /** Fails the request; a script's `SLUICE_LATE` as the `StoreTimeoutError` its caller would have met. */
  fail(error: unknown): void {
    this.to.failed(lateAsTimeout(error, this.timeoutMs));
  }
}

/**
 * A policy's values in the batch script's policy table (`STRIDE` of scripts/batch.lua.ts: its
 * kind and its numbers), as text, built once per policy.
 */
const POLICY_TEXT = new WeakMap<Policy, readonly string[]>();

export function batchPolicyArgs(policy: Policy): readonly string[] {
  let text = POLICY_TEXT.get(policy);
  if (text === undefined) {
    const params = policyParams(policy);
    text = [String(kindNumberOf(policy))];
    for (let i = 0; i < MAX_PARAMS; i++) (text as string[]).push(String(params[i] ?? 0));
    POLICY_TEXT.set(policy, text);
  }
  return text;
}

/**
 * Sends a batch of requests of one slot as one call of the batch script, then (once `landed`
 * has freed its place) settles each from its part of the reply. A failed call fails every
 * request in it; a request whose own step failed in the script fails alone (its error stands in
 * its place in the reply; `SLUICE_LATE` past its run's deadline, the earliest of its requests',
 * see `ScriptEntry.until`). Alike requests in a row (the usual batch: one limiter's cost-1
 * requests on the server's time) are sent as one run, their keys apart, or once for a run whose
 * requests are all on the same keys (a hot item: its count is then sent negated). `again` may
 * take over a failed call's requests (it returns `true` when it did).
 */
export function runBatch(
  command: ScriptCommand,
  batch: readonly ScriptEntry[],
  landed: () => void,
  again?: (batch: readonly ScriptEntry[], error: unknown) => boolean,
): void {
  const keys: string[] = [];
  const runs: string[] = [];
  const refs = new Map<Policy, number>();
  const table: string[] = [];
  let previous: ScriptEntry | undefined;
  let count = 0;
  let countAt = 0;
  // Whether the run's requests are all on its first one's keys, sent once (known at its second).
  let same = false;
  // The first request of the current run of ops with arguments of their own, and its count.
  let ownFirst: ScriptEntry | undefined;
  let ownCount = 0;
  let ownCountAt = 0;
  // The current run's deadline: the earliest of its requests' (see `ScriptEntry.until`).
  let until: number | undefined;
  // A request joining the run: an earlier deadline is the run's, in its `now` (4 after its count).
  const joinDeadline = (entry: ScriptEntry, at: number): void => {
    if (entry.until === undefined || (until !== undefined && until <= entry.until)) return;
    until = entry.until;
    runs[at + 4] = timeArg(entry.nowMs, until);
  };
  for (const entry of batch) {
    const { own } = entry;
    if (own === undefined && previous !== undefined && alike(previous, entry)) {
      // The second request tells the run's kind; a later one on other keys ends a run on one.
      let joins = true;
      if (count === 1) same = sameKeys(previous, entry);
      else if (same) joins = sameKeys(previous, entry);
      if (joins) {
        if (!same) for (const key of entry.keys) keys.push(key);
        count++;
        runs[countAt] = String(same ? -count : count);
        joinDeadline(entry, countAt);
        continue;
      }
    }
    for (const key of entry.keys) keys.push(key);
    if (own !== undefined) {
      // Alike ones in a row (a hot key's acquires, their releases) share one run's six values
      // and their shared ones: each sends only its own arguments.
      previous = undefined;
      if (ownFirst !== undefined && ownAlike(ownFirst, entry)) {
        runs[ownCountAt] = String(++ownCount);
        joinDeadline(entry, ownCountAt);
      } else {
        ownFirst = entry;
        ownCount = 1;
        ownCountAt = runs.length;
        until = entry.until;
        const shared = own.shared ?? NONE;
        runs.push(
          '1',
          String(entry.op),
          String(entry.keys.length),
          String(own.args.length),
          timeArg(entry.nowMs, until),
          String(shared.length),
        );
        for (const value of shared) runs.push(value);
      }
      for (const arg of own.args) runs.push(arg);
      continue;
    }
    ownFirst = undefined;
    previous = entry;
    count = 1;
    same = false;
    countAt = runs.length;
    until = entry.until;
    runs.push(
      '1',
      String(entry.op),
      String(entry.keys.length),
      String(entry.cost),
      timeArg(entry.nowMs, until),
    );
    for (const policy of entry.policies) {
      let ref = refs.get(policy);
      if (ref === undefined) {
        refs.set(policy, (ref = refs.size + 1));
        table.push(...batchPolicyArgs(policy));
      }
      runs.push(String(ref));
    }
  }
  let reply: Promise<unknown>;
  try {
    reply = command(keys, [String(refs.size), ...table, ...runs]);
  } catch (error) {
    // A client that throws instead of rejecting (closed, a wrapper): the batch fails as a rejected
    // call would. Thrown from here (a reply's reaction or the queue's timer, where it sends the
    // next batch), it would be uncaught and the batch's requests never settled.
    reply = Promise.reject(error);
  }
  reply.then(
    (reply) => {
      landed();
      settle(reply, batch);
    },
    (error: unknown) => {
      landed();
      if (again?.(batch, error) === true) return;
      for (const entry of batch) entry.fail(error);
    },
  );
}

/** Whether two requests are on the same keys, in the same order. */
function sameKeys(a: ScriptEntry, b: ScriptEntry): boolean {
  const { keys } = a;
  if (keys.length !== b.keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== b.keys[i]) return false;
  return true;
}

const NONE: readonly string[] = [];

/**
 * Whether two requests of ops with arguments of their own are one run: the same op, number of
 * keys and of arguments, time and shared values (each sends its keys and its own arguments).
 */
function ownAlike(a: ScriptEntry, b: ScriptEntry): boolean {
  if (a.op !== b.op || a.keys.length !== b.keys.length || a.nowMs !== b.nowMs) return false;
  const [x, y] = [a.own as OwnCall, b.own as OwnCall];
  if (x.args.length !== y.args.length) return false;
  const [p, q] = [x.shared ?? NONE, y.shared ?? NONE];
  if (p === q) return true; // one limiter's requests: the same array
  if (p.length !== q.length) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== q[i]) return false;
  return true;
}

/** Whether two requests differ only in their keys: one run of the batch script's arguments. */
function alike(a: ScriptEntry, b: ScriptEntry): boolean {
  if (a.op !== b.op || a.cost !== b.cost || a.nowMs !== b.nowMs || a.policies.length !== b.policies.length)
    return false;
  for (let i = 0; i < a.policies.length; i++) if (a.policies[i] !== b.policies[i]) return false;
  return true;
}

/**
 * Settles every request of the batch from the reply, in order. A request whose part holds
 * numbers no step gives (`StoreKeyError`: the script read odd state at its key) fails alone, and
 * the next ones are read on from the end of its part.
 */
function settle(reply: unknown, batch: readonly ScriptEntry[]): void {
  let at = 0;
  let i = 0;
  try {
    if (!Array.isArray(reply)) throw unexpectedReply(reply);
    for (; i < batch.length; i++) {
      const entry = batch[i] as ScriptEntry;
      const value: unknown = reply[at];
      if (value instanceof Error) {
        entry.fail(value);
        at++;
      } else if (entry.own !== undefined) {
        const [answer, width] = entry.own.read(reply, at);
        entry.resolve(answer);
        at += width;
      } else if (entry.op === Op.consume) {
        // One key admitted without delay: `remaining, resetMs`; else four integers a key (see
        // scripts/batch.lua.ts).
        const single = entry.policies.length === 1;
        const width = single ? (typeof value === 'number' && value < 0 ? 4 : 2) : 4 * entry.policies.length;
        if (at + width > reply.length) throw unexpectedReply(reply);
        let answer: Verdict | Verdict[];
        try {
          answer = single ? oneVerdict(entry, reply, at, value) : manyVerdicts(entry, reply, at);
        } catch (error) {
          if (!(error instanceof StoreKeyError)) throw error;
          entry.fail(error);
          at += width;
          continue;
        }
        entry.resolve(answer);
        at += width;
      } else {
        if (typeof value !== 'number') throw unexpectedReply(reply);
        entry.resolve(undefined);
        at++;
      }
    }
  } catch (error) {
    // A reply of another shape (a proxy answering in Redis's place): nothing after can be read.
    for (; i < batch.length; i++) (batch[i] as ScriptEntry).fail(error);
  }
}

/** A one-key consume's answer from its part of the reply, at `at` (its first value `value`). */
function oneVerdict(
  entry: ScriptEntry,
  reply: readonly unknown[],
  at: number,
  value: unknown,
): Verdict | Verdict[] {
  const policy = entry.policies[0] as Policy;
  const verdict =
    typeof value === 'number' && value < 0
      ? verdictOf(reply, policy, -1 - value, reply[at + 1], reply[at + 2], reply[at + 3])
      : verdictOf(reply, policy, 0, value, reply[at + 1], 0);
  return entry.rules ? [verdict] : verdict;
}

/** A consume on several keys: four integers a key, from `at`. */
function manyVerdicts(entry: ScriptEntry, reply: readonly unknown[], at: number): Verdict[] {
  return entry.policies.map((policy, k) => verdictAt(reply, at + 4 * k, policy));
}
