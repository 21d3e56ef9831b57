/** The rate-limiting algorithms sluice implements, each once in TypeScript and once in Lua. */
export const ALGORITHMS = [
  'gcra',
  'token-bucket',
  'leaky-bucket',
  'fixed-window',
  'sliding-window',
  'sliding-log',
] as const;

/** Name of a rate-limiting algorithm. */
export type AlgorithmName = (typeof ALGORITHMS)[number];

/**
 * A validated, normalized policy: everything an algorithm needs, in integers.
 * Built once by `createLimiter` from the user's options.
 */
export interface Policy {
  /** The algorithm that decides. */
  readonly algorithm: AlgorithmName;
  /** Requests per window: the sustained rate is `limit / windowMs` requests per millisecond. Integer >= 1. */
  readonly limit: number;
  /** Window length in milliseconds. Integer >= 1. */
  readonly windowMs: number;
  /**
   * Extra requests allowed at once on top of one (`gcra`, `token-bucket`, `leaky-bucket`): the
   * capacity is `burst + 1`. Integer >= 0. Window algorithms ignore it (their capacity is `limit`).
   */
  readonly burst: number;
  /** `leaky-bucket` only: pass the whole burst at once instead of delaying excess requests (nginx `nodelay`). */
  readonly nodelay: boolean;
  /** `leaky-bucket` only: the first `delay` excess requests pass at once, later ones are delayed (nginx `delay=N`). */
  readonly delay: number;
  /**
   * `gcra` and `token-bucket`: a request that would be rejected is admitted with a delay when
   * it can pass within this many ms, its slot reserved, so requests are spaced evenly (Sentinel's
   * rate limiter, Guava's `acquire`). 0: no queue. Integer ms >= 0.
   */
  readonly maxWaitMs: number;
  /**
   * `gcra` and `token-bucket`: a cold key starts at a third of its rate and reaches the full
   * rate over this many ms (Guava SmoothWarmingUp); 0: no warm-up. Integer ms >= 0.
   */
  readonly warmupMs: number;
  /** The rate as the user wrote it, for headers and messages (e.g. `'6r/m'`, `'100/1m'`). */
  readonly source: string;
}

/**
 * Why a request was rejected: `'limited'`; `'cost-exceeds-capacity'` when the cost can never
 * pass; `'blocked'` while the key serves a block (the limiter's `block` option: refused without
 * touching its limit); `'store-unavailable'` when the store failed and `onStoreError` is
 * `'fail-closed'`.
 */
export type RejectReason = 'limited' | 'cost-exceeds-capacity' | 'blocked' | 'store-unavailable';

/**
 * A limiter's `block` option, normalized (see `LimiterOptions.block`): a key refused as
 * `'limited'` is blocked for `durationMs`; blocked again within `maxDurationMs` of its last
 * block's end, for `backoff` times the last block's length, at most `maxDurationMs`. Integers
 * but `backoff` (a number >= 1).
 */
export interface BlockPolicy {
  /** The first block's length, ms. */
  readonly durationMs: number;
  /** Each block again within `maxDurationMs` of the last one's end lasts this many times the last. */
  readonly backoff: number;
  /** The longest block, ms; also how long a key is remembered after its block ends. */
  readonly maxDurationMs: number;
}

/**
 * The answer an algorithm or store gives for one request. Every number is a finite integer >= 0.
 */
export interface Verdict {
  /** Whether the request may proceed (possibly after `delayMs`). */
  readonly allowed: boolean;
  /** Requests allowed at once: `burst + 1` for bucket algorithms, the per-window `limit` for window algorithms. */
  readonly limit: number;
  /** Requests of cost 1 that could still pass right now after this one. */
  readonly remaining: number;
  /** Milliseconds until the key is back to its full `limit` if no request comes meanwhile. */
  readonly resetMs: number;
  /** Milliseconds to wait before this request could pass; 0 when allowed or when it can never pass. */
  readonly retryAfterMs: number;
  /** Milliseconds the admitted request should be held before it proceeds (`leaky-bucket` without `nodelay`); else 0. */
  readonly delayMs: number;
  /**
   * Set on a rejection: `'limited'`, `'cost-exceeds-capacity'` (the cost exceeds `limit` and can
   * never pass), `'blocked'` (the key serves a block: `retryAfterMs` is its remaining time) or
   * `'store-unavailable'`.
   */
  readonly reason?: RejectReason;
}

/** A {@link Verdict} with the key and the policy that produced it, as returned by `limiter.consume`. */
export interface Decision extends Verdict {
  /** The key that was limited, as given to `consume` (before any store prefix or escaping). */
  readonly key: string;
  /** The policy that decided. */
  readonly policy: Policy;
  /**
   * Set when the store could not decide (down, slower than `timeoutMs`, or an error about this
   * key's data from a store that reports one) and `onStoreError` did: `'fail-open'` (admitted
   * unchecked), `'fail-closed'` (rejected) or `'insurance'` (decided by the insurance store).
   * sluice's Redis scripts read unreadable state as none, so bad data there never degrades.
   */
  readonly degraded?: 'fail-open' | 'fail-closed' | 'insurance';
  /**
   * Only with several rules (`rate: ['10r/s', '1000/1h']` or `rules`): every rule's numbers, in
   * rule order. The decision's own fields are those of the rule that decided: the rejecting one,
   * else the most restrictive (fewest remaining, then longest reset).
   */
  readonly limits?: readonly DecisionLimit[];
}

/** One rule's numbers in a decision with several rules ({@link Decision.limits}). */
export interface DecisionLimit {
  /** The rule's policy. */
  readonly policy: Policy;
  /** Requests the rule allows at once (as {@link Verdict.limit}). */
  readonly limit: number;
  /** Requests of cost 1 the rule would still admit right now. */
  readonly remaining: number;
  /** Milliseconds until the rule is back to its full limit. */
  readonly resetMs: number;
}

/**
 * What one rule's admission took, so that it can be given back exactly when a later limit of the
 * same request refuses (several limits on a route, decided in order). `at` (epoch ms) is the
 * start of the window it counted in (fixed and sliding window) or the time of its entries
 * (sliding log), else 0; `member` is the index of its first sliding-log entry on Redis (entries
 * are named `<at>:<index>`), else 0. The bucket algorithms give back without one.
 */
export interface Receipt {
  readonly at: number;
  readonly member: number;
}
