import type { BlockPolicy, Policy, Receipt, Verdict } from '../types';
import type { PermitStore } from './permit-store';

/** One decision asked of a store. */
export interface StoreRequest {
  /** The namespace of the limiter (its `prefix` option). */
  readonly prefix: string;
  /** The user's key, any string (the store escapes it as it needs). */
  readonly key: string;
  readonly policy: Policy;
  /** Units to take: an integer >= 0; 0 only looks. */
  readonly cost: number;
  /** Epoch ms from the limiter's `clock`; absent: the store uses its own clock (memory: `Date.now()`, Redis: `TIME`). */
  readonly nowMs?: number;
  /**
   * A namespace for the key's state under a policy other than the limiter's own (a per-key
   * override, named after its rate): the same key with another `scope` has separate state.
   * Absent for the limiter's own policy. Redis appends it to the key (`…:<algorithm>:<scope>`).
   */
  readonly scope?: string;
  /**
   * How long the caller waits for the answer, in ms from the call (the limiter's `timeoutMs`).
   * A store that queues requests (RedisStore batching them) never sends one that waited longer:
   * it rejects it with `StoreTimeoutError` instead, as the caller has decided without the store.
   * Absent: the request waits as long as it takes.
   */
  readonly timeoutMs?: number;
  /**
   * The limiter's `block` option: a refusal as `'limited'` blocks the key, and while it is
   * blocked every request is refused (`'blocked'`) without touching its state. The block lives
   * beside the key's state, one per prefix and key (whatever the algorithm or scope; Redis:
   * `<prefix>:{<key>}:block@1`), decided in the same atomic step. Absent: no block.
   */
  readonly block?: BlockPolicy | undefined;
}

/** One decision against several rules at once (a limiter with several limits). */
export interface RulesRequest {
  readonly prefix: string;
  readonly key: string;
  /** The rules, in order; each keeps its own state (Redis: `<prefix>:{<key>}:<algorithm>:<index>`). */
  readonly policies: readonly Policy[];
  /** Units to take from every rule: an integer >= 0; 0 only looks. */
  readonly cost: number;
  readonly nowMs?: number;
  /** As {@link StoreRequest.scope}. */
  readonly scope?: string;
  /** As {@link StoreRequest.timeoutMs}. */
  readonly timeoutMs?: number;
  /** As {@link StoreRequest.block}: one block for the key, whichever rule refuses. */
  readonly block?: BlockPolicy | undefined;
}

/**
 * One limiter's part of a joint decision (several limits on one route): its rules — one policy
 * or several, with the keys each has in {@link Store.consume} or {@link Store.consumeRules} —
 * and whether it only counts.
 */
export interface JointPart extends RulesRequest {
  /** A dry-run limit: counted when the request is admitted, but its refusal refuses nothing. */
  readonly dryRun?: boolean;
  /**
   * Decided at its `cost` but never written: it refuses as a request of that cost would, and
   * when it admits it takes nothing and reports its state as it stays (a peek). The HTTP layer
   * sends a request of cost 0 so, at cost 1: it passes only while a unit is left. A store that
   * does not know it writes the part as any other (a unit taken, never one given away).
   */
  readonly probe?: boolean;
}

/** A store's answer to a joint decision, part by part. */
export interface JointVerdicts {
  /** Per part, one verdict per policy, in order. */
  readonly verdicts: Verdict[][];
  /** Per part, one receipt per policy when the part was written, to give it back exactly; else `undefined`. */
  readonly receipts: Array<Receipt[] | undefined>;
}

/** A joint decision of an in-process store, computed but not yet written ({@link Store.prepareAllSync}). */
export interface PreparedJoint {
  /** Per part, one verdict per policy at the part's cost, each part as if it were written. */
  readonly verdicts: readonly (readonly Verdict[])[];
  /**
   * Writes the parts marked `true` (each only if it admits) and returns their receipts; call it
   * at once, in the same synchronous step, or not at all.
   */
  commit(write: readonly boolean[]): Array<Receipt[] | undefined>;
  /** A part's verdicts when nothing is written: the rules that would admit report a peek. */
  unchanged(part: number): Verdict[];
}

/**
 * Where limiter state lives. A store runs the policy's algorithm atomically per key and resolves
 * a {@link Verdict}; being limited is a normal answer. A store rejects only on a real failure.
 */
export interface Store {
  /** Takes `cost` units for the key (or looks, with cost 0) and resolves the verdict. */
  consume(request: StoreRequest): Promise<Verdict>;
  /**
   * Optional: the same decision without a promise, for stores that decide in-process (the
   * memory store). The limiter uses it when present, sparing a promise per decision.
   */
  consumeSync?(request: StoreRequest): Verdict;
  /** Forgets the key's state: its next request starts fresh. */
  reset(request: Omit<StoreRequest, 'cost'>): Promise<void>;
  /**
   * Optional, needed for limiters with several rules: runs every rule's step on its own state
   * and writes them all only when every rule admits, atomically — a rejection by any rule
   * consumes from none. Resolves one verdict per rule, in order.
   */
  consumeRules?(request: RulesRequest): Promise<Verdict[]>;
  /** Optional: {@link Store.consumeRules} without a promise, for in-process stores. */
  consumeRulesSync?(request: RulesRequest): Verdict[];
  /** Optional, needed with {@link Store.consumeRules}: forgets every rule's state for the key. */
  resetRules?(request: Omit<RulesRequest, 'cost'>): Promise<void>;
  /**
   * Optional: gives back `cost` units of an admission that will not be served (a queued or
   * delayed request whose client left), so later requests may use its turn; nothing for the
   * algorithms that never delay. Without it, `limiter.cancel` gives nothing back.
   */
  giveBack?(request: StoreRequest): Promise<void>;
  /** Optional: {@link Store.giveBack} for every rule of a limiter with several. */
  giveBackRules?(request: RulesRequest): Promise<void>;
  /**
   * Optional, remote stores: decides several limiters' parts of one request in one atomic call,
   * all or none — every part's rules checked, then every admitted part written only when every
   * part that is not a dry run admits. Only for parts {@link Store.canJoin} accepts.
   */
  consumeAll?(parts: readonly JointPart[]): Promise<JointVerdicts>;
  /**
   * Optional, with {@link Store.consumeAll}: whether these parts can be decided in one call
   * (Redis: every key on one node — standalone, or one Cluster slot — and no key twice).
   */
  canJoin?(parts: readonly JointPart[]): boolean;
  /**
   * Optional, in-process stores: computes a joint decision without writing anything, so that
   * several in-process stores can decide one request together in one synchronous step.
   */
  prepareAllSync?(parts: readonly JointPart[]): PreparedJoint;
  /**
   * Optional: gives back exactly what an admitted part took, with the receipts its joint
   * decision returned (the windows and the sliding log need them). Used when several limits on
   * a route are decided in order and a later one refuses.
   */
  giveBackTaken?(part: RulesRequest, receipts: readonly Receipt[]): Promise<void>;
  /**
   * Optional, needed by concurrency limits (`createConcurrencyLimiter`) on a store that is not
   * in-process: where their permits live, as leases (RedisStore has it). In-process stores need
   * none: their permits are counted in the process.
   */
  permits?(): PermitStore;
  /**
   * Optional, remote stores of several nodes (Redis Cluster): which node holds the user key's
   * state now (any text naming it), or `undefined` when unknown. A limiter keeps one circuit
   * breaker per node it names, so one node gone fails only the keys it holds; without it (or on
   * `undefined`) one circuit covers the whole store. Called once per store call: keep it cheap.
   */
  readonly nodeOf?: ((key: string) => string | undefined) | undefined;
}
