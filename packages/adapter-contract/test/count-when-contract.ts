import { get as httpGet } from 'node:http';
import { createLimiter, type Limiter, type LimiterMetrics } from '@sluice/core';
import { fakeClock, type FakeClock } from '../../core/test/contract/fake-clock';
import type { AdapterDriver, ContractOptions, Outcome, TestApp } from './drivers';
import { storeOptions, type StoreUnderTest } from './stores-under-test';

/** Waits (on the loop, never a timer) until `read` resolves `expected`: a give-back lands after the response. */
async function eventually(read: () => Promise<number>, expected: number): Promise<void> {
  const deadline = Date.now() + 5000;
  let seen = await read();
  while (seen !== expected) {
    if (Date.now() > deadline) throw new Error(`expected ${expected}, still ${seen}`);
    await new Promise((resolve) => setImmediate(resolve));
    seen = await read();
  }
}

/** Resolves the status of `GET /?outcome=…` (a fresh connection each, as a login form posts). */
function ask(app: TestApp, outcome: Outcome): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(`${app.url}/?outcome=${outcome}`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    request.on('error', reject);
  });
}

/** A request whose handler never answers (`hang`): the client leaves once the handler has it. */
async function leave(app: TestApp): Promise<void> {
  const before = app.handled;
  const request = httpGet(`${app.url}/?outcome=hang`, { agent: false });
  request.on('error', () => undefined); // the reset is the test's own doing
  const deadline = Date.now() + 5000;
  while (app.handled === before) {
    if (Date.now() > deadline) throw new Error('the handler never got the request');
    await new Promise((resolve) => setImmediate(resolve));
  }
  request.destroy();
}

/**
 * `countWhen` on every adapter and store: units taken at admission, given back once after the
 * response when it does not count — `'failed'`, `'succeeded'`, the function form with the
 * framework's response, a handler that throws, a client that leaves, several limits, dry run.
 */
export function describeCountWhen(driver: AdapterDriver, stores: readonly StoreUnderTest[]): void {
  describe(`countWhen: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    let clock: FakeClock;
    beforeEach(() => {
      clock = fakeClock();
    });
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });

    describe.each(stores)('$name store', (under) => {
      const withStore = storeOptions(under, 'count-when');
      const limiterOf = (options: ContractOptions): Limiter => createLimiter(withStore(options) as never);
      const serve = async (
        options: ContractOptions | ContractOptions[],
        on: 'app' | 'route' = 'app',
      ): Promise<TestApp> => {
        const app = await driver.serveOutcomes(options, on);
        apps.push(app);
        return app;
      };
      const left = (limiter: Limiter) => async () => (await limiter.peek('login')).remaining;

      test.each(['app', 'route'] as const)(
        "'failed', limits on the %s: four failures then a success leave one unit, not none",
        async (on) => {
          const refunded: string[] = [];
          const ignore = () => undefined;
          const sink: LimiterMetrics = {
            decided: ignore,
            storeCall: ignore,
            storeError: ignore,
            storeUp: ignore,
            blockCacheHit: ignore,
            leaseCall: ignore,
            refunded: () => refunded.push('login'),
          };
          const limiter = limiterOf({ rate: '5/15m', clock, metrics: { limiter: () => sink } });
          const app = await serve({ limiter, key: 'login', countWhen: 'failed' }, on);
          for (let i = 0; i < 4; i++) expect(await ask(app, 'fail')).toBe(401);
          expect(await ask(app, 'ok')).toBe(200);
          await eventually(left(limiter), 1);
          expect(refunded).toEqual(['login']);
          expect(await ask(app, 'fail')).toBe(401);
          expect(await ask(app, 'fail')).toBe(429);
          expect(app.handled).toBe(6);
        },
      );

      test("'failed': a handler that throws and a client that leaves count", async () => {
        const limiter = limiterOf({ rate: '5/15m', clock });
        const app = await serve({ limiter, key: 'login', countWhen: 'failed' });
        expect(await ask(app, 'throw')).toBe(500);
        await leave(app);
        expect(await ask(app, 'ok')).toBe(200);
        await eventually(left(limiter), 3);
      });

      test("'succeeded': failures, throws and clients that leave are given back", async () => {
        const limiter = limiterOf({ rate: '5/15m', clock });
        const app = await serve({ limiter, key: 'login', countWhen: 'succeeded' });
        expect(await ask(app, 'ok')).toBe(200);
        expect(await ask(app, 'fail')).toBe(401);
        expect(await ask(app, 'throw')).toBe(500);
        await leave(app);
        await eventually(left(limiter), 4);
      });

      test('a function gets the framework’s request and response', async () => {
        const limiter = limiterOf({ rate: '5/15m', clock });
        const app = await serve({ limiter, key: 'login', countWhen: driver.countStatus(401) });
        expect(await ask(app, 'ok')).toBe(200);
        expect(await ask(app, 'fail')).toBe(401);
        await eventually(left(limiter), 4);
      });

      test('several limits: only the limit with countWhen gives back', async () => {
        const perClient = limiterOf({ rate: '10/1m', clock });
        const login = limiterOf({ rate: '5/15m', clock });
        const app = await serve([
          { limiter: perClient, key: 'login' },
          { limiter: login, key: 'login', countWhen: 'failed' },
        ]);
        expect(await ask(app, 'ok')).toBe(200);
        expect(await ask(app, 'fail')).toBe(401);
        await eventually(left(login), 4);
        expect((await perClient.peek('login')).remaining).toBe(8);
      });

      test('dry run: what was taken is given back; over the limit nothing was', async () => {
        const limiter = limiterOf({ rate: '1/15m', clock });
        const app = await serve({ limiter, key: 'login', countWhen: 'failed', dryRun: true });
        expect(await ask(app, 'ok')).toBe(200);
        await eventually(left(limiter), 1);
        expect(await ask(app, 'fail')).toBe(401);
        // Over the limit, let through: it took nothing, and gives nothing back.
        expect(await ask(app, 'ok')).toBe(200);
        await eventually(left(limiter), 0);
      });
    });
  });
}
