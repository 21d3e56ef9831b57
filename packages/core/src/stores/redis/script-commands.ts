import { SluiceConfigError } from '../../policy/config-error';
import type { Policy } from '../../types';
import type { RedisStoreClient, ScriptCommand } from './redis-client';
import {
  BATCH_COMMAND_NAME,
  COMMAND_NAMES,
  GIVE_BACK_COMMAND_NAME,
  MULTI_COMMAND_NAME,
  policyCommandName,
} from './redis-command';
import {
  BATCH_SCRIPT,
  GIVE_BACK_SCRIPT,
  LUA_SCRIPTS,
  MULTI_SCRIPT,
  policyParams,
  policyScript,
  STATE_KINDS,
  stateKindOf,
  type StateKind,
} from './scripts';

/** The scripts a store runs, as methods of its client. */
export interface ScriptCommands {
  /** Each kind's single-rule script, which takes the policy's numbers as arguments. */
  readonly single: Record<StateKind, ScriptCommand>;
  /** The several-rules script; its first argument is the number of keys. */
  readonly rules: ScriptCommand;
  /** The give-back script; its first argument is the number of keys. */
  readonly giveBack: ScriptCommand;
  /** The batch script; its first argument is the number of keys. */
  readonly batch: ScriptCommand;
}

/** Clients whose scripts are already defined: `defineCommand` runs once per client. */
const registered = new WeakSet<RedisStoreClient>();

/**
 * Defines the scripts on the client (once per client) and returns the methods that run them.
 * The scripts with a variable number of keys take their count as first argument.
 */
export function scriptCommands(client: RedisStoreClient): ScriptCommands {
  if (!registered.has(client)) {
    for (const kind of STATE_KINDS) {
      client.defineCommand(COMMAND_NAMES[kind], { lua: LUA_SCRIPTS[kind], numberOfKeys: 1 });
    }
    client.defineCommand(MULTI_COMMAND_NAME, { lua: MULTI_SCRIPT });
    client.defineCommand(GIVE_BACK_COMMAND_NAME, { lua: GIVE_BACK_SCRIPT });
    client.defineCommand(BATCH_COMMAND_NAME, { lua: BATCH_SCRIPT });
    registered.add(client);
  }
  const method = (name: string): ScriptCommand => methodOf(client, name);
  const single = {} as Record<StateKind, ScriptCommand>;
  for (const kind of STATE_KINDS) single[kind] = method(COMMAND_NAMES[kind]);
  return {
    single,
    rules: method(MULTI_COMMAND_NAME),
    giveBack: method(GIVE_BACK_COMMAND_NAME),
    batch: method(BATCH_COMMAND_NAME),
  };
}

/** The method defineCommand added for a script, bound to its client. */
function methodOf(client: RedisStoreClient, name: string): ScriptCommand {
  // defineCommand adds each script as a method named at run time, which TypeScript cannot see.
  const found = (client as unknown as Record<string, ScriptCommand | undefined>)[name];
  if (typeof found !== 'function') {
    throw new SluiceConfigError(
      'client',
      client,
      'defineCommand did not add the script as a method: expected an ioredis client',
    );
  }
  return found.bind(client);
}

/**
 * Most policies with a script of their own per client. Past it (rates computed per request, say),
 * policies run the shared script of their kind, which reads the numbers from its arguments.
 */
export const MAX_POLICY_SCRIPTS = 64;

/** Per client: the policy scripts defined on it, by kind and numbers. */
const policyCommands = new WeakMap<RedisStoreClient, Map<string, ScriptCommand>>();

/** The policy's own script on the client (defined on first use), or `null` past the cap. */
export function policyCommand(client: RedisStoreClient, policy: Policy): ScriptCommand | null {
  let defined = policyCommands.get(client);
  if (defined === undefined) policyCommands.set(client, (defined = new Map()));
  const signature = `${stateKindOf(policy)}:${policyParams(policy).join(',')}`;
  const known = defined.get(signature);
  if (known !== undefined) return known;
  if (defined.size >= MAX_POLICY_SCRIPTS) return null;
  const lua = policyScript(policy);
  const name = policyCommandName(lua);
  client.defineCommand(name, { lua, numberOfKeys: 1 });
  const command = methodOf(client, name);
  defined.set(signature, command);
  return command;
}
