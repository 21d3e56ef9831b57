import type { FakeClock } from '../../core/test/contract/fake-clock';
import type { ContractHelpers } from './contract-helpers';
import { MOUNTS, type AdapterDriver } from './drivers';
import { storeOptions, type StoreUnderTest } from './stores-under-test';

/**
 * The adapter contract's rules and overrides, on each store: several rules of their own
 * algorithms, and `overrides` from the framework's request, alone and among several limits.
 */
export function describeRulesContract(
  driver: AdapterDriver,
  stores: readonly StoreUnderTest[],
  { serve, get, clock: currentClock }: ContractHelpers,
): void {
  describe.each(stores)('rules and overrides, $name store', (under) => {
    const withStore = storeOptions(under, 'contract');
    let clock: FakeClock;
    beforeEach(() => {
      clock = currentClock();
    });

    test.each(MOUNTS)(
      'rules: each with its own algorithm, every one listed in draft-8 (%s)',
      async (mount) => {
        const rules = [{ rate: '2/1m' }, { algorithm: 'fixed-window', rate: '3/1h' }];
        const app = await serve(withStore({ rules, clock }), mount);
        const policy = '"2/1m";q=2;w=60, "3/1h";q=3;w=3600';
        const first = await get(app);
        expect([first.status, first.headers['ratelimit-policy']]).toEqual([200, policy]);
        expect(first.headers.ratelimit).toBe('"2/1m";r=1;t=30, "3/1h";r=2;t=3600');
        expect((await get(app)).headers.ratelimit).toBe('"2/1m";r=0;t=60, "3/1h";r=1;t=3600');
        const perMinute = await get(app);
        expect([perMinute.status, perMinute.headers['retry-after']]).toEqual([429, '30']);
        // The refused request took nothing from the hourly rule.
        expect(perMinute.headers.ratelimit).toBe('"2/1m";r=0;t=60, "3/1h";r=1;t=3600');

        clock.advance(60_000);
        expect((await get(app)).status).toBe(200);
        const perHour = await get(app);
        expect([perHour.status, perHour.headers['retry-after']]).toEqual([429, '3540']);
        expect(perHour.headers['ratelimit-policy']).toBe(policy);
        expect(app.handled).toBe(3);
      },
    );

    test.each(MOUNTS)("overrides: a function of the key and the framework's request (%s)", async (mount) => {
      const app = await serve(
        withStore({ rate: '1/1m', clock, overrides: driver.tierOverrides('x-tier', '3/1m') }),
        mount,
      );
      const gold = { 'X-Tier': 'gold' };
      expect((await get(app)).status).toBe(200);
      expect((await get(app)).status).toBe(429);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(app, '/', gold)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect((await get(app, '/', gold)).headers['ratelimit-policy']).toBe('"3/1m";q=3;w=60');
    });

    test.each(MOUNTS)(
      'overrides: the look-ahead of several limits sees the request as the consume does (%s)',
      async (mount) => {
        // Issue 16.5: a gold user's 10 requests (2 admitted) must not spend 10 SKU units.
        const app = await serve(
          [
            withStore({ key: 'sku', rate: '10/1m', algorithm: 'fixed-window', clock, prefix: 'sku' }),
            withStore({
              key: '$http_user_id',
              rate: '1/1m',
              clock,
              prefix: 'user',
              overrides: driver.tierOverrides('x-tier', '2/1m'),
            }),
          ],
          mount,
        );
        const gold = { 'X-Tier': 'gold', 'User-Id': 'g' };
        const statuses = [];
        for (let i = 0; i < 10; i++) statuses.push((await get(app, '/', gold)).status);
        expect(statuses).toEqual([200, 200, ...Array(8).fill(429)]);
        expect((await get(app, '/', { 'User-Id': 'next' })).status).toBe(200);
        expect(app.handled).toBe(3);
      },
    );
  });
}
