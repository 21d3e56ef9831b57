import { describeValue } from '../policy/config-error';
import type { DegradedMode } from '../resilience/events';
import { GuardedOutcome } from '../resilience/guarded-call';
import type { DeadlineList } from '../resilience/deadline-list';
import type { Outcome } from '../stores/outcome';
import {
  PERMITS_TO,
  tellsPermits,
  type PermitAcquireReply,
  type PermitAcquireRequest,
  type PermitReleaseRequest,
  type PermitsTo,
  type PermitStore,
} from '../stores/permit-store';
import type { PermitTable } from './permit-table';

/**
 * What a permit holds: a count in a table of this process (a memory store, or the insurance
 * store while the shared one is away), a lease id in the shared store, or `null` when nothing
 * was taken (`'fail-open'`).
 */
export type Grant = PermitTable | string | null;

/** A shared store's answer to one acquire, or `onStoreError`'s when it failed. */
export interface RemoteAnswer {
  /** What was granted; `undefined` when refused. */
  readonly grant: Grant | undefined;
  /** Permits of the key in use, as counted by whoever decided. */
  readonly held: number;
  readonly degraded?: DegradedMode;
  /** `'store-unavailable'` when fail-closed refused; else `'limited'` on a refusal. */
  readonly reason?: 'limited' | 'store-unavailable';
  /** Fail-closed: when to try again. */
  readonly retryAfterMs?: number;
}

/** What a guarded acquire or release needs of its limiter's guard. */
export interface PermitGuard {
  /** Bounds every call by `timeoutMs` (and one turn). */
  readonly deadlines: DeadlineList;
  /** Reports a call the store answered; throws when a sink or listener does. */
  succeeded(key: string, startedAt: number): void;
  /** Reports a failed call (an error, or no answer in time). */
  report(key: string, error: unknown, startedAt: number): void;
  /** `onStoreError`'s answer to an acquire the store could not give. */
  degrade(key: string): RemoteAnswer;
  /**
   * Insurance permits of `key` this process still holds (0 without insurance). Redis does not
   * see them, so a lease it grants is kept only if its count and these stay within `max`; else
   * the lease goes back at once and the acquire is refused as limited. Not "the insurance decides
   * the key until its permits are all back": under steady traffic on a hot key they may never all
   * be back, and the key would never rejoin the shared limit.
   */
  insured(key: string): number;
  /** Leases of `key` this process holds, however many Redis still counts. */
  leased(key: string): number;
  /**
   * Holds the lease, renewed while held, when fewer than `room` leases of the key are held here;
   * `false` when not (Redis counted fewer than this process runs: it lost some of them).
   */
  track(key: string, id: string, room: number): boolean;
  /** Retries a release that failed. */
  retry(key: string, id: string): void;
  /** Gives back a lease the store took for an acquire decided without it. */
  giveBack(key: string, id: string): void;
}

/**
 * One guarded acquire, as one object: its place on the deadline list, the store's outcome (it is
 * the `Outcome` the store tells), and its caller's promise. An acquire the store fails, or does
 * not answer in time, is decided by `onStoreError`; if the store took the lease after all, it is
 * given back when the answer comes. Where the guard's calls were async functions with closures
 * and a bounding promise, this made an admitted request's acquire and release allocate about
 * 46 % less: 8.6 → 4.6 kB at 1 000 in flight (bench/src/http/alloc-probe.ts, `PROBE_CONCURRENCY=1`).
 */
export class AcquireCall extends GuardedOutcome<PermitAcquireReply, RemoteAnswer> {
  constructor(
    private readonly guard: PermitGuard,
    private readonly request: PermitAcquireRequest,
  ) {
    super(guard.deadlines);
  }

  answered(reply: PermitAcquireReply): void {
    const { guard, request } = this;
    if (!this.deadlines.settle(this)) {
      if (reply.acquired) guard.giveBack(request.key, request.id);
      return;
    }
    try {
      guard.succeeded(request.key, this.startedAt);
    } catch (error) {
      // A sink or listener that throws fails the call: decided without the store, whose lease goes back.
      if (reply.acquired) guard.giveBack(request.key, request.id);
      return this.fallBack(error);
    }
    if (!reply.acquired) return this.resolve({ grant: undefined, held: reply.held, reason: 'limited' });
    // Kept within max beside what this process holds, Redis's count or not: the insurance
    // permits (Redis never saw them), and the leases running here (Redis may have lost some).
    const { key, id, max } = request;
    const insured = guard.insured(key);
    if (reply.held + insured > max || !guard.track(key, id, max - insured)) {
      guard.giveBack(key, id);
      const held = Math.max(reply.held - 1, guard.leased(key)) + insured;
      return this.resolve({ grant: undefined, held, reason: 'limited' });
    }
    this.resolve({ grant: id, held: reply.held });
  }

  protected fallBack(error: unknown): void {
    const { key } = this.request;
    try {
      this.guard.report(key, error, this.startedAt);
      this.resolve(this.guard.degrade(key));
    } catch (thrown) {
      // A sink that throws while reporting: the request is still decided by onStoreError.
      try {
        this.resolve(this.guard.degrade(key));
      } catch {
        this.reject(thrown);
      }
    }
  }
}

/**
 * One guarded release, as one object (see {@link AcquireCall}). Resolves once the store was told,
 * or when it could not be: the release is then retried until the lease expires. Never rejects.
 */
export class ReleaseCall extends GuardedOutcome<unknown, void> {
  constructor(
    private readonly guard: PermitGuard,
    private readonly key: string,
    private readonly id: string,
  ) {
    super(guard.deadlines);
  }

  answered(): void {
    if (!this.deadlines.settle(this)) return;
    try {
      this.guard.succeeded(this.key, this.startedAt);
    } catch (error) {
      return this.fallBack(error);
    }
    this.resolve();
  }

  protected fallBack(error: unknown): void {
    try {
      this.guard.report(this.key, error, this.startedAt);
    } catch {
      // A sink that throws while reporting: the release is retried all the same.
    }
    this.guard.retry(this.key, this.id);
    this.resolve();
  }
}

/**
 * A store's acquire and release told to an outcome: its own (`PERMITS_TO`, sluice's `RedisStore`),
 * or its promises' (a store of another kind).
 */
export function tellingPermits(store: PermitStore): PermitsTo {
  if (tellsPermits(store)) return store[PERMITS_TO];
  return {
    acquire: (request: PermitAcquireRequest, to: Outcome<PermitAcquireReply>) =>
      void store.acquire(request).then(
        // A reply of another shape fails the call (its limiter's onStoreError decides): read as
        // one, it threw where nothing catches, and the acquire waited for ever.
        (reply) => (isAcquireReply(reply) ? to.answered(reply) : to.failed(notAnAcquireReply(reply))),
        (error: unknown) => to.failed(error),
      ),
    release: (request: PermitReleaseRequest, to: Outcome<unknown>) =>
      void store.release(request).then(
        (reply) => to.answered(reply),
        (error: unknown) => to.failed(error),
      ),
  };
}

function isAcquireReply(reply: unknown): reply is PermitAcquireReply {
  return (
    typeof reply === 'object' &&
    reply !== null &&
    typeof (reply as PermitAcquireReply).acquired === 'boolean' &&
    typeof (reply as PermitAcquireReply).held === 'number'
  );
}

function notAnAcquireReply(reply: unknown): TypeError {
  return new TypeError(
    `the permit store's acquire answered ${describeValue(reply)}: expected { acquired, held }`,
  );
}
