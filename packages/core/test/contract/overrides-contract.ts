import { createLimiter, type Limiter, type LimiterEvents, type LimiterOptions, type Store } from '../../src';
import { fakeClock, type FakeClock } from './fake-clock';

let prefixes = 0;

/**
 * Per-key overrides, the same on every store: each key limited at its own rate, a change taking
 * effect on the next request, an invalid value leaving the key on the limiter's own rate.
 *
 * @param getStore - returns the store under test (called inside each test)
 */
export function describeOverridesContract(name: string, getStore: () => Store): void {
  describe(`per-key overrides: ${name}`, () => {
    let clock: FakeClock;
    beforeEach(() => {
      clock = fakeClock();
    });
    const make = (options: Omit<LimiterOptions, 'store' | 'clock'>): Limiter => {
      const limiter = createLimiter({
        store: getStore(),
        clock,
        prefix: `overrides-${++prefixes}`,
        onStoreError: 'fail-closed',
        timeoutMs: 10_000,
        ...options,
      });
      limiter.on('fallback', (d) => {
        throw new Error(`decided without the store: ${d.degraded}`);
      });
      return limiter;
    };
    const admitted = async (limiter: Limiter, key: string, n: number): Promise<number> => {
      let count = 0;
      for (let i = 0; i < n; i++) if ((await limiter.consume(key)).allowed) count++;
      return count;
    };

    test('two SKUs, one overridden: each is limited at its own rate', async () => {
      const limiter = make({ rate: '2/1m', overrides: { 'sku:1001': '10/1m' } });
      expect(await admitted(limiter, 'sku:1001', 15)).toBe(10);
      expect(await admitted(limiter, 'sku:2002', 15)).toBe(2);
      const d = await limiter.peek('sku:1001');
      expect(d.policy.source).toBe('10/1m');
      expect(d.limit).toBe(10);
      expect((await limiter.peek('sku:2002')).policy).toBe(limiter.policy);
    });

    test('mutating the object changes the next decision; a new rate starts the key fresh', async () => {
      const overrides: Record<string, string> = {};
      const limiter = make({ rate: '1/1m', overrides });
      expect(await admitted(limiter, 'sku:1', 3)).toBe(1);
      overrides['sku:1'] = '3/1m';
      expect(await admitted(limiter, 'sku:1', 5)).toBe(3);
      overrides['sku:1'] = '4/1m';
      expect(await admitted(limiter, 'sku:1', 5)).toBe(4);
      // Back to a rate seen before: that namespace's state is still there.
      overrides['sku:1'] = '3/1m';
      expect(await admitted(limiter, 'sku:1', 5)).toBe(0);
      delete overrides['sku:1'];
      expect(await admitted(limiter, 'sku:1', 3)).toBe(0);
    });

    test('a Map, and a function of the key and the context', async () => {
      const map = new Map([['vip', '5/1m']]);
      const fromMap = make({ rate: '1/1m', overrides: map });
      expect(await admitted(fromMap, 'vip', 6)).toBe(5);
      map.set('vip', '6/1m');
      expect(await admitted(fromMap, 'vip', 7)).toBe(6);

      const seen: unknown[] = [];
      const byFunction = make({
        rate: '1/1m',
        overrides: (key, context) => {
          seen.push(context);
          return key.startsWith('sku:') ? '3/1m' : undefined;
        },
      });
      expect(await byFunction.consume('sku:9', { context: { path: '/sku/9' } })).toMatchObject({ limit: 3 });
      expect(seen).toEqual([{ path: '/sku/9' }]);
      expect(await admitted(byFunction, 'user:1', 2)).toBe(1);
    });

    test('an override with several rates limits the key by all of them', async () => {
      const limiter = make({ rate: '1/1m', overrides: { busy: ['3/1s', '4/1m'] } });
      expect(await admitted(limiter, 'busy', 5)).toBe(3);
      clock.advance(1000);
      expect(await admitted(limiter, 'busy', 5)).toBe(1);
      const d = await limiter.peek('busy');
      expect(d.limits?.map((l) => l.policy.source)).toEqual(['3/1s', '4/1m']);
    });

    test('an invalid value at a request: the default rate decides, overrideError reports it once', async () => {
      const overrides: Record<string, unknown> = {};
      const limiter = make({ rate: '2/1m', overrides: overrides as Record<string, string> });
      const errors: Array<LimiterEvents['overrideError']> = [];
      limiter.on('overrideError', (event) => errors.push(event));
      overrides['sku:1'] = '6r/x';
      expect(await admitted(limiter, 'sku:1', 4)).toBe(2);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ key: 'sku:1', value: '6r/x' });
      expect(errors[0]?.error.option).toBe('overrides["sku:1"]');
      expect(errors[0]?.error.message).toMatch(/unit must be r\/s or r\/m/);
      overrides['sku:1'] = { limit: 0, window: '1m' };
      await limiter.consume('sku:1');
      expect(errors).toHaveLength(2);
    });

    test('a key named like an Object.prototype member is not an override', async () => {
      const limiter = make({ rate: '1/1m', overrides: { 'sku:1': '5/1m' } });
      for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        expect(await admitted(limiter, key, 2)).toBe(1);
      }
    });

    test('reset forgets an overridden key', async () => {
      const limiter = make({ rate: '1/1m', overrides: { k: '2/1m' } });
      expect(await admitted(limiter, 'k', 3)).toBe(2);
      await limiter.reset('k');
      expect(await admitted(limiter, 'k', 3)).toBe(2);
    });
  });
}
