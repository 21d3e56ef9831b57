import type { BlockOption } from '../policy/block';
import type { RateInput } from '../policy/rate';
import type { PolicyOptions } from '../policy/resolve-policy';
import type { LimiterEventName, LimiterListener } from '../resilience/events';
import type { OnStoreError } from '../resilience/on-store-error';
import type { LeaseOption } from '../resilience/token-lease';
import type { Store } from '../stores/store';
import type { MetricsSink } from './metrics-sink';
import type { Decision, Policy } from '../types';
import type { Overrides } from './overrides';
import type { RuleOptions } from './rules';

/** Options of {@link createLimiter}. */
export interface LimiterOptions extends Omit<PolicyOptions, 'rate'> {
  /**
   * Sustained rate: `'10r/s'`, `'6r/m'`, `'100/1m'` or `{ limit, window }` — or a list of them,
   * several limits that must all admit a request (`['10r/s', '1000/1h']`, at most 16), sharing
   * `algorithm`, `burst`, `nodelay` and `delay` (each with its own default burst). A request
   * rejected by any consumes from none, atomically (one Lua call on Redis, one step in memory).
   * Required (or `rules`: see {@link LimiterRulesOptions}).
   */
  rate: RateInput | readonly RateInput[];
  /** See {@link LimiterRulesOptions}. */
  rules?: undefined;
  /**
   * Per-key limits: `{ 'sku:1001': '10r/s' }` (an object or `Map` from key to a rate or a list of
   * rates, read on every request, so a change takes effect on the key's next request), or a
   * function `(key, context?) => rate | undefined` (`context` is what `consume` was given, e.g.
   * the request from the HTTP layer). An override replaces the rate only: `algorithm`, `burst`,
   * `nodelay` and `delay` are the limiter's (with `rules`, the first rule's). An overridden key
   * has its own state per override rate (Redis: `…:{<key>}:<algorithm>:<rate>`), so changing its
   * override starts it fresh. An invalid value found at a request leaves that key on the
   * limiter's own rate and is reported once through the `overrideError` event; at creation it throws.
   * @defaultValue none
   */
  overrides?: Overrides;
  /** Where state lives. @defaultValue a new `MemoryStore()` */
  store?: Store;
  /** Namespace of this limiter's keys in the store; give each limiter sharing a store its own. @defaultValue `'sluice'` */
  prefix?: string;
  /**
   * Current time in epoch ms. Tests inject one so they never sleep. Without it the memory store
   * reads `Date.now()` and the Redis store reads the Redis server's `TIME`.
   */
  clock?: () => number;
  /** Units a request takes when `consume` is given no cost. @defaultValue 1 */
  cost?: number;
  /**
   * What to do when a remote store (Redis) fails or is slower than `timeoutMs`. Not used with
   * in-process stores, which cannot be unavailable.
   * @defaultValue `{ insurance: new MemoryStore() }`: keep limiting on this instance alone
   */
  onStoreError?: OnStoreError;
  /**
   * A remote store slower than this counts as failed; the request is decided by `onStoreError`
   * instead of waiting, whatever the client's reconnect and offline-queue settings are. A reply
   * that arrived while this process was too busy to read it (synchronous work, a GC pause) is
   * still used: the timeout is declared only after one more turn of the event loop's I/O phase,
   * so a silent store fails within `timeoutMs` plus that turn. After 3 failures of the store
   * itself in a row (an error about one key's data is not one) the store is left alone for
   * 250 ms, then probed by one request. A request decided by `onStoreError` is not charged in
   * Redis too when its call lands late: the call carries its deadline on the Redis server's
   * clock, past which the script takes nothing, and what a call answered too late took is given
   * back (see the README, "Failure modes", for the algorithms where it is exact).
   * @defaultValue 50
   */
  timeoutMs?: number;
  /**
   * With a remote store: once the store says a key is limited until T, later requests for that
   * key on this instance are rejected locally until T, without a store call — a flood on one
   * hot key costs the store almost nothing. It never admits more than the store would. `false`
   * turns it off; `{ maxKeys }` bounds how many blocked keys are remembered.
   * @defaultValue `true` (`maxKeys` 10 000)
   */
  blockCache?: boolean | { maxKeys?: number };
  /**
   * With a remote store, for hot keys: take `size` units per store call and spend them on this
   * instance for up to `maxStaleMs` (see `leasing`). Never admits more than the shared limit;
   * unspent units are dropped. One rule only; not with the leaky bucket, `queue` or `warmup`.
   * @defaultValue none
   */
  lease?: LeaseOption;
  /**
   * Labels everything this limiter reports to `metrics` (the `limiter` label in Prometheus, the
   * title on the dashboard). Printable ASCII, 1 to 128 characters. Limiters with the same name
   * share their counters, by design (one name for one limit spread over several middlewares).
   * @defaultValue the `prefix`
   */
  name?: string;
  /**
   * Where this limiter reports its decisions, store calls and store health: `prometheus()` from
   * `@sluice/metrics`, or any {@link MetricsSink}. A decision costs it a few increments.
   * @defaultValue none (nothing is counted)
   */
  metrics?: MetricsSink;
  /**
   * Blocks repeat offenders: a key refused as `'limited'` is blocked for `duration`, and while it
   * is blocked every request of the key is refused (`reason: 'blocked'`, `retryAfterMs` the
   * block's remaining time, `remaining` 0) without touching its limit. With `backoff: b`, a key
   * blocked again within `maxDuration` of its last block's end is blocked `b` times as long as the
   * last time, at most `maxDuration`; after `maxDuration` without a refusal it starts from
   * `duration` again. The block lives in the store beside the key's state, decided in the same
   * atomic step (Redis: `<prefix>:{<key>}:block@1`, in the same script call), so every instance
   * sharing the store refuses a blocked key; the block cache serves it locally until its end;
   * `reset(key)` lifts it. Durations in ms or as `'15m'`, `'1h'`, `'1d'`. Not with `lease`.
   *
   * @defaultValue none: a refused key may try again as soon as its limit allows
   * @example
   * ```ts
   * // five failed logins per 15 minutes; then blocked 15 minutes, 30, 60, … at most a day
   * const logins = createLimiter({
   *   rate: '5/15m',
   *   block: { duration: '15m', backoff: 2, maxDuration: '24h' },
   * });
   * ```
   */
  block?: BlockOption;
}

