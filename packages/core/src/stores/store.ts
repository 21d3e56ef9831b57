import type { Policy, Verdict } from '../types';

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
}
