import { createLimiter, MemoryStore, parseDuration, SluiceConfigError, type StoreRequest } from '../../src';
import { resolvePolicy } from '../../src/adapter';
import { leasing, resolveLease } from '../../src/resilience/token-lease';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore, noOutage } from './flaky-store';

/** A remote that is really an in-process store, counting its calls. */
function countingRemote() {
  const store = new MemoryStore();
  const remote = Object.assign(
    (request: StoreRequest) => {
      remote.calls++;
      return Promise.resolve(store.consumeSync(request));
    },
    { calls: 0 },
  );
  return remote;
}

const request = (key: string, cost = 1, rate = '100/1m'): StoreRequest => ({
  prefix: 'lease',
  key,
  policy: resolvePolicy({ algorithm: 'fixed-window', rate }),
  cost,
});

describe('token leasing', () => {
  test('one store call per lease of 10; never more than the limit; the last units taken one by one', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 10, 1000, clock, noOutage);
    const admitted: boolean[] = [];
    for (let i = 0; i < 30; i++) admitted.push((await consume(request('hot', 1, '25/1m'))).allowed);
    expect(admitted).toEqual([...new Array<boolean>(25).fill(true), ...new Array<boolean>(5).fill(false)]);
    // two leases of 10; a refused lease of 10, then the 5 left as one lease; a refused lease and
    // the request's own refused unit, whose refusal the last four reuse
    expect(remote.calls).toBe(2 + 2 + 2);
  });

  test('a refusal is reused until its retry time, for requests of at least its cost', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 10, 60_000, clock, noOutage);
    // The store decides on the fake clock too.
    const limited = (cost: number): StoreRequest => ({ ...request('hot', cost, '20/1m'), nowMs: clock() });
    for (let i = 0; i < 20; i++) await consume(limited(1));
    const calls = remote.calls;
    const first = await consume(limited(1));
    expect(first).toMatchObject({ allowed: false, reason: 'limited' });
    expect(remote.calls).toBe(calls + 2); // a refused lease, then the refused unit
    clock.advance(1000);
    const again = await consume(limited(2));
    expect(again).toMatchObject({ allowed: false, retryAfterMs: first.retryAfterMs - 1000 });
    expect(remote.calls).toBe(calls + 2);
    expect((await consume(limited(0))).allowed).toBe(true); // a peek always asks the store
    clock.advance(first.retryAfterMs - 1000); // the window is over: the store is asked again
    expect(await consume(limited(1))).toMatchObject({ allowed: true, remaining: 19 });
  });

  test('requests queued behind a refused fetch cost no more store calls', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 10, 60_000, clock, noOutage);
    const results = await Promise.all(Array.from({ length: 500 }, () => consume(request('hot', 1, '25/1m'))));
    expect(results.filter((r) => r.allowed)).toHaveLength(25);
    expect(remote.calls).toBe(6); // as one after another: leases of 10, 10 and 5, then one refusal
  });

  test('a flood: about one store call per `size` admissions', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 10, 1000, clock, noOutage);
    const results = await Promise.all(Array.from({ length: 100 }, () => consume(request('hot'))));
    expect(results.every((r) => r.allowed)).toBe(true);
    expect(remote.calls).toBeLessThanOrEqual(12); // concurrent requests share one lease fetch
  });

  test('local units are dropped after maxStaleMs', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 10, 1000, clock, noOutage);
    await consume(request('k'));
    expect(remote.calls).toBe(1);
    await consume(request('k'));
    expect(remote.calls).toBe(1);
    clock.advance(1000);
    const after = await consume(request('k'));
    expect(remote.calls).toBe(2);
    expect(after.remaining).toBe(100 - 20 + 9); // the store lost 8 stale units; 9 are local again
  });

  test('cost 0 always asks the store; a cost above the local units fetches a new lease', async () => {
    const clock = fakeClock();
    const remote = countingRemote();
    const consume = leasing(remote, 5, 1000, clock, noOutage);
    await consume(request('k')); // lease 5, 4 left locally
    await consume(request('k', 0));
    expect(remote.calls).toBe(2);
    expect((await consume(request('k', 5))).allowed).toBe(true);
    expect(remote.calls).toBe(3);
  });

  test.each([
    [{ size: 1 }, 'lease.size'],
    [{ size: 1000 }, 'lease.size'],
    [{ size: 5, stale: 1 }, 'lease'],
    ['big', 'lease'],
  ])('%j is a SluiceConfigError on %s', (value, option) => {
    const policy = resolvePolicy({ rate: '100/1m' });
    expect(() => resolveLease(value, policy, parseDuration)).toThrow(SluiceConfigError);
    expect(() => resolveLease(value, policy, parseDuration)).toThrow(
      new RegExp(`^${option.replace('.', '\\.')} `),
    );
  });

  test('leaky-bucket and queued policies cannot lease', () => {
    expect(() =>
      resolveLease(
        { size: 2 },
        resolvePolicy({ algorithm: 'leaky-bucket', rate: '10r/s', burst: 5 }),
        parseDuration,
      ),
    ).toThrow(/delayed/);
    expect(
      resolveLease({ size: 4, maxStaleMs: '2s' }, resolvePolicy({ rate: '100/1m' }), parseDuration),
    ).toEqual([4, 2000]);
  });
});

describe('token leasing while the store is away', () => {
  test('requests waiting on a lease fetch that failed are decided by onStoreError then, not by fetches one after another', async () => {
    const silent = new FlakyStore();
    silent.mode = 'hang'; // each call fails at `timeoutMs`
    const limiter = createLimiter({
      algorithm: 'fixed-window',
      rate: '100/1m',
      store: silent,
      lease: { size: 10 },
      timeoutMs: 50,
      onStoreError: 'fail-open',
    });
    const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('hot')));
    expect(decisions.map((d) => d.degraded)).toEqual(new Array(10).fill('fail-open'));
    // One fetch failed for all ten; before, each waiter fetched in turn until the circuit opened
    // (3 calls, the last waiters held three timeouts).
    expect(silent.calls).toBe(1);
  });
});
