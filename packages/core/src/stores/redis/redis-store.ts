import { SluiceConfigError } from '../../policy/config-error';
import type { Policy, Receipt, Verdict } from '../../types';
import type { JointPart, JointVerdicts, RulesRequest, Store, StoreRequest } from '../store';
import type { RedisStoreClient, ScriptCommand } from './redis-client';
import {
  COMMAND_NAMES,
  GIVE_BACK_COMMAND_NAME,
  MULTI_COMMAND_NAME,
  policyCommandName,
  policyScriptArgs,
  rulesArgs,
  scriptArgs,
  toVerdict,
  toVerdicts,
} from './redis-command';
import { canJoin, consumeJoint, giveBackJoint } from './redis-joint';
import { redisKey } from './redis-keys';
import { RedisPermits } from './redis-permits';
import {
  GIVE_BACK_SCRIPT,
  givesBack,
  LUA_SCRIPTS,
  MULTI_SCRIPT,
  policyParams,
  policyScript,
  STATE_KINDS,
  stateKindOf,
  type StateKind,
} from './scripts';

export type { RedisStoreClient } from './redis-client';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * Your ioredis client: a `Redis` (standalone, or Sentinel) or a `Cluster`. The store registers
   * its scripts on it and never closes it. Commands go through the client's own settings
   * (`keyPrefix`, timeouts, offline queue), so a `keyPrefix` lands before every sluice key.
   */
  client: RedisStoreClient;
  /**
   * A namespace put before every key this store writes, ahead of the limiter's own `prefix`:
   * keys read `<prefix>:<limiter prefix>:{<key>}:<algorithm>`. Use it to share one Redis between
   * applications. Braces in it are escaped like key text, so it never chooses the Cluster slot.
   * @defaultValue none: keys read `<limiter prefix>:{<key>}:<algorithm>`, e.g. `sluice:{user:42}:gcra`
   */
  prefix?: string;
}

const OPTIONS = new Set(['client', 'prefix']);

/** Clients whose scripts are already defined: `defineCommand` runs once per client. */
const registered = new WeakSet<RedisStoreClient>();

/**
 * A store in Redis, standalone or Cluster, for limits shared by many app servers.
 *
 * Each decision is one round trip: one `EVALSHA` of the algorithm's Lua script, which reads the
 * state, decides exactly as the in-memory algorithm does and writes the new state with its TTL,
 * atomically (never a read-modify-write from Node). Inside, an admission costs three commands
 * (`TIME`, `GET`, `SET … PX`; two with a limiter `clock`) and a rejection two: the state is one
 * packed string. Each policy gets a script of its own on first use, its numbers written into
 * the source, so a request sends no argument but the key (15 % less work inside Redis; past
 * {@link MAX_POLICY_SCRIPTS} policies per client, its kind's shared script takes the numbers as
 * arguments). A limiter with several rules sends one `EVALSHA` for all of them
 * ({@link RedisStore.consumeRules}), and several limiters' parts of one request on one node do
 * too ({@link RedisStore.consumeAll}). ioredis (`defineCommand`) sends the script text itself with
 * `EVAL` on a connection's first use, and again only when the server answers `NOSCRIPT` (after a
 * restart, a failover or `SCRIPT FLUSH`); any other error rejects, unretried.
 *
 * - Time: the Redis server's `TIME`, so app servers whose clocks disagree share one exact limit;
 *   when the limiter has a `clock`, that time is sent instead.
 * - Keys: `<limiter prefix>:{<key>}:<algorithm>` (`warm-up` for a policy with `warmup`), one
 *   key per decision (`…:<algorithm>:<index>` per rule with several rules,
 *   `…:<algorithm>:<override rate>` for a per-key override). The user's key is escaped
 *   (`%` `{` `}` and lone surrogates as `%XX`, the empty key as `%`, and text over 256 characters
 *   replaced by its SHA-256), so whatever it holds it is the hash tag: it cannot pick another
 *   Cluster slot, collide with another key or leave the prefix.
 * - Memory: every key expires once its state no longer matters; an idle user costs nothing.
 * - Bad data at a key (another type, garbage, NaN; see the scripts' prelude) is no state, not an error.
 *
 * Requires Redis 4.0 or later (tested on 7.0: on 5.0 and later scripts replicate their effects by
 * default, 4.0 is asked to); Redis Cluster included.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { createLimiter, RedisStore } from '@sluice/core';
 *
 * const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * // On Redis Cluster: new Cluster([{ host: '10.0.0.1', port: 6379 }]) — nothing else changes.
 * const limiter = createLimiter({ rate: '10r/s', burst: 20, store: new RedisStore({ client }) });
 *
 * const decision = await limiter.consume('user:42');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 */
