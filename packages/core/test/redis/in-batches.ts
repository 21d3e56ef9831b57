import type { RedisStore, Store } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import type { PermitStore } from '../../src/stores/permit-store';
import type { RedisPermits } from '../../src/stores/redis/redis-permits';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';

/** The policy of the companion peeks: they look (cost 0) and never write. */
const COMPANION = resolvePolicy({ rate: '1/1h' });

/**
 * The store, with every call made to go through the batch script: `MAX_IN_FLIGHT` peeks of the
 * same user key (so the same Cluster slot) fill the slot's places first, so the call waits and
 * leaves as one batch with one more peek queued behind it. Run sequentially (as the contracts
 * are), each call under test is thus decided inside a batch of two, by the batch script, never
 * by the script it would run alone; the peeks under their own prefix change nothing. The same for
 * joint decisions (`consumeAll`, keyed by their first part's key), exact give-backs and the
 * permits of concurrency limits (`permits()`).
 */
export function inBatches(store: RedisStore): BatchedStore {
  const around = batchedAround(store);
  const permits = store.permits();
  const batchedPermits: BatchedPermits = {
    keyOf: (key) => permits.keyOf(key),
    acquire: (request) => around(request.key, () => permits.acquire(request)),
    release: (request) => around(request.key, () => permits.release(request)),
    renew: (request) => around(request.key, () => permits.renew(request)),
  };
  return {
    consumeAll: (parts) => around(parts[0]?.key ?? '', () => store.consumeAll(parts)),
    canJoin: (parts) => store.canJoin(parts),
    giveBackTaken: (part, receipts) => around(part.key, () => store.giveBackTaken(part, receipts)),
    permits: () => batchedPermits,
    consume: (request) => around(request.key, () => store.consume(request)),
    consumeRules: (request) => around(request.key, () => store.consumeRules(request)),
    giveBack: (request) => around(request.key, () => store.giveBack(request)),
    giveBackRules: (request) => around(request.key, () => store.giveBackRules(request)),
    reset: (request) => around(request.key, () => store.reset(request)),
    resetRules: (request) => around(request.key, () => store.resetRules(request)),
  };
}

/** What {@link inBatches} gives: every operation of a `RedisStore`, each call inside a batch. */
export type BatchedStore = Store &
  Required<Pick<Store, 'consumeAll' | 'canJoin' | 'giveBackTaken'>> & { permits(): BatchedPermits };

/** The store's permits, each call inside a batch; `keyOf` as the store's. */
export type BatchedPermits = PermitStore & Pick<RedisPermits, 'keyOf'>;

/** Runs a call of the store behind `MAX_IN_FLIGHT` peeks of the same user key, one more after it. */
function batchedAround(store: RedisStore): <T>(key: string, call: () => Promise<T>) => Promise<T> {
  return (key, call) => {
    const peek = (): Promise<unknown> =>
      store.consume({ prefix: 'batch-companion', key, policy: COMPANION, cost: 0 });
    const ahead = Array.from({ length: MAX_IN_FLIGHT }, peek);
    const result = call();
    return Promise.all([...ahead, result, peek()]).then(() => result);
  };
}
