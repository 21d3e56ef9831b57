import type { Outcome } from './outcome';

/**
 * Where a shared store keeps the permits of concurrency limits (`createConcurrencyLimiter`):
 * per key, a set of leases, each with an expiry. A lease is taken when a request is admitted,
 * removed when it ends, and renewed while it runs; one whose holder crashed expires by itself,
 * so its permit comes back. An in-process store needs none of this (its permits die with it).
 */
export interface PermitStore {
  /** Takes a lease when fewer than `max` live leases exist for the key. */
  acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply>;
  /** Removes a lease; nothing when it is gone already (expired, or released before). */
  release(request: PermitReleaseRequest): Promise<void>;
  /**
   * Sets the given leases to expire at `nowMs + leaseMs`. Each is a request still running at its
   * holder: one that lapsed meanwhile (it expired, or the store lost its data) is taken back
   * whatever the count, and reported in `lost`. With no `ids`, only counts.
   */
  renew(request: PermitRenewRequest): Promise<PermitRenewReply>;
  /** Optional: which node holds the key's permits (see `Store.nodeOf`): one circuit per node. */
  readonly nodeOf?: ((key: string) => string | undefined) | undefined;
}

/** What every permit operation names: the limiter's namespace and the user's key. */
export interface PermitKey {
  /** The limiter's `prefix`. */
  readonly prefix: string;
  /** The user's key, any string (the store escapes it as it needs). */
  readonly key: string;
  /**
   * How long the caller waits for the answer, in ms (the limiter's `timeoutMs`): a store that
   * queues requests (a batching `RedisStore`) never sends one after it. Absent: no limit.
   */
  readonly timeoutMs?: number;
}

/** One lease asked for. */
export interface PermitAcquireRequest extends PermitKey {
  /** Most live leases for the key: a whole number >= 1. */
  readonly max: number;
  /** How long the lease lives unless renewed, in ms. */
  readonly leaseMs: number;
  /** The lease's id, unique across every process sharing the store. */
  readonly id: string;
  /** Epoch ms from the limiter's `clock`; absent: the store's own clock (Redis `TIME`). */
  readonly nowMs?: number;
}

/** The answer to {@link PermitStore.acquire}. */
export interface PermitAcquireReply {
  readonly acquired: boolean;
  /** Live leases for the key after the call, every holder's. */
  readonly held: number;
}

/** One lease to remove. */
export interface PermitReleaseRequest extends PermitKey {
  readonly id: string;
}

/** Leases of one key to extend. */
export interface PermitRenewRequest extends PermitKey {
  readonly max: number;
  readonly leaseMs: number;
  readonly ids: readonly string[];
  readonly nowMs?: number;
}

/** The answer to {@link PermitStore.renew}. */
export interface PermitRenewReply {
  /** Live leases for the key after the call, every holder's. */
  readonly held: number;
  /**
   * The ids that had lapsed (expired, or gone with the store's data) and were taken back. The
   * limiter keeps renewing every id it holds whatever this says, and reports each as `leaseLost`.
   */
  readonly lost: readonly string[];
}

/**
 * `acquire` and `release` that tell their outcome to `to` instead of returning a promise, as
 * `CONSUME_TO` does for a consume (see `consume-to.ts`). `RedisStore`'s permits have them, for
 * the concurrency limiter's guarded calls: an admitted request's two store calls then make no
 * promise, closure or reaction of their own between the store's reply and the limiter.
 * Internal: a symbol, not part of the {@link PermitStore} interface.
 */
export const PERMITS_TO: unique symbol = Symbol('sluice.permitsTo');

/** The operations of {@link PERMITS_TO}. */
export interface PermitsTo {
  acquire(request: PermitAcquireRequest, to: Outcome<PermitAcquireReply>): void;
  release(request: PermitReleaseRequest, to: Outcome<unknown>): void;
}

/** A permit store with {@link PERMITS_TO}. */
export interface TellsPermits {
  readonly [PERMITS_TO]: PermitsTo;
}

export function tellsPermits(store: PermitStore): store is PermitStore & TellsPermits {
  return typeof (store as Partial<TellsPermits>)[PERMITS_TO] === 'object';
}
