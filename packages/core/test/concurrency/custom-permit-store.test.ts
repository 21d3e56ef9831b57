import { createConcurrencyLimiter, RedisStore, type Store } from '../../src';
import type { PermitStore } from '../../src/stores/permit-store';
import { useRedisServer } from '../harness/redis-fixtures';
import { fakeTimersOnly } from '../harness/fake-timers';

/**
 * A shared store of the user's own (`permits()`), on a real Redis, that breaks its interface one
 * way or another: the limiter reports it and decides by `onStoreError`, and never lets a throw
 * or a rejection loose (Node ends the process on either), nor leaves a request waiting.
 */
const redis = useRedisServer();
let inner: PermitStore;
let prefixes = 0;

beforeAll(() => {
  inner = new RedisStore({ client: redis.client() }).permits();
});

/** A store whose permits are `inner`'s, but for `changes`. */
const storeWith = (changes: Partial<PermitStore>): Store =>
  ({ permits: () => ({ ...bound(inner), ...changes }) }) as unknown as Store;

function bound(store: PermitStore): PermitStore {
  return {
    acquire: (request) => store.acquire(request),
    release: (request) => store.release(request),
    renew: (request) => store.renew(request),
  };
}

/** Collects unhandled rejections while `run` runs and a few turns after. */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void seen.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await run();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return seen;
}

test('an acquire answered as something else than { acquired, held }: decided by onStoreError, reported', async () => {
  const errors: string[] = [];
  const unhandled = await unhandledDuring(async () => {
    const limiter = createConcurrencyLimiter({
      max: 1,
      prefix: `custom-${++prefixes}`,
      store: storeWith({ acquire: () => Promise.resolve(undefined as never) }),
      onStoreError: 'fail-open',
    });
    limiter.on('storeError', (event) => errors.push(event.error.message));
    const decision = await limiter.acquire('k');
    expect(decision).toMatchObject({ allowed: true, degraded: 'fail-open' });
    await decision.permit?.release();
  });
  expect(unhandled).toEqual([]);
  expect(errors).toEqual([
    expect.stringMatching(/acquire answered undefined.*expected \{ acquired, held \}/),
  ]);
});

test('an acquire answered too late, whose release throws instead of rejecting: no throw let loose', async () => {
  let answerLate: (() => void) | undefined;
  const unhandled = await unhandledDuring(async () => {
    const limiter = createConcurrencyLimiter({
      max: 1,
      prefix: `custom-${++prefixes}`,
      timeoutMs: 20,
      store: storeWith({
        acquire: (request) =>
          new Promise((resolve) => {
            answerLate = () => void inner.acquire(request).then(resolve);
          }),
        release: () => {
          throw new Error('release is broken');
        },
      }),
      onStoreError: 'fail-open',
    });
    const decision = await limiter.acquire('k'); // timed out: onStoreError decides
    expect(decision).toMatchObject({ allowed: true, degraded: 'fail-open' });
    answerLate?.(); // the lease comes after all, and is given back: the release throws
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  });
  expect(unhandled).toEqual([]);
});

test('a renewal answered without lost leases: the lease stays renewed, nothing let loose', async () => {
  fakeTimersOnly();
  try {
    let renewed = 0;
    const unhandled = await unhandledDuring(async () => {
      const limiter = createConcurrencyLimiter({
        max: 1,
        prefix: `custom-${++prefixes}`,
        leaseMs: 300,
        timeoutMs: 5000,
        store: storeWith({
          renew: (request) => {
            renewed++;
            return inner.renew(request).then(({ held }) => ({ held }) as never);
          },
        }),
      });
      const decision = await limiter.acquire('k');
      expect(decision.allowed).toBe(true);
      jest.advanceTimersByTime(100);
      while (renewed === 0) await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      await decision.permit?.release();
    });
    expect(unhandled).toEqual([]);
  } finally {
    jest.useRealTimers();
  }
});