/**
 * {@link LimiterOptions} with several limits of their own algorithms instead of `rate`:
 * `rules: [{ rate, algorithm?, burst?, nodelay?, delay?, queue? }, …]` (at most 16), all or
 * nothing as a list in `rate`. Not with a top-level `rate`, `algorithm`, `burst`, `nodelay`,
 * `delay` or `queue`. The store must have `consumeRules` (MemoryStore and RedisStore do).
 *
 * @example
 * ```ts
 * createLimiter({ rules: [{ rate: '10r/s', algorithm: 'leaky-bucket', burst: 20 }, { rate: '1000/1d', algorithm: 'fixed-window' }] });
 * ```
 */
export interface LimiterRulesOptions extends Omit<
  LimiterOptions,
  'rate' | 'rules' | 'algorithm' | 'burst' | 'nodelay' | 'delay' | 'queue'
> {
  /** The limits, in order: every one must admit a request, and a rejection consumes from none. */
  rules: readonly RuleOptions[];
  rate?: undefined;
}

/** Per-call options of {@link Limiter.consume}. */
export interface ConsumeOptions {
  /** Units this request takes: a whole number >= 0 (0 only looks). @defaultValue the limiter's `cost` option, 1 */
  cost?: number;
  /** Passed to an `overrides` function as its second argument (the HTTP layer passes the request). */
  context?: unknown;
}

/** Per-call options of {@link Limiter.peek}. */
export interface PeekOptions {
  /** Passed to an `overrides` function as its second argument, as {@link ConsumeOptions.context}. */
  context?: unknown;
}

/** A limiter: one policy applied to any number of keys. */
export interface Limiter {
  /** The normalized policy (with several rules, the first one's). */
  readonly policy: Policy;
  /** Every rule's normalized policy, in order: one unless `rate` is a list or `rules` is given. */
  readonly policies: readonly Policy[];
  /** The store in use. */
  readonly store: Store;
  /**
   * Takes `cost` units for `key` and resolves the decision. Being limited is a normal answer
   * (`allowed: false`); the promise rejects only when the store fails.
   * @throws {@link SluiceConfigError} (synchronously) when `key` is not a string, `cost` is invalid or `clock` returns no valid time
   */
  consume(key: string, options?: ConsumeOptions): Promise<Decision>;
  /**
   * {@link Limiter.consume} without a promise, when the store decides in-process (MemoryStore):
   * the fast path adapters take. Returns `undefined` when the store is remote (Redis): use
   * `consume` then.
   * @throws {@link SluiceConfigError} when `key` is not a string or `cost` is invalid
   */
  consumeSync(key: string, options?: ConsumeOptions): Decision | undefined;
  /**
   * The decision a request of cost 0 would get: looks without taking anything. `context` is
   * what an `overrides` function sees, as in {@link Limiter.consume}: a look-ahead must see the
   * request's own rate.
   */
  peek(key: string, options?: PeekOptions): Promise<Decision>;
  /**
   * Gives back the turn of a delayed admission that will not be served — a request held for its
   * `delayMs` (a `queue`, the leaky bucket without `nodelay`, `warmup`) whose client left — so
   * the next request takes it. The adapters call it when a held client disconnects. `cost` is
   * the cost the decision took (default: the limiter's `cost`).
   *
   * Resolves `true` when the store took the units back; `false` when there was nothing to give
   * back (a rejection, an admission without delay, a window algorithm, a decision made without
   * the store) or the store did not answer within `timeoutMs`: the turn then stays taken, so
   * the limit is never exceeded. Never rejects.
   *
   * @example
   * ```ts
   * const decision = await limiter.consume(key);
   * if (decision.allowed && decision.delayMs > 0 && !(await held(decision.delayMs))) {
   *   await limiter.cancel(decision); // the client left: its turn goes to the next request
   * }
   * ```
   */
  cancel(decision: Decision, options?: { cost?: number }): Promise<boolean>;
  /**
   * Forgets `key`: its next request starts with the full limit. On a remote store, rejects when
   * the store fails, or with `StoreTimeoutError` when it does not answer within `timeoutMs` (the
   * reset may then still happen, when the store gets it).
   */
  reset(key: string): Promise<void>;
  /**
   * Listens to `limited`, `storeError`, `storeRecovered` or `fallback`. A listener that throws
   * never breaks a request.
   */
  on<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): Limiter;
  /** Stops listening. */
  off<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): Limiter;
}
