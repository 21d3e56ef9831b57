import calculateSlot from 'cluster-key-slot';
import type { Policy, Receipt, Verdict } from '../../types';
import type { JointPart, JointVerdicts, RulesRequest, Store, StoreRequest } from '../store';
import { Op, type OwnCall, type ScriptEntry } from './batch-call';
import { BatchQueue } from './batch-queue';
import { alone, AloneCalls, answerTo } from './alone-calls';
import { invalidTime } from './redis-command';
import { CONSUME_TO, type Outcome } from '../consume-to';
import type { ScriptClient } from './redis-client';
import { blockingCall, canJoin, giveBackJointCall, jointCall, type JointCall } from './redis-joint';
import { nodeReader, StateKeys } from './redis-keys';
import { RedisPermits } from './redis-permits';
import { QueuedCalls, queuedEntry } from './queued-calls';
import { givesBack, stateKindOf } from './scripts';
import { resolveStoreOptions, type RedisStoreOptions } from './redis-store-options';
import { ServerClock } from './server-clock';

export { MAX_POLICY_SCRIPTS } from './script-commands';
export type { RedisStoreClient } from './redis-client';
export type { RedisStoreOptions } from './redis-store-options';

/**
 * A store in Redis, standalone or Cluster, for limits shared by many app servers.
 *
 * At most one round trip per decision, and one for many under load (see `batch`: concurrent
 * decisions for one Cluster slot share one script call, decided in arrival order). A decision sent
 * alone is one `EVALSHA` of the algorithm's Lua script, which reads the state, decides exactly as
 * the in-memory algorithm does and writes the new state with its TTL, atomically (never a
 * read-modify-write from Node). Inside, an admission costs three commands (`TIME`, `GET`, mostly
 * `SET … KEEPTTL`; two with a limiter `clock`) and a rejection two: the state is one packed string.
 * Each policy gets a script of its own on first use, its numbers written in, so a request sends no
 * argument but the key (15 % less work inside Redis; past {@link MAX_POLICY_SCRIPTS} policies per
 * client, its kind's shared script takes the numbers as arguments). A limiter with several rules
 * sends one `EVALSHA` for all of them ({@link RedisStore.consumeRules}), and several limiters'
 * parts of one request on one node do too ({@link RedisStore.consumeAll}); batched, each of these
 * is one request among many in a call, and so are exact give-backs and the permits of concurrency
 * limits ({@link RedisStore.permits}): an admitted request costs at most one script call to acquire
 * and one to release. Whatever the client (ioredis, iovalkey, node-redis), a script call is
 * `EVALSHA`, and only when the server answers `NOSCRIPT` (after a restart, a failover or `SCRIPT
 * FLUSH`) `EVAL` with the script's text, once; any other error rejects, unretried.
 *
 * - Time: the Redis server's `TIME`, so app servers whose clocks disagree share one exact limit;
 *   when the limiter has a `clock`, that time is sent instead.
 * - Keys: `<limiter prefix>:{<key>}:<algorithm>[@<format>]` (`warm-up` for a policy with
 *   `warmup`; `@<format>`: a changed state format, see `KEY_NAMES`), one key per decision
 *   (`…:<index>` per rule with several rules, `…:<override rate>` for a per-key override). The
 *   user's key is escaped (`%` `{` `}` and lone surrogates as `%XX`, the empty key as `%`, and text
 *   over 256 characters replaced by its SHA-256), so whatever it holds it is the hash tag: it
 *   cannot pick another Cluster slot, collide with another key or leave the prefix.
 * - Memory: every key expires once its state no longer matters; an idle user costs nothing.
 * - Bad data at a key (another type, garbage, NaN; see the scripts' prelude) is no state, not an error.
 *
 * Requires Redis 4.0 or later (tested on 7.0: on 5.0 and later scripts replicate their effects by
 * default, 4.0 is asked to); Redis Cluster included.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
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
  /** Each operation as its own call. */
  readonly #calls: AloneCalls;
  /** `undefined` with `batch: false`. */
  readonly #queue: BatchQueue<ScriptEntry> | undefined;
  /** Batches are made per hash slot on a Cluster; a standalone Redis is one group. */
  readonly #cluster: boolean;
  /** For the joint calls of several limits (`consumeAll`, `giveBackTaken`) and the permits. */
  readonly #client: ScriptClient;
  /** Maps requests' deadlines onto the server's clock (see {@link ServerClock}). */
  readonly #clock: ServerClock;
  #permits: RedisPermits | undefined;
  /** The last policy a consume asked for, and itself as the one-element list the queue keeps. */
  #policy: Policy | undefined;
  #policies: readonly Policy[] = [];
  /** Its state keys, the last one kept (see {@link RedisStore.keyOf}). */
  readonly #keys: StateKeys;
  /**
   * On Cluster, the master (`host:port`) holding a user key's slot as the client last learnt it
   * (a limiter keeps one circuit breaker per master: one master gone fails only its keys);
   * `undefined` on a single node.
   */
  readonly nodeOf: ((key: string) => string | undefined) | undefined;

  /**
   * @param options - `client` (required), `prefix` and `batch`
   * @throws {@link SluiceConfigError} when `client` is not an ioredis, iovalkey or node-redis client, or an option is invalid
   */
  constructor(options: RedisStoreOptions) {
    const { client, prefix, maxSize } = resolveStoreOptions(options);
    this.prefix = prefix;
    this.#keys = new StateKeys(prefix);
    this.#cluster = client.isCluster;
    this.#client = client;
    this.#calls = new AloneCalls(client);
    this.#clock = new ServerClock(client);
    this.nodeOf = client.isCluster ? nodeReader(client) : undefined;
    const queued = new QueuedCalls(this.#calls, this.#cluster);
    this.#queue =
      maxSize === undefined
        ? undefined
        : new BatchQueue((batch, landed) => queued.send(batch, landed), maxSize);
  }

  /**
   * Runs the policy's script on the key: one round trip (or a place in one), atomic. With a
   * `block`, the joint decision of one part decides it, the key's block record read and written
   * in the same script call (see `scripts/block.lua.ts`); the usual request, without, is not
   * slowed by it.
   */
  consume(request: StoreRequest): Promise<Verdict> {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (request.block !== undefined)
      return this.#blocking(request, [request.policy]).then((verdicts) => verdicts[0] as Verdict);
    return this.#run(
      Op.consume,
      [this.keyOf(request)],
      this.#one(request.policy),
      request,
    ) as Promise<Verdict>;
  }

  /** {@link RedisStore.consume}, told to `to` (see `CONSUME_TO`). @internal */
  [CONSUME_TO](request: StoreRequest, to: Outcome<Verdict>): void {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return to.failed(invalid);
    if (request.block !== undefined) {
      return this.#blockingTo(request, [request.policy], {
        answered: (verdicts) => to.answered(verdicts[0] as Verdict),
        failed: (error) => to.failed(error),
        startedAt: to.startedAt,
      });
    }
    this.#runTo(
      Op.consume,
      [this.keyOf(request)],
      this.#one(request.policy),
      request,
      to as Outcome<unknown>,
    );
  }

  /**
   * `[policy]`, shared by the consumes of one policy in a row (a limiter's every request): never
   * changed by the queue nor the calls, so not a new list per request.
   */
  #one(policy: Policy): readonly Policy[] {
    if (policy !== this.#policy) {
      this.#policy = policy;
      this.#policies = [policy];
    }
    return this.#policies;
  }

  /**
   * Runs every rule on its own key in one script, all or nothing: the states are written only
   * when every rule admits. One round trip; the keys share the user key's hash tag, so on
   * Cluster they live on one node (no `CROSSSLOT`).
   */
  consumeRules(request: RulesRequest): Promise<Verdict[]> {
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (request.block !== undefined) return this.#blocking(request, request.policies);
    return this.#run(Op.consume, this.rulesKeysOf(request), request.policies, request, true) as Promise<
      Verdict[]
    >;
  }

  /** A decision with a block (see `blockingCall`), its outcome as a promise. */
  #blocking(request: Omit<StoreRequest, 'policy'>, policies: readonly Policy[]): Promise<Verdict[]> {
    return new Promise((resolve, reject) => {
      this.#blockingTo(request, policies, { answered: resolve, failed: reject });
    });
  }

  /** A decision with a block: a one-part joint request of the batch (see `blockingCall`). */
  #blockingTo(
    request: Omit<StoreRequest, 'policy'>,
    policies: readonly Policy[],
    to: Outcome<Verdict[]>,
  ): void {
    const { keys, own, outcome } = blockingCall(this.#client, request, policies, this.#jointKeys, to);
    this.#runTo(
      Op.joint,
      keys,
      NO_POLICIES,
      { cost: 0, nowMs: request.nowMs, timeoutMs: request.timeoutMs },
      outcome,
      false,
      own,
    );
  }

  /**
   * Gives back `cost` units of an admission that will not be served (a queued request whose
   * client left): one script call, nothing for policies that never delay.
   */
  async giveBack(request: StoreRequest): Promise<void> {
    if (!givesBack(request.policy)) return;
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) throw invalid;
    await this.#run(Op.giveBack, [this.keyOf(request)], [request.policy], request);
  }

  /** {@link RedisStore.giveBack} for every rule of a limiter with several, in one script call. */
  async giveBackRules(request: RulesRequest): Promise<void> {
    if (!request.policies.some(givesBack)) return;
    const invalid = invalidTime(request.nowMs);
    if (invalid !== undefined) throw invalid;
    await this.#run(Op.giveBack, this.rulesKeysOf(request), request.policies, request);
  }

  /** Several limiters' parts of one request in one script call, all or none (see `Store.consumeAll`). */
  consumeAll(parts: readonly JointPart[]): Promise<JointVerdicts> {
    const invalid = parts.map((part) => invalidTime(part.nowMs)).find((error) => error !== undefined);
    if (invalid !== undefined) return Promise.reject(invalid);
    // The caller waits as long as its most impatient part's limiter does (see `consumeAll`).
    const timeouts = parts.flatMap((part) => (part.timeoutMs === undefined ? [] : [part.timeoutMs]));
    const timeoutMs = timeouts.length === 0 ? undefined : Math.min(...timeouts);
    return this.#runJoint(
      Op.joint,
      jointCall(this.#client, parts, this.#jointKeys),
      timeoutMs,
    ) as Promise<JointVerdicts>;
  }

  /** Whether {@link RedisStore.consumeAll} can take these parts: one node (or Cluster slot), no key twice. */
  canJoin(parts: readonly JointPart[]): boolean {
    return canJoin(this.#client, parts.flatMap(this.#jointKeys));
  }

  /** Gives back exactly what a part took (see `Store.giveBackTaken`): one script call. */
  giveBackTaken(part: RulesRequest, receipts: readonly Receipt[]): Promise<void> {
    const invalid = invalidTime(part.nowMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    return this.#runJoint(
      Op.giveBackTaken,
      giveBackJointCall(this.#client, part, receipts, this.#partKeys),
      part.timeoutMs,
    ) as Promise<void>;
  }

  #runJoint(op: Op, { keys, nowMs, own }: JointCall, timeoutMs: number | undefined): Promise<unknown> {
    return this.#run(op, keys, NO_POLICIES, { cost: 0, nowMs, timeoutMs }, false, own);
  }

  // A one-rule part's key without a copy of the part for `keyOf`.
  readonly #partKeys = (part: RulesRequest): string[] =>
    part.policies.length > 1
      ? this.rulesKeysOf(part)
      : [this.#keys.of(part.prefix, part.key, stateKindOf(part.policies[0] as Policy), part.scope)];

  // A joint decision's part: its rules' keys, then its block record's when it has a block.
  readonly #jointKeys = (part: RulesRequest): string[] => {
    const keys = this.#partKeys(part);
    if (part.block !== undefined) keys.push(this.#keys.blockOf(part.prefix, part.key));
    return keys;
  };

  /**
   * Deletes the key's state for the policy's algorithm, and with a `block` its block record (a
   * reset lifts a block): its next request starts fresh.
   */
  async reset(request: Omit<StoreRequest, 'cost'>): Promise<void> {
    const { policy } = request;
    const state = this.keyOf(request);
    if (request.block === undefined) await this.#run(Op.reset, [state], [policy], RESET);
    else await this.#run(Op.reset, [state, this.blockKeyOf(request)], [policy, policy], RESET);
  }

  /** Deletes every rule's state for the key and, with a `block`, its block record (the keys share one slot). */
  async resetRules(request: Omit<RulesRequest, 'cost'>): Promise<void> {
    const { policies } = request;
    const keys = this.rulesKeysOf(request);
    if (request.block === undefined) return void (await this.#run(Op.reset, keys, policies, RESET));
    keys.push(this.blockKeyOf(request));
    await this.#run(Op.reset, keys, [...policies, policies[0] as Policy], RESET);
  }

  /**
   * The Redis key of the user key's block record (the limiter's `block` option),
   * `[<store prefix>:]<limiter prefix>:{<key>}:block@1`, for inspection and tests: two doubles,
   * the block's end (epoch ms) and its length; it expires `maxDurationMs` after the block ends.
   */
  blockKeyOf({ prefix, key }: Pick<StoreRequest, 'prefix' | 'key'>): string {
    return this.#keys.blockOf(prefix, key);
  }

  /** {@link RedisStore.#runTo}, its outcome as a promise. */
  #run(
    op: Op,
    keys: readonly string[],
    policies: readonly Policy[],
    timing: Pick<StoreRequest, 'cost' | 'nowMs' | 'timeoutMs'>,
    rules = false,
    own?: OwnCall,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#runTo(op, keys, policies, timing, { answered: resolve, failed: reject }, rules, own);
    });
  }

  /**
   * The one way every operation reaches Redis: alone without batching, else through the batch
   * queue of its keys' slot, where it waits its turn in arrival order (a reset or a give-back
   * never overtakes a decision asked before it); alone also when the queue has room, as without
   * batching, its place freed before `to` hears. `keys` share one hash tag; `policies` has one
   * policy per key, or none for an op with arguments of its own (`own`: joint decisions, exact
   * give-backs, permits).
   */
  #runTo(
    op: Op,
    keys: readonly string[],
    policies: readonly Policy[],
    timing: Pick<StoreRequest, 'cost' | 'nowMs' | 'timeoutMs'>,
    to: Outcome<unknown>,
    rules = false,
    own?: OwnCall,
  ): void {
    const queue = this.#queue;
    const slot = this.#cluster ? calculateSlot(keys[0] as string) : 0;
    const group = queue === undefined ? 0 : slot;
    // Each request's deadline runs from when it was asked: the guard's clock reading, if it has one.
    const now = to.startedAt ?? performance.now();
    const deadline = timing.timeoutMs === undefined ? Infinity : now + timing.timeoutMs;
    // What takes units carries its deadline to the script: past it, nothing is taken.
    const until =
      deadline !== Infinity && (op === Op.joint || (op === Op.consume && timing.cost > 0))
        ? this.#clock.deadline(keys[0] as string, slot, deadline, now)
        : undefined;
    const place = queue?.room(group, deadline);
    if (queue === undefined || place !== undefined) {
      const reply =
        own === undefined
          ? this.#calls.send(op, keys, policies, timing.cost, timing.nowMs, rules, until)
          : alone(own, until);
      return answerTo(to, reply, op, policies, rules, own, queue, group, place, timing.timeoutMs);
    }
    queue.push(queuedEntry(op, keys, policies, timing, rules, group, deadline, to, own, until), now);
  }

  /**
   * The Redis key that holds a request's state,
   * `[<store prefix>:]<limiter prefix>:{<key>}:<algorithm>[:<scope>]` with every text part
   * escaped, for inspection (`GET`, `PTTL`) and tests. The value is the algorithm's numbers
   * packed as doubles (see `scripts/state-bytes.lua.ts`); the sliding log is a sorted set.
   * @param request - the limiter prefix, the user's key, the policy and the scope, if any
   */
  keyOf({ prefix, key, policy, scope }: Pick<StoreRequest, 'prefix' | 'key' | 'policy' | 'scope'>): string {
    return this.#keys.of(prefix, key, stateKindOf(policy), scope);
  }

  /**
   * The permits of concurrency limits (`createConcurrencyLimiter`) in this Redis: leases in
   * `…:{<key>}:permits`, each operation a request of this store, batched with the others of its slot.
   */
  permits(): RedisPermits {
    return (this.#permits ??= new RedisPermits(
      this.#client,
      this.prefix,
      this.nodeOf,
      (op, keys, own, nowMs, timeoutMs, to) =>
        this.#runTo(op, keys, NO_POLICIES, { cost: 0, nowMs, timeoutMs }, to, false, own),
    ));
  }

  /** The keys of every rule of a {@link RulesRequest}, `…:{<key>}:<algorithm>[:<scope>]:<index>`, in order. */
  rulesKeysOf({
    prefix,
    key,
    policies,
    scope,
  }: Pick<RulesRequest, 'prefix' | 'key' | 'policies' | 'scope'>): string[] {
    return this.#keys.ofRules(prefix, key, policies.map(stateKindOf), scope);
  }
}

const NO_POLICIES: readonly Policy[] = [];

/** A reset takes nothing, sends no time and waits as long as it takes (it is not guarded). */
const RESET = { cost: 0, nowMs: undefined, timeoutMs: undefined };
