import { createLimiter, SluiceConfigError, type Decision, type LimiterMetrics } from '@sluice/core';
import request from 'supertest';
import { fakeClock, type FakeClock } from '../../core/test/contract/fake-clock';
import { describeDelayContract } from './delay-contract';
import { describeKeyContract } from './key-contract';
import { describeRepliesContract } from './replies-contract';
import { describeRulesContract } from './rules-contract';
import { storeOptions, type StoreUnderTest } from './stores-under-test';
import { MOUNTS, type AdapterDriver, type ContractOptions, type Mount, type TestApp } from './drivers';

export type { StoreUnderTest } from './stores-under-test';

/**
 * The behaviour every adapter must have, written once and run against each framework major
 * (and, for the parts that touch state, each store). Drivers only map the framework.
 */
export function describeAdapterContract(driver: AdapterDriver, stores: readonly StoreUnderTest[]): void {
  describe(`adapter contract: ${driver.name}`, () => {
    let clock: FakeClock;
    const apps: TestApp[] = [];
    const serve = async (options: ContractOptions | ContractOptions[], mount?: Mount): Promise<TestApp> => {
      const app = await driver.serve(options, mount);
      apps.push(app);
      return app;
    };
    const get = (app: TestApp, path = '/', headers: Record<string, string> = {}) =>
      request(app.url).get(path).set(headers);

    beforeEach(() => {
      clock = fakeClock();
    });
    afterEach(async () => {
      jest.useRealTimers();
      for (const app of apps.splice(0)) await app.close();
    });

    describe.each(stores)('$name store', (under) => {
      const withStore = storeOptions(under, 'contract');

      test.each(MOUNTS)('admits, then limits with 429, Retry-After and a short body (%s)', async (mount) => {
        const app = await serve(withStore({ rate: '2/1m', clock }), mount);
        const first = await get(app);
        expect(first.status).toBe(200);
        expect(first.body).toEqual({ ok: true });
        expect(first.headers['ratelimit-policy']).toBe('"2/1m";q=2;w=60');
        expect(first.headers.ratelimit).toBe('"2/1m";r=1;t=30');
        expect((await get(app)).headers.ratelimit).toBe('"2/1m";r=0;t=60');

        const json = await get(app, '/', { Accept: 'application/json' });
        expect(json.status).toBe(429);
        expect(json.headers['retry-after']).toBe('30');
        expect(json.headers['content-type']).toMatch(/^application\/json/);
        expect(json.body).toEqual({
          error: 'rate_limited',
          message: 'Too many requests, retry in 30 s.',
          retryAfter: 30,
        });
        const text = await get(app);
        expect(text.status).toBe(429);
        expect(text.headers['content-type']).toMatch(/^text\/plain/);
        expect(text.text).toBe('Too many requests, retry in 30 s.\n');
        expect(app.handled).toBe(2);

        clock.advance(30_000);
        expect((await get(app)).status).toBe(200);
      });

      test("block: a blocked key gets 429, Retry-After the block's remaining time and RateLimit with 0 remaining, without reaching its limit", async () => {
        const app = await serve(withStore({ rate: '2/1m', clock, block: { duration: '10m', backoff: 2 } }));
        expect((await get(app)).status).toBe(200);
        expect((await get(app)).status).toBe(200);
        const refused = await get(app);
        expect(refused.status).toBe(429);
        expect(refused.headers['retry-after']).toBe('600');
        clock.advance(60_000);
        const blocked = await get(app, '/', { Accept: 'application/json' });
        expect(blocked.status).toBe(429);
        expect(blocked.headers['retry-after']).toBe('540');
        expect(blocked.headers.ratelimit).toBe('"2/1m";r=0;t=540');
        expect(blocked.body).toEqual({
          error: 'rate_limited',
          message: 'Too many requests, retry in 540 s.',
          retryAfter: 540,
        });
        expect(app.handled).toBe(2);
        // After the block, the limit (untouched by the block) admits; the next offence blocks twice as long.
        clock.advance(540_000);
        expect((await get(app)).status).toBe(200);
        expect((await get(app)).status).toBe(200);
        expect((await get(app)).headers['retry-after']).toBe('1200');
      });

      test('a request of cost 0 passes only while its key has a unit left, counted as any request', async () => {
        // What a metrics sink is told (`@sluice/metrics` counts and finds hot keys from it).
        const decided: Decision[] = [];
        const ignore = () => undefined;
        const sink: LimiterMetrics = {
          decided: (decision) => decided.push(decision),
          storeCall: ignore,
          storeError: ignore,
          storeUp: ignore,
          blockCacheHit: ignore,
          leaseCall: ignore,
        };
        const metrics = { limiter: () => sink };
        const items = driver.keyFromQuery('items') as (request: unknown) => unknown;
        const app = await serve(
          withStore({
            name: 'cart',
            rate: '2/1m',
            clock,
            metrics,
            cost: (req: unknown) => Number(items(req)),
          }),
        );
        const cart = async (n: number) => {
          const res = await get(app, `/?items=${n}`);
          return [res.status, res.headers.ratelimit, res.headers['retry-after']];
        };
        expect(await cart(0)).toEqual([200, '"2/1m";r=2;t=0', undefined]);
        expect(await cart(2)).toEqual([200, '"2/1m";r=0;t=60', undefined]);
        // Spent: refused as a request of cost 1 is; before, neither took anything.
        expect(await cart(0)).toEqual([429, '"2/1m";r=0;t=60', '30']);
        expect(await cart(1)).toEqual([429, '"2/1m";r=0;t=60', '30']);
        expect(app.handled).toBe(2);
        expect(decided.map((d) => [d.key, d.allowed])).toEqual([
          ['127.0.0.1', true],
          ['127.0.0.1', true],
          ['127.0.0.1', false],
          ['127.0.0.1', false],
        ]);
        clock.advance(30_000);
        expect(await cart(0)).toEqual([200, '"2/1m";r=1;t=30', undefined]);
        expect(await cart(1)).toEqual([200, '"2/1m";r=0;t=60', undefined]);
      });

      test('several limits: a request of cost 0 refused by its limit takes nothing from the others', async () => {
        const perSku = createLimiter(withStore({ rate: '3/1m', clock }) as never);
        const items = driver.keyFromQuery('items') as (request: unknown) => unknown;
        const app = await serve([
          { limiter: perSku, key: '$arg_sku_id' },
          withStore({ rate: '1/1m', clock, cost: (req: unknown) => Number(items(req)) }),
        ]);
        expect((await get(app, '/?sku_id=a&items=0')).status).toBe(200);
        expect((await get(app, '/?sku_id=a&items=1')).status).toBe(200);
        expect((await perSku.peek('a')).remaining).toBe(1);
        expect((await get(app, '/?sku_id=a&items=0')).status).toBe(429);
        expect((await perSku.peek('a')).remaining).toBe(1);
        expect(app.handled).toBe(2);
      });

      test('several limits: a request rejected by the second uses no unit of the first', async () => {
        const perIp = createLimiter(withStore({ rate: '3/1m', clock }) as never);
        const app = await serve([
          { limiter: perIp },
          withStore({ key: '$arg_sku_id', rate: '1/1m', clock, fallback: { body: { cached: true } } }),
        ]);
        expect((await get(app, '/?sku_id=a')).status).toBe(200);
        const ip = '127.0.0.1';
        expect((await perIp.peek(ip)).remaining).toBe(2);
        const degraded = await get(app, '/?sku_id=a');
        expect(degraded.status).toBe(200);
        expect(degraded.body).toEqual({ cached: true });
        expect((await perIp.peek(ip)).remaining).toBe(2);
        // The most restrictive limit is the one reported.
        const other = await get(app, '/?sku_id=b');
        expect(other.headers.ratelimit).toBe('"1/1m";r=0;t=60');
        expect((await perIp.peek(ip)).remaining).toBe(1);
        await get(app, '/?sku_id=c');
        const limited = await get(app, '/?sku_id=d');
        expect(limited.status).toBe(429);
        expect(limited.headers.ratelimit).toBe('"3/1m";r=0;t=60');
        expect(app.handled).toBe(3);
      });
    });

    describeRulesContract(driver, stores, { serve, get, clock: () => clock });

    describeKeyContract(driver, { serve, get, clock: () => clock });
    describeRepliesContract(driver, { serve, get, clock: () => clock });

    describeDelayContract({ serve, get, clock: () => clock });

    test.each(MOUNTS)(
      "a failure of the limiter itself (here its clock) goes to the framework's error handling (%s)",
      async (mount) => {
        // A key function that throws no longer fails the request (see the hostile-input contract).
        const clockBroke = () => {
          throw new Error('clock broke');
        };
        const app = await serve({ rate: '1/1m', clock: clockBroke }, mount);
        const res = await get(app);
        expect(res.status).toBe(500);
        expect(app.handled).toBe(0);
      },
    );

    describe('options', () => {
      test.each<[string, ContractOptions]>([
        ['rate', { rate: '6r/x' }],
        ['status', { rate: '6r/m', status: 200 }],
        ['key', { rate: '6r/m', key: '$nope' }],
        ['headers', { rate: '6r/m', headers: 'draft-9' }],
        ['trustProxy', { rate: '6r/m', trustProxy: 'proxy.example' }],
        ['bogus', { rate: '6r/m', bogus: 1 }],
        // JSON (a config file) can hold an own `__proto__`: an unknown option like any other (issue 16.10).
        ['__proto__', JSON.parse('{"rate":"1r/s","__proto__":{"x":1}}') as ContractOptions],
        ['constructor', JSON.parse('{"rate":"1r/s","constructor":1}') as ContractOptions],
        ['rules', { rules: [] }],
        ['rules', { rate: '6r/m', rules: [{ rate: '1r/s' }] }],
        ['rules[1].algorithm', { rules: [{ rate: '1r/s' }, { rate: '9/1h', algorithm: 'nope' }] }],
        ['rules[0].rate', { rules: [{ rate: '6r/x' }] }],
        ['burst', { rules: [{ rate: '1r/s' }], burst: 2 }],
        ['overrides', { rate: '6r/m', overrides: 'gold' }],
      ])('an invalid %s throws SluiceConfigError at creation, naming it', async (option, options) => {
        for (const mount of MOUNTS) {
          const attempt = driver.serve(options, mount);
          await expect(attempt).rejects.toBeInstanceOf(SluiceConfigError);
          await expect(attempt).rejects.toMatchObject({ option });
        }
      });
    });
  });
}
