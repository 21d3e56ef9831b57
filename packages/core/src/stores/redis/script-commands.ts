import type { Policy } from '../../types';
import type { ScriptClient, ScriptCommand } from './redis-client';
import { BATCH, GIVE_BACK, policyLuaScript, RULES_SCRIPT, SINGLE_SCRIPTS } from './redis-command';
import { policyParams, policyScript, STATE_KINDS, stateKindOf, type StateKind } from './scripts';

/** The scripts a store runs, as commands of its client. */
export interface ScriptCommands {
  /** Each kind's single-rule script, which takes the policy's numbers as arguments. */
  readonly single: Record<StateKind, ScriptCommand>;
  /** The several-rules script. */
  readonly rules: ScriptCommand;
  /** The give-back script. */
  readonly giveBack: ScriptCommand;
  /** The batch script. */
  readonly batch: ScriptCommand;
}

/** The store's scripts as commands of the client (defined once per client where it keeps them). */
export function scriptCommands(client: ScriptClient): ScriptCommands {
  const single = {} as Record<StateKind, ScriptCommand>;
  for (const kind of STATE_KINDS) single[kind] = client.command(SINGLE_SCRIPTS[kind]);
  return {
    single,
    rules: client.command(RULES_SCRIPT),
    giveBack: client.command(GIVE_BACK),
    batch: client.command(BATCH),
  };
}

/**
 * Most policies with a script of their own per client. Past it (rates computed per request, say),
 * policies run the shared script of their kind, which reads the numbers from its arguments.
 */
export const MAX_POLICY_SCRIPTS = 64;

/** Per client: the policy scripts made for it, by kind and numbers. */
const policyCommands = new WeakMap<ScriptClient, Map<string, ScriptCommand>>();

/** The policy's own script on the client (made on first use), or `null` past the cap. */
export function policyCommand(client: ScriptClient, policy: Policy): ScriptCommand | null {
  let defined = policyCommands.get(client);
  if (defined === undefined) policyCommands.set(client, (defined = new Map()));
  const signature = `${stateKindOf(policy)}:${policyParams(policy).join(',')}`;
  const known = defined.get(signature);
  if (known !== undefined) return known;
  if (defined.size >= MAX_POLICY_SCRIPTS) return null;
  const command = client.command(policyLuaScript(policyScript(policy)));
  defined.set(signature, command);
  return command;
}
