import { createLimiter, SluiceConfigError, type Decision, type LimiterMetrics } from '@sluice/core';
import type { LimitEvent } from '@sluice/core/adapter';
import request from 'supertest';
import { FAKE_EPOCH, fakeClock, type FakeClock } from '../../core/test/contract/fake-clock';
import { describeDelayContract } from './delay-contract';
import { describeKeyContract } from './key-contract';
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

    describe.each(stores)('rules and overrides, $name store', (under) => {
      const withStore = storeOptions(under, 'contract');

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

      test.each(MOUNTS)(
        "overrides: a function of the key and the framework's request (%s)",
        async (mount) => {
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
        },
      );

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

    describeKeyContract(driver, { serve, get, clock: () => clock });

    describe('replies', () => {
      const RATE_HEADERS = [
        'ratelimit',
        'ratelimit-policy',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
      ];
      test.each<[string, unknown, Record<string, string>]>([
        ['draft-8', undefined, { 'ratelimit-policy': '"6r/m";q=1;w=10', ratelimit: '"6r/m";r=0;t=10' }],
        ['draft-8', 'draft-8', { 'ratelimit-policy': '"6r/m";q=1;w=10', ratelimit: '"6r/m";r=0;t=10' }],
        ['draft-7', 'draft-7', { 'ratelimit-policy': '1;w=10', ratelimit: 'limit=1, remaining=0, reset=10' }],
        [
          'draft-6',
          'draft-6',
          {
            'ratelimit-policy': '1;w=10',
            'ratelimit-limit': '1',
            'ratelimit-remaining': '0',
            'ratelimit-reset': '10',
          },
        ],
        [
          'legacy',
          'legacy',
          {
            'x-ratelimit-limit': '1',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': String((FAKE_EPOCH + 10_000) / 1000),
          },
        ],
        ['false', false, {}],
      ])('headers %s (%p): exact strings', async (_name, headers, expected) => {
        const app = await serve({ rate: '6r/m', clock, ...(headers === undefined ? {} : { headers }) });
        const res = await get(app);
        const sent = Object.fromEntries(
          RATE_HEADERS.filter((h) => h in res.headers).map((h) => [h, res.headers[h]]),
        );
        expect(sent).toEqual(expected);
        const limited = await get(app);
        expect(limited.status).toBe(429);
        expect(limited.headers['retry-after']).toBe('10');
      });

      test('status 503 as nginx; a cost that can never pass gets no Retry-After', async () => {
        const nginx = await serve({ rate: '6r/m', clock, status: 503 });
        await get(nginx);
        const unavailable = await get(nginx);
        expect(unavailable.status).toBe(503);
        expect(unavailable.headers['retry-after']).toBe('10');
        const heavy = await serve({ rate: '6r/m', clock, cost: 2 });
        const never = await get(heavy, '/', { Accept: 'application/json' });
        expect(never.status).toBe(429);
        expect(never.headers['retry-after']).toBeUndefined();
        expect(never.body.error).toBe('cost_exceeds_capacity');
      });

      test('fallback: a static degraded reply instead of the rejection', async () => {
        const app = await serve({
          rate: '1/1m',
          clock,
          fallback: { body: { cached: true }, headers: { 'X-Cache': 'HIT' } },
        });
        await get(app);
        const degraded = await get(app);
        expect(degraded.status).toBe(200);
        expect(degraded.body).toEqual({ cached: true });
        expect(degraded.headers['content-type']).toMatch(/^application\/json/);
        expect(degraded.headers['x-cache']).toBe('HIT');
        // One rule for every reply to a refused request: Retry-After, whatever the status.
        expect(degraded.headers['retry-after']).toBe('60');
        expect(degraded.headers.ratelimit).toBe('"1/1m";r=0;t=60');
        const html = await serve({
          rate: '1/1m',
          clock,
          fallback: { status: 503, body: '<p>busy</p>', type: 'text/html; charset=utf-8' },
        });
        await get(html);
        const busy = await get(html);
        expect([busy.status, busy.text, busy.headers['content-type'], busy.headers['retry-after']]).toEqual([
          503,
          '<p>busy</p>',
          'text/html; charset=utf-8',
          '60',
        ]);
        expect(app.handled + html.handled).toBe(2);
      });

      test.each(MOUNTS)('fallback: the framework handler receives the decision (%s)', async (mount) => {
        const app = await serve({ rate: '1/1m', clock, fallback: driver.fallbackHandler(200) }, mount);
        await get(app);
        const handled = await get(app);
        expect(handled.status).toBe(200);
        expect(handled.body).toEqual({ handled: true, remaining: 0 });
        expect(app.handled).toBe(1);
      });

      test('dryRun with block: a blocked key passes, reported as rejected (reason blocked)', async () => {
        const events: Array<LimitEvent<unknown>> = [];
        const app = await serve({
          rate: '1/1m',
          clock,
          dryRun: true,
          block: { duration: '10m' },
          onLimit: (e: LimitEvent<unknown>) => events.push(e),
        });
        const statuses = [];
        for (let i = 0; i < 3; i++)
          statuses.push([(await get(app)).status, (await get(app)).headers['sluice-dry-run']]);
        expect(statuses.map(([status]) => status)).toEqual([200, 200, 200]);
        expect(app.handled).toBe(6);
        expect(events.map((e) => [e.dryRun, e.decision.allowed, e.decision.reason])).toEqual([
          [true, false, 'limited'],
          ...Array.from({ length: 4 }, () => [true, false, 'blocked']),
        ]);
      });

      test('dryRun never rejects, but reports with a header and events', async () => {
        const events: Array<LimitEvent<unknown>> = [];
        const app = await serve({
          rate: '1/1m',
          clock,
          dryRun: true,
          onLimit: (e: LimitEvent<unknown>) => events.push(e),
        });
        const statuses = [];
        for (let i = 0; i < 3; i++) {
          const res = await get(app);
          statuses.push([res.status, res.headers['sluice-dry-run'], res.headers['retry-after']]);
        }
        expect(statuses).toEqual([
          [200, undefined, undefined],
          [200, 'rejected', undefined],
          [200, 'rejected', undefined],
        ]);
        expect(app.handled).toBe(3);
        expect(events.map((e) => [e.dryRun, e.decision.allowed])).toEqual([
          [true, false],
          [true, false],
        ]);
      });
    });

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
