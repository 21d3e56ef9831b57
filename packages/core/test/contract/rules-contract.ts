import {
  ALGORITHMS,
  createLimiter,
  type AlgorithmName,
  type Decision,
  type Limiter,
  type LimiterOptions,
  type LimiterRulesOptions,
  type Store,
} from '../../src';
import { fakeClock, type FakeClock } from './fake-clock';

let prefixes = 0;

/**
 * Several limits on one key, all or nothing: what every store with `consumeRules` must do, run
 * unchanged against MemoryStore and RedisStore (standalone and Cluster).
 *
 * @param getStore - returns the store under test (called inside each test)
 */
export function describeRulesContract(name: string, getStore: () => Store): void {
  describe(`several limits: ${name}`, () => {
    let clock: FakeClock;
    const undecided: string[] = [];
    beforeEach(() => {
      clock = fakeClock();
    });
    afterEach(() => {
      expect(undecided).toEqual([]);
      undecided.length = 0;
    });
    const make = (
      options: Omit<LimiterOptions, 'store' | 'clock'> | Omit<LimiterRulesOptions, 'store' | 'clock'>,
    ): Limiter => {
      const limiter = createLimiter({
        store: getStore(),
        clock,
        prefix: `rules-${++prefixes}`,
        // The store itself must decide: a failed call must fail the test.
        onStoreError: 'fail-closed',
        timeoutMs: 10_000,
        ...options,
      });
      limiter.on('fallback', (d) => undecided.push(`${d.degraded} for key ${JSON.stringify(d.key)}`));
      return limiter;
    };
    const burst = (limiter: Limiter, n: number): Promise<Decision[]> =>
      Promise.all(Array.from({ length: n }, () => limiter.consume('k')));
    const leaky = (algorithm: AlgorithmName): Partial<LimiterOptions> =>
      algorithm === 'leaky-bucket' ? { nodelay: true } : {};

    describe.each(ALGORITHMS)('%s', (algorithm) => {
      test.each([
        ['per second first', ['5/1s', '7/1m'], 1],
        ['per minute first', ['7/1m', '5/1s'], 0],
      ] as const)(
        'limits 5/s and 7/min (%s): 20 requests at once admit exactly 5, and the per-minute limit has spent 5, not 20',
        async (_order, rate, perMinute) => {
          const limiter = make({ algorithm, rate, ...leaky(algorithm) });
          const decisions = await burst(limiter, 20);
          expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
          const look = await limiter.peek('k');
          expect(look.limits?.[perMinute]).toMatchObject({ limit: 7, remaining: 2 });
          expect(look.limits?.[1 - perMinute]).toMatchObject({ limit: 5, remaining: 0 });

          // Two seconds later the per-second limit is full again; the per-minute one has 2 left.
          clock.advance(2000);
          const later = await burst(limiter, 5);
          expect(later.filter((d) => d.allowed)).toHaveLength(2);
          const refused = later.find((d) => !d.allowed) as Decision;
          expect(refused).toMatchObject({ reason: 'limited', limit: 7, remaining: 0 });
          expect(refused.policy).toBe(limiter.policies[perMinute]);
          expect(refused.retryAfterMs).toBeGreaterThan(2000);
        },
      );
    });

    test('a decision reports the deciding rule, and every rule in limits', async () => {
      const limiter = make({ rate: ['10/1s', '3/1m'] });
      const first = await limiter.consume('k');
      // Admitted: the most restrictive rule (fewest remaining) is reported.
      expect(first).toMatchObject({ allowed: true, limit: 3, remaining: 2, key: 'k' });
      expect(first.policy).toBe(limiter.policies[1]);
      expect(first.limits).toEqual([
        { policy: limiter.policies[0], limit: 10, remaining: 9, resetMs: expect.any(Number) },
        { policy: limiter.policies[1], limit: 3, remaining: 2, resetMs: expect.any(Number) },
      ]);
      await limiter.consume('k', { cost: 2 });
      const refused = await limiter.consume('k');
      expect(refused).toMatchObject({ allowed: false, reason: 'limited', limit: 3, remaining: 0 });
      expect(refused.policy.source).toBe('3/1m');
      expect(refused.limits?.map((l) => l.remaining)).toEqual([7, 0]);
    });

    test('on rejections by several rules, the longest retry is reported', async () => {
      const limiter = make({ rate: ['2/1s', '2/1m'] });
      await burst(limiter, 2);
      const refused = await limiter.consume('k');
      expect(refused.policy.source).toBe('2/1m');
      expect(refused.retryAfterMs).toBeGreaterThan(1000);
    });

    test('a cost one rule can never pass is rejected as such, and takes nothing from the others', async () => {
      const limiter = make({ rate: ['10/1s', '3/1m'] });
      const d = await limiter.consume('k', { cost: 5 });
      expect(d).toMatchObject({ allowed: false, reason: 'cost-exceeds-capacity', retryAfterMs: 0, limit: 3 });
      expect((await limiter.peek('k')).limits?.map((l) => l.remaining)).toEqual([10, 3]);
    });

    test('peek and cost 0 look without taking; reset forgets every rule', async () => {
      const limiter = make({ rate: ['10/1s', '3/1m'] });
      await limiter.consume('k', { cost: 2 });
      expect((await limiter.peek('k')).limits?.map((l) => l.remaining)).toEqual([8, 1]);
      expect((await limiter.consume('k', { cost: 0 })).limits?.map((l) => l.remaining)).toEqual([8, 1]);
      await limiter.reset('k');
      expect((await limiter.peek('k')).limits?.map((l) => l.remaining)).toEqual([10, 3]);
      expect(await limiter.peek('fresh')).toMatchObject({ allowed: true, remaining: 3 });
    });

    test('rules with their own algorithms, and the longest delay of all', async () => {
      const limiter = make({
        rules: [
          { rate: '10r/s', algorithm: 'leaky-bucket', burst: 5 },
          { rate: '4/1m', algorithm: 'sliding-log' },
          { rate: '20/1m', algorithm: 'fixed-window' },
        ],
      });
      const decisions: Decision[] = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('k'));
      // The leaky bucket delays the excess (100 ms per request at 10r/s), the sliding log stops at 4.
      expect(decisions.map((d) => [d.allowed, d.delayMs])).toEqual([
        [true, 0],
        [true, 100],
        [true, 200],
        [true, 300],
        [false, 0],
      ]);
      expect(decisions[4]?.policy.algorithm).toBe('sliding-log');
      // The refused request left the leaky bucket and the window as they were.
      expect((await limiter.peek('k')).limits?.map((l) => l.remaining)).toEqual([2, 0, 16]);
    });

    test('keys and prefixes stay apart, and a single-rule limiter on the same prefix keeps its own state', async () => {
      const several = make({ rate: ['1/1m', '5/1m'] });
      expect((await several.consume('a')).allowed).toBe(true);
      expect((await several.consume('a')).allowed).toBe(false);
      expect((await several.consume('b')).allowed).toBe(true);
      const single = createLimiter({
        rate: '1/1m',
        store: getStore(),
        clock,
        prefix: `rules-${prefixes}`,
        onStoreError: 'fail-closed',
        timeoutMs: 10_000,
      });
      expect((await single.consume('a')).allowed).toBe(true);
    });
  });
}
