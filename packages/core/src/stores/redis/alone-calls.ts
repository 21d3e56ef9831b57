import type { Policy } from '../../types';
import type { Outcome } from '../consume-to';
import { Op, type OwnCall, type ScriptEntry } from './batch-call';
import type { BatchQueue, InFlight } from './batch-queue';
import type { ScriptClient, ScriptCommand } from './redis-client';
import { policyScriptArgs, rulesArgs, scriptArgs, toVerdict, toVerdicts } from './redis-command';
import { policyCommand, scriptCommands, type ScriptCommands } from './script-commands';
import { lateAsTimeout } from './server-clock';
import { stateKindOf } from './scripts';

/**
 * Each operation of a `RedisStore` as its own call, the way it goes without batching (or when
 * batching finds it alone): a single rule runs its policy's script (its numbers written in),
 * several rules the several-rules script, a give-back the give-back script, a reset `DEL`.
 */
export class AloneCalls {
  /** The scripts on the client (the batch script among them). */
  readonly scripts: ScriptCommands;
  /** Each policy's own script, or `null` when it runs its kind's shared one. */
  readonly #policyCommands = new WeakMap<Policy, ScriptCommand | null>();

  constructor(private readonly client: ScriptClient) {
    this.scripts = scriptCommands(client);
  }

  /**
   * Runs one operation on its keys (which share one hash tag); `policies` has one policy per
   * key. A consume resolves its verdicts (`rules`) or its one verdict; past `until` (a
   * consume's deadline on the server's clock, if any) it rejects with `SLUICE_LATE`, nothing
   * taken. Never throws: a client that throws instead of rejecting makes it a rejection (see
   * {@link AloneCalls.send}).
   */
  run(
    op: Op,
    keys: readonly string[],
    policies: readonly Policy[],
    cost: number,
    nowMs: number | undefined,
    rules: boolean,
    until?: number,
  ): Promise<unknown> {
    const reply = this.send(op, keys, policies, cost, nowMs, rules, until);
    return op === Op.consume ? reply.then((r) => readReply(op, policies, rules, r)) : reply;
  }

  /**
   * Sends {@link AloneCalls.run}'s call and gives its raw reply, for {@link readReply} to read:
   * a caller that reacts to the reply anyway reads it there, without a promise in between.
   * A client that throws instead of rejecting makes it a rejection.
   */
  send(
    op: Op,
    keys: readonly string[],
    policies: readonly Policy[],
    cost: number,
    nowMs: number | undefined,
    rules: boolean,
    until?: number,
  ): Promise<unknown> {
    try {
      const { scripts } = this;
      if (op === Op.reset) return this.client.del(keys);
      if (op === Op.giveBack) return scripts.giveBack(keys, rulesArgs({ policies, cost, nowMs }));
      if (rules) return scripts.rules(keys, rulesArgs({ policies, cost, nowMs, until }));
      const policy = policies[0] as Policy;
      let own = this.#policyCommands.get(policy);
      if (own === undefined) this.#policyCommands.set(policy, (own = policyCommand(this.client, policy)));
      return own === null
        ? scripts.single[stateKindOf(policy)](keys, scriptArgs({ policy, cost, nowMs, until }))
        : own(keys, policyScriptArgs({ cost, nowMs, until }));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/**
 * What {@link AloneCalls.run} resolves, from the reply {@link AloneCalls.send} gave: a consume's
 * verdicts (`rules`) or its one verdict; any other op's reply as it came. Throws on a reply of
 * an unexpected shape.
 */
export function readReply(op: Op, policies: readonly Policy[], rules: boolean, reply: unknown): unknown {
  if (op !== Op.consume) return reply;
  return rules ? toVerdicts(reply, policies) : toVerdict(reply, policies[0] as Policy);
}

/**
 * An op with arguments of its own as its own script call (with its deadline on the server's
 * clock, if any); a client that throws makes it a rejection.
 */
export function alone(own: OwnCall, until?: number): Promise<unknown> {
  try {
    return own.alone(until);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Tells `to` a lone call's answer, read from its reply here, not through a promise of its own
 * (one reaction per call), once its place in the queue is given back; a request that reached
 * Redis past its deadline fails with `StoreTimeoutError` (its `timeoutMs`). A function of its
 * own (its arguments positional, no object per call): its closures' context is made only for a
 * lone call, not for every request `RedisStore` queues.
 */
export function answerTo(
  to: Outcome<unknown>,
  reply: Promise<unknown>,
  op: Op,
  policies: readonly Policy[],
  rules: boolean,
  own: OwnCall | undefined,
  queue: BatchQueue<ScriptEntry> | undefined,
  group: number,
  place: InFlight | undefined,
  timeoutMs: number | undefined,
): void {
  reply.then(
    (value) => {
      if (place !== undefined) queue?.landed(group, place);
      let answer: unknown;
      try {
        answer = own === undefined ? readReply(op, policies, rules, value) : readOwn(own, value);
      } catch (error) {
        return to.failed(error);
      }
      to.answered(answer);
    },
    (error: unknown) => {
      if (place !== undefined) queue?.landed(group, place);
      to.failed(lateAsTimeout(error, timeoutMs));
    },
  );
}

/** An op's answer from its own script call's reply (see `OwnCall.readAlone`). */
export function readOwn(own: OwnCall, reply: unknown): unknown {
  return own.readAlone === undefined ? reply : own.readAlone(reply);
}
