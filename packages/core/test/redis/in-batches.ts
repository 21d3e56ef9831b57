import { resolvePolicy, type RedisStore, type Store } from '../../src';
import { MAX_IN_FLIGHT } from '../../src/stores/redis/batch-queue';

/** The policy of the companion peeks: they look (cost 0) and never write. */
const COMPANION = resolvePolicy({ rate: '1/1h' });

/**
 * The store, with every call made to go through the batch script: `MAX_IN_FLIGHT` peeks of the
 * same user key (so the same Cluster slot) fill the slot's places first, so the call waits and
 * leaves as one batch with one more peek queued behind it. Run sequentially (as the contracts
 * are), each call under test is thus decided inside a batch of two, by the batch script, never
 * by the script it would run alone; the peeks under their own prefix change nothing.
 */
export function inBatches(store: RedisStore): Store {
  const around = <T>(key: string, call: () => Promise<T>): Promise<T> => {
    const peek = (): Promise<unknown> =>
      store.consume({ prefix: 'batch-companion', key, policy: COMPANION, cost: 0 });
    const ahead = Array.from({ length: MAX_IN_FLIGHT }, peek);
    const result = call();
    return Promise.all([...ahead, result, peek()]).then(() => result);
  };
  return {
    consume: (request) => around(request.key, () => store.consume(request)),
    consumeRules: (request) => around(request.key, () => store.consumeRules(request)),
    giveBack: (request) => around(request.key, () => store.giveBack(request)),
    giveBackRules: (request) => around(request.key, () => store.giveBackRules(request)),
    reset: (request) => around(request.key, () => store.reset(request)),
    resetRules: (request) => around(request.key, () => store.resetRules(request)),
  };
}
