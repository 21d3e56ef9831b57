import type { Policy } from '../../types';
import { Op } from './batch-call';
import type { ScriptClient, ScriptCommand } from './redis-client';
import { policyScriptArgs, rulesArgs, scriptArgs, toVerdict, toVerdicts } from './redis-command';
import { policyCommand, scriptCommands, type ScriptCommands } from './script-commands';
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
   * key. A consume resolves its verdicts (`rules`) or its one verdict.
   */
  run(
    op: Op,
    keys: readonly string[],
    policies: readonly Policy[],
    cost: number,
    nowMs: number | undefined,
    rules: boolean,
  ): Promise<unknown> {
    const { scripts } = this;
    if (op === Op.reset) return this.client.del(keys);
    if (op === Op.giveBack) return scripts.giveBack(keys, rulesArgs({ policies, cost, nowMs }));
    if (rules) {
      return scripts
        .rules(keys, rulesArgs({ policies, cost, nowMs }))
        .then((reply) => toVerdicts(reply, policies));
    }
    const policy = policies[0] as Policy;
    let own = this.#policyCommands.get(policy);
    if (own === undefined) this.#policyCommands.set(policy, (own = policyCommand(this.client, policy)));
    const reply =
      own === null
        ? scripts.single[stateKindOf(policy)](keys, scriptArgs({ policy, cost, nowMs }))
        : own(keys, policyScriptArgs({ cost, nowMs }));
    return reply.then((r) => toVerdict(r, policy));
  }

  /** {@link AloneCalls.run}; a client that throws instead of rejecting makes it a rejection. */
  runSafely(...args: Parameters<AloneCalls['run']>): Promise<unknown> {
    try {
      return this.run(...args);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