export class RedisStore implements Store {
  /** The namespace before every key, if any. */
  readonly prefix: string | undefined;
  readonly #client: RedisStoreClient;
  readonly #commands: Record<StateKind, ScriptCommand>;
  readonly #rules: ScriptCommand;
  readonly #giveBack: ScriptCommand;
  /** Each policy's own script, or `null` when it runs its kind's shared one. */
  readonly #policyCommands = new WeakMap<Policy, ScriptCommand | null>();
  #permits: RedisPermits | undefined;

  /**
   * @param options - `client` (required) and `prefix`
   * @throws {@link SluiceConfigError} when `client` is not an ioredis client or an option is invalid
   */
  constructor(options: RedisStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError('options', options, 'expected an object such as { client: new Redis() }');
    }
    for (const name of Object.keys(options)) {
      if (!OPTIONS.has(name)) {
        throw new SluiceConfigError(
          name,
          (options as unknown as Record<string, unknown>)[name],
          'unknown RedisStore option; accepted: client, prefix',
          'SLUICE_UNKNOWN_OPTION',
        );
      }
    }
    const { client, prefix } = options;
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof client.defineCommand !== 'function' ||
      typeof client.del !== 'function'
    ) {
      throw new SluiceConfigError(
        'client',
        client,
        'expected an ioredis client: new Redis(...) or new Cluster([...])',
      );
    }
    if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length === 0)) {
      throw new SluiceConfigError('prefix', prefix, 'must be a non-empty string (or left out)');
    }
    this.prefix = prefix;
    this.#client = client;
    const commands = scriptCommands(client);
    this.#commands = commands.single;
    this.#rules = commands.rules;
    this.#giveBack = commands.giveBack;
  }

  /** Runs the policy's script on the key: one round trip, atomic. */
  consume(request: StoreRequest): Promise<Verdict> {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    const { policy } = request;
    let own = this.#policyCommands.get(policy);
    if (own === undefined) this.#policyCommands.set(policy, (own = policyCommand(this.#client, policy)));
    const reply =
      own === null
        ? this.#commands[stateKindOf(policy)](this.keyOf(request), ...scriptArgs(request))
        : own(this.keyOf(request), ...policyScriptArgs(request));
    return reply.then((r) => toVerdict(r, policy));
  }

  /**
   * Runs every rule on its own key in one script, all or nothing: the states are written only
   * when every rule admits. One round trip; the keys share the user key's hash tag, so on
   * Cluster they live on one node (no `CROSSSLOT`).
   */
  consumeRules(request: RulesRequest): Promise<Verdict[]> {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    const keys = this.rulesKeysOf(request);
    return this.#rules(String(keys.length), ...keys, ...rulesArgs(request)).then((reply) =>
      toVerdicts(reply, request.policies),
    );
  }

  /**
   * Gives back `cost` units of an admission that will not be served (a queued request whose
   * client left): one script call, nothing for policies that never delay.
   */
  async giveBack(request: StoreRequest): Promise<void> {
    if (!givesBack(request.policy)) return;
    await this.#runGiveBack([this.keyOf(request)], { ...request, policies: [request.policy] });
  }

  /** {@link RedisStore.giveBack} for every rule of a limiter with several, in one script call. */
  async giveBackRules(request: RulesRequest): Promise<void> {
    if (!request.policies.some(givesBack)) return;
    await this.#runGiveBack(this.rulesKeysOf(request), request);
  }

  #runGiveBack(keys: readonly string[], request: RulesRequest): Promise<unknown> {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    return this.#giveBack(String(keys.length), ...keys, ...rulesArgs(request));
  }

  /** Several limiters' parts of one request in one script call, all or none (see `Store.consumeAll`). */
  consumeAll(parts: readonly JointPart[]): Promise<JointVerdicts> {
    const invalid = parts.map((part) => invalidTime(part.nowMs)).find((error) => error !== undefined);
    if (invalid !== undefined) return Promise.reject(invalid);
    return consumeJoint(this.#client, parts, this.#partKeys);
  }

  /** Whether {@link RedisStore.consumeAll} can take these parts: one node (or Cluster slot), no key twice. */
  canJoin(parts: readonly JointPart[]): boolean {
    return canJoin(this.#client, parts.flatMap(this.#partKeys));
  }

  /** Gives back exactly what a part took (see `Store.giveBackTaken`): one script call. */
  giveBackTaken(part: RulesRequest, receipts: readonly Receipt[]): Promise<void> {
    const invalid = invalidTime(part.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    return giveBackJoint(this.#client, part, receipts, this.#partKeys);
  }

  readonly #partKeys = (part: RulesRequest): string[] =>
    part.policies.length > 1
      ? this.rulesKeysOf(part)
      : [this.keyOf({ ...part, policy: part.policies[0] as Policy })];

  /** Deletes the key's state for the policy's algorithm: its next request starts fresh. */
  async reset(request: Omit<StoreRequest, 'cost'>): Promise<void> {
    await this.#client.del(this.keyOf(request));
  }

  /** Deletes every rule's state for the key (one `DEL`: the keys share one slot). */
  async resetRules(request: Omit<RulesRequest, 'cost'>): Promise<void> {
    await this.#client.del(...this.rulesKeysOf(request));
  }

  /**
   * The Redis key that holds a request's state,
   * `[<store prefix>:]<limiter prefix>:{<key>}:<algorithm>[:<scope>]` with every text part
   * escaped, for inspection (`GET`, `PTTL`) and tests. The value is the algorithm's state packed
   * in one string (`"<last> <debt>"` for `gcra`; see the scripts); the sliding log is a sorted set.
   * @param request - the limiter prefix, the user's key, the policy and the scope, if any
   */
  keyOf({ prefix, key, policy, scope }: Pick<StoreRequest, 'prefix' | 'key' | 'policy' | 'scope'>): string {
    return redisKey(this.prefix, prefix, key, stateKindOf(policy), scope);
  }

  /** The permits of concurrency limits (`createConcurrencyLimiter`) in this Redis: leases in `…:{<key>}:permits`. */
  permits(): RedisPermits {
    return (this.#permits ??= new RedisPermits(this.#client, this.prefix));
  }

  /** The keys of every rule of a {@link RulesRequest}, `…:{<key>}:<algorithm>[:<scope>]:<index>`, in order. */
  rulesKeysOf({
    prefix,
    key,
    policies,
    scope,
  }: Pick<RulesRequest, 'prefix' | 'key' | 'policies' | 'scope'>): string[] {
    return policies.map((policy, i) => redisKey(this.prefix, prefix, key, stateKindOf(policy), scope, i));
  }
}

/** A time that is not whole epoch ms would be computed on as a fraction: refused. */
function invalidTime(nowMs: number | undefined): SluiceConfigError | undefined {
  if (nowMs === undefined || (Number.isSafeInteger(nowMs) && nowMs >= 0)) return undefined;
  return new SluiceConfigError(
    'nowMs',
    nowMs,
    'must be epoch milliseconds: a whole number >= 0',
    'SLUICE_INVALID_ARGUMENT',
  );
}

/**
 * Defines the scripts on the client (once per client) and returns the methods that run them.
 * The several-rules script takes a variable number of keys, so its first argument is their count.
 */
function scriptCommands(client: RedisStoreClient): {
  single: Record<StateKind, ScriptCommand>;
  rules: ScriptCommand;
  giveBack: ScriptCommand;
} {
  if (!registered.has(client)) {
    for (const kind of STATE_KINDS) {
      client.defineCommand(COMMAND_NAMES[kind], { lua: LUA_SCRIPTS[kind], numberOfKeys: 1 });
    }
    client.defineCommand(MULTI_COMMAND_NAME, { lua: MULTI_SCRIPT });
    client.defineCommand(GIVE_BACK_COMMAND_NAME, { lua: GIVE_BACK_SCRIPT });
    registered.add(client);
  }
  const method = (name: string): ScriptCommand => methodOf(client, name);
  const single = {} as Record<StateKind, ScriptCommand>;
  for (const kind of STATE_KINDS) single[kind] = method(COMMAND_NAMES[kind]);
  return { single, rules: method(MULTI_COMMAND_NAME), giveBack: method(GIVE_BACK_COMMAND_NAME) };
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
function policyCommand(client: RedisStoreClient, policy: Policy): ScriptCommand | null {
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
