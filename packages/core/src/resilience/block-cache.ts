import { heldKey, ownedKeyText } from '../stores/key-digest';
import type { DecisionLimit, Policy, RejectReason } from '../types';

/** What the block cache remembers of a rejection. */
export interface Block {
  /** Local epoch ms until which the key cannot pass. */
  readonly until: number;
  /** The smallest cost known not to pass until then (1 for a block: nothing passes). */
  readonly cost: number;
  /** `'limited'`, or `'blocked'` while the key serves a block (the limiter's `block` option). */
  readonly reason: RejectReason;
  readonly limit: number;
  /** Local epoch ms at which the key is back to full, as the store said. */
  readonly resetAt: number;
  /** The policy that rejected. */
  readonly policy: Policy;
  /** With several rules: every rule's numbers when the store rejected. */
  readonly limits: readonly DecisionLimit[] | undefined;
  /**
   * What the key was limited by (the limiter's policies, or an override's): a block found under
   * another (the key's override changed since) does not apply.
   */
  readonly tag: object;
}

/** A rejection as the block cache needs it. */
export interface Rejection {
  readonly limit: number;
  readonly retryAfterMs: number;
  readonly resetMs: number;
  readonly policy: Policy;
  readonly limits?: readonly DecisionLimit[] | undefined;
  /** `'blocked'`: every request that takes units is refused until then, whatever its cost. */
  readonly reason?: RejectReason | undefined;
}

/**
 * Remembers, per key, that the shared store said "limited until T", so later requests for that
 * key on this instance are rejected locally until T without a store call. It only ever rejects
 * what the store would reject (a key's state cannot free a unit sooner than the store said, and a
 * request costing less than the rejected one still goes to the store), so it never admits more.
 *
 * Bounded: two generations of at most `maxKeys / 2` keys each (as `hashlru`), O(1) per call;
 * keys are held as the store holds them (`heldKey`), so a long key costs what a short one does.
 */
export class BlockCache {
  #recent = new Map<string, Block>();
  #older = new Map<string, Block>();
  readonly #generation: number;
  /** `maxKeys: 1` has no room for an older generation: a rotation drops the recent one. */
  readonly #keepsOlder: boolean;

  constructor(maxKeys: number) {
    this.#generation = Math.max(1, Math.floor(maxKeys / 2));
    this.#keepsOlder = maxKeys >= 2;
  }

  /** The block in force for a request of `cost` at `now` under `tag`, if any. */
  find(given: string, cost: number, now: number, tag: object): Block | undefined {
    const key = heldKey(given);
    const block = this.#recent.get(key) ?? this.#older.get(key);
    if (block === undefined) return undefined;
    if (block.until <= now || block.tag !== tag) {
      this.#recent.delete(key);
      this.#older.delete(key);
      return undefined;
    }
    return cost >= block.cost && cost > 0 ? block : undefined;
  }

  /** Records the store's rejection of `cost` under `tag` at `now` (local time), for its `retryAfterMs`. */
  remember(given: string, cost: number, now: number, rejection: Rejection, tag: object): void {
    const { limit, retryAfterMs, resetMs, policy, limits, reason = 'limited' } = rejection;
    if (retryAfterMs <= 0 || cost <= 0) return;
    const key = ownedKeyText(heldKey(given));
    if (this.#recent.size >= this.#generation) {
      if (this.#keepsOlder) {
        this.#older = this.#recent;
        this.#recent = new Map();
      } else {
        this.#recent.clear();
      }
    }
    this.#older.delete(key);
    this.#recent.set(key, {
      until: now + retryAfterMs,
      cost: reason === 'blocked' ? 1 : cost,
      reason,
      limit,
      resetAt: now + resetMs,
      policy,
      limits,
      tag,
    });
  }

  forget(given: string): void {
    const key = heldKey(given);
    this.#recent.delete(key);
    this.#older.delete(key);
  }
}
