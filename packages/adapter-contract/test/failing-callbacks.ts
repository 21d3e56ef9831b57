import { SluiceConfigError } from '@sluice/core';
import { FALLBACK_ERROR, type AdapterDriver, type FallbackFailure } from './drivers';
import { MOUNTS, useHostileApps } from './hostile-harness';

/**
 * User functions that throw or lie, run on each framework major: a `cost`, `key` or `skip`
 * function, a fallback handler. None may cause a 500, a hanging request, an unhandled rejection
 * or a free pass; each failure reaches `onCallbackError`.
 */
export function describeFailingCallbacks(driver: AdapterDriver): void {
  describe(`failing callbacks: ${driver.name}`, () => {
    const h = useHostileApps(driver);
    const { serve, send } = h;

    describe('a cost function that fails is counted at the default cost 1, never free, never a 500', () => {
      const broken: Array<[string, () => unknown]> = [
        [
          'throws',
          () => {
            throw new Error('no price');
          },
        ],
        ['rejects', () => Promise.reject(new Error('no price'))],
        ['returns NaN', () => NaN],
        ['returns -1', () => -1],
        ['returns 1.5', () => 1.5],
        ['returns Infinity', () => Infinity],
        ['returns 1e9 + 1', () => 1e9 + 1],
        ['returns "2"', () => '2'],
      ];
      test.each(broken)('%s', async (_name, cost) => {
        const app = await serve({ rate: '2/1m', clock: h.clock, cost });
        expect([(await send(app)).status, (await send(app)).status, (await send(app)).status]).toEqual([
          200, 200, 429,
        ]);
        expect(app.handled).toBe(2);
        expect(h.failures.map((f) => [f.source, f.key, f.error instanceof SluiceConfigError])).toEqual(
          Array(3).fill(['cost', '127.0.0.1', true]),
        );
      });

      test.each(MOUNTS)('on a decorated method too (%s)', async (mount) => {
        const app = await serve({ rate: '1/1m', clock: h.clock, cost: () => NaN }, mount);
        expect([(await send(app)).status, (await send(app)).status]).toEqual([200, 429]);
      });
    });

    describe('a key function that fails: the request has no key (onMissingKey decides)', () => {
      test.each(MOUNTS)('one that throws is skipped by default, refused with reject (%s)', async (mount) => {
        const key = () => {
          throw new Error('no session');
        };
        const skipped = await serve({ key, rate: '1/1m', clock: h.clock }, mount);
        for (let i = 0; i < 2; i++) expect((await send(skipped)).status).toBe(200);
        const refused = await serve({ key, rate: '1/1m', clock: h.clock, onMissingKey: 'reject' }, mount);
        const res = await send(refused, { headers: { Accept: 'application/json' } });
        expect([res.status, res.body.error, refused.handled]).toEqual([400, 'missing_key', 0]);
        expect(h.failures.map((f) => [f.source, f.error.message])).toEqual(
          Array(3).fill([
            'key',
            'key "Error: no session": the function threw; the request is treated as having no key (onMissingKey decides)',
          ]),
        );
      });

      test("the framework's query for ?sku_id=a&sku_id=b (an array) is no key, never 'a,b'", async () => {
        const app = await serve({
          key: driver.keyFromQuery('sku_id'),
          rate: '1/1m',
          clock: h.clock,
          onMissingKey: 'shared',
        });
        expect((await send(app, { path: '/?sku_id=a' })).status).toBe(200);
        expect((await send(app, { path: '/?sku_id=a' })).status).toBe(429);
        expect((await send(app, { path: '/?sku_id=a&sku_id=b' })).status).toBe(200);
        expect((await send(app, { path: '/?sku_id=c&sku_id=d' })).status).toBe(429);
        expect(h.failures.map((f) => [f.source, f.error.value])).toEqual([
          ['key', ['a', 'b']],
          ['key', ['c', 'd']],
        ]);
      });
    });

    test('a skip function that throws: the request is not skipped', async () => {
      const skip = () => {
        throw new Error('flag service down');
      };
      const app = await serve({ rate: '1/1m', clock: h.clock, skip });
      expect([(await send(app)).status, (await send(app)).status]).toEqual([200, 429]);
      expect(h.failures.map((f) => f.source)).toEqual(['skip', 'skip']);
    });

    describe('a fallback handler that fails: the client still gets a valid reply', () => {
      const unhandled: unknown[] = [];
      const record = (reason: unknown) => unhandled.push(reason);
      beforeEach(() => process.on('unhandledRejection', record));
      afterEach(() => {
        process.off('unhandledRejection', record);
        expect(unhandled.splice(0)).toEqual([]);
      });

      const before: FallbackFailure[] = ['throw', 'reject', 'throw-after-headers'];
      test.each(MOUNTS.flatMap((mount) => before.map((how) => [how, mount] as const)))(
        'one that fails before replying (%s, %s): the default rejection',
        async (how, mount) => {
          const app = await serve(
            { rate: '1/1m', clock: h.clock, fallback: driver.failingFallback(how) },
            mount,
          );
          await send(app);
          const res = await send(app, { headers: { Accept: 'application/json' } });
          expect(res.status).toBe(429);
          expect(res.headers['retry-after']).toBe('60');
          expect(res.headers.ratelimit).toBe('"1/1m";r=0;t=60');
          expect(res.headers['x-cache']).toBeUndefined();
          expect(res.body).toEqual({
            error: 'rate_limited',
            message: 'Too many requests, retry in 60 s.',
            retryAfter: 60,
          });
          expect(app.handled).toBe(1);
          expect(h.failures.map((f) => [f.source, f.key, (f.error.cause as Error).message])).toEqual([
            ['fallback', '127.0.0.1', FALLBACK_ERROR],
          ]);
          // The app is still well: the next client is served.
          h.clock.advance(60_000);
          expect((await send(app)).status).toBe(200);
        },
      );

      if (driver.rawResponse !== false)
        test.each(MOUNTS)(
          'one that fails mid-reply (%s): the response is ended, never left hanging',
          async (mount) => {
            const app = await serve(
              { rate: '1/1m', clock: h.clock, fallback: driver.failingFallback('throw-mid-reply') },
              mount,
            );
            await send(app);
            const res = await send(app);
            expect([res.status, res.text]).toEqual([200, 'partial']);
            expect(h.failures.map((f) => f.source)).toEqual(['fallback']);
          },
        );

      test('a static fallback that cannot be sent is refused at creation, on every mount', async () => {
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        for (const fallback of [
          { body: circular },
          { body: 1n },
          { body: 'x', headers: { 'X-A': 'a\r\nb' } },
        ]) {
          for (const mount of MOUNTS) {
            await expect(driver.serve({ rate: '1/1m', fallback }, mount)).rejects.toBeInstanceOf(
              SluiceConfigError,
            );
          }
        }
      });
    });
  });
}
