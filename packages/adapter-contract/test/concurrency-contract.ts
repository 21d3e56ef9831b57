import { Agent } from 'node:http';
import {
  createConcurrencyLimiter,
  MemoryStore,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
} from '@sluice/core';
import { fakeClock } from '../../core/test/contract/fake-clock';
import type { ConcurrencyDriver, ConcurrencyLimits } from './concurrency-drivers';
import { Handlers, send, until, type Reply, type Sent } from './concurrency-harness';
import type { TestApp } from './drivers';
import { testPermitsBack } from './permits-back';
import type { StoreUnderTest } from './stores-under-test';

/** The leak test: requests (unless a run sets fewer), sent by this many clients at once. */
const MIXED_REQUESTS = 10_000;
const MIXED_CLIENTS = 48;

/** How a run of the contract differs. */
export interface ConcurrencyContractOptions {
  /** Requests of the leak test. @defaultValue 10 000 */
  readonly mixedRequests?: number;
}

/** `concurrencyLimit` on every adapter: permits before the handler, back exactly once, whatever happens. */
export function describeConcurrencyContract(
  driver: ConcurrencyDriver,
  stores: readonly StoreUnderTest[],
  { mixedRequests = MIXED_REQUESTS }: ConcurrencyContractOptions = {},
): void {
  describe(`concurrency contract: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    let handlers: Handlers;
    beforeEach(() => {
      handlers = new Handlers();
    });
    afterEach(async () => {
      handlers.openAll();
      for (const app of apps.splice(0)) await app.close();
    });
    const serve = async (limits: ConcurrencyLimits): Promise<TestApp> => {
      const app = await driver.serve(limits, handlers.work);
      apps.push(app);
      return app;
    };
    const started = (path: string) => until(() => handlers.started.includes(path), `${path} runs`);

    describe.each(stores)('$name store', (under) => {
      let prefixes = 0;
      const limiterOf = (
        options: Omit<ConcurrencyLimiterOptions, 'store' | 'prefix'>,
      ): ConcurrencyLimiter => {
        const store = under.store();
        // Redis: every decision from Redis, not the insurance count, however loaded the machine.
        const shared =
          store === undefined ? {} : { store, prefix: `conc-${driver.name}-${++prefixes}`, timeoutMs: 5000 };
        return createConcurrencyLimiter({ ...options, ...shared });
      };
      /** Nothing held, nothing waiting, here or in the store. */
      const noPermitLeft = async (limiter: ConcurrencyLimiter, keys: readonly string[]): Promise<void> => {
        await until(
          () => limiter.stats().inFlight === 0 && limiter.stats().queued === 0,
          'every permit is back',
        );
        // A shared store hears of the last releases a round trip later.
        for (const key of keys)
          await until(async () => (await limiter.inFlight(key)) === 0, `key ${key} is free`);
      };

      test('a second request of a key is refused while the first runs; another key passes', async () => {
        const limiter = limiterOf({ max: 1 });
        const app = await serve({ concurrency: { limiter, key: '$http_user_id' } });
        const first = send(app, '/wait/1', { 'user-id': 'u1' });
        await started('/wait/1');
        const refused = await send(app, '/', { 'user-id': 'u1', Accept: 'application/json' }).reply;
        expect(refused?.status).toBe(429);
        // No queue: nothing measured to promise a time by.
        expect(refused?.headers['retry-after']).toBeUndefined();
        expect(JSON.parse(refused?.body ?? '')).toEqual({
          error: 'too_many_in_flight',
          message: 'Too many requests in progress.',
        });
        expect((await send(app, '/', { 'user-id': 'u2' }).reply)?.status).toBe(200);
        handlers.open('/wait/1');
        expect((await first.reply)?.status).toBe(200);
        expect((await send(app, '/', { 'user-id': 'u1' }).reply)?.status).toBe(200);
        await noPermitLeft(limiter, ['u1', 'u2']);
      });

      testPermitsBack({ serve, started, handlers: () => handlers, limiterOf, noPermitLeft });

      test('the queue serves waiting requests in arrival order and drops one whose client leaves', async () => {
        const limiter = limiterOf({ max: 1, queue: { maxWaitMs: 10_000 } });
        const app = await serve({ concurrency: { limiter, key: 'all' } });
        const holder = send(app, '/wait/0');
        await started('/wait/0');
        const waiting: Sent[] = [];
        for (const n of [1, 2, 3]) {
          waiting.push(send(app, `/wait/${n}`));
          await until(() => limiter.stats().queued === n, `request ${n} waits`);
        }
        waiting[2]?.leave();
        await until(() => limiter.stats().queued === 2, 'the request whose client left is dropped');
        for (const n of [0, 1, 2]) {
          await started(`/wait/${n}`);
          handlers.open(`/wait/${n}`);
        }
        expect((await holder.reply)?.status).toBe(200);
        expect((await waiting[0]?.reply)?.status).toBe(200);
        expect((await waiting[1]?.reply)?.status).toBe(200);
        expect(handlers.started).toEqual(['/wait/0', '/wait/1', '/wait/2']);
        await noPermitLeft(limiter, ['all']);
      });

      test("queue.maxPerKey: a client flooding the queue is refused past its share, another client's request still waits", async () => {
        const limiter = limiterOf({ max: 1, queue: { maxWaitMs: 10_000, maxSize: 3, maxPerKey: 2 } });
        const app = await serve({ concurrency: { limiter, key: '$http_user_id' } });
        const flooder = { 'user-id': 'flooder', Accept: 'application/json' };
        const holders = [send(app, '/wait/f0', flooder), send(app, '/wait/o0', { 'user-id': 'other' })];
        await started('/wait/f0');
        await started('/wait/o0');
        const flood = [send(app, '/wait/f1', flooder), send(app, '/wait/f2', flooder)];
        await until(() => limiter.stats().queued === 2, "the flooder's two places are taken");
        const past = await send(app, '/wait/f3', flooder).reply;
        expect(past?.status).toBe(429);
        expect(JSON.parse(past?.body ?? '').error).toBe('too_many_in_flight');
        // The queue's third place is still free for another key.
        const patient = send(app, '/wait/o1', { 'user-id': 'other' });
        await until(() => limiter.stats().queued === 3, "the other client's request waits");
        handlers.open('/wait/o0');
        await started('/wait/o1');
        handlers.open('/wait/o1');
        expect((await patient.reply)?.status).toBe(200);
        for (const n of [0, 1, 2]) {
          await started(`/wait/f${n}`);
          handlers.open(`/wait/f${n}`);
        }
        for (const sent of [...holders, ...flood]) expect((await sent.reply)?.status).toBe(200);
        expect(handlers.started).not.toContain('/wait/f3');
        await noPermitLeft(limiter, ['flooder', 'other']);
      });

      test('after rateLimit on one route: a request the rate limit refuses takes no permit', async () => {
        const limiter = limiterOf({ max: 1 });
        let refusals = 0;
        limiter.on('limited', () => refusals++);
        const app = await serve({
          rate: { key: '$http_user_id', rate: '2/1m', clock: fakeClock() },
          concurrency: { limiter, key: '$http_user_id' },
        });
        const user = { 'user-id': 'u', Accept: 'application/json' };
        const first = send(app, '/wait/1', user);
        await started('/wait/1');
        const second = await send(app, '/', user).reply;
        expect(second?.status).toBe(429);
        expect(JSON.parse(second?.body ?? '').error).toBe('too_many_in_flight');
        const third = await send(app, '/', user).reply;
        expect(third?.status).toBe(429);
        expect(JSON.parse(third?.body ?? '').error).toBe('rate_limited');
        expect(third?.headers['retry-after']).toBeDefined();
        expect(refusals).toBe(1);
        handlers.open('/wait/1');
        expect((await first.reply)?.status).toBe(200);
        await noPermitLeft(limiter, ['u']);
      });

      test(`${mixedRequests} mixed requests leave no permit behind`, async () => {
        const keys = ['a', 'b', 'c', 'full'];
        const limiter = limiterOf({ max: 3, queue: { maxWaitMs: 20, maxSize: 8 } });
        const app = await serve({ concurrency: { limiter, key: '$http_user_id' } });
        // Key `full` is held throughout: its requests wait, time out or find the queue full.
        const holders = [0, 1, 2].map((n) => send(app, `/wait/hold-${n}`, { 'user-id': 'full' }));
        await until(() => limiter.stats().inFlight === 3, 'key full is held');
        const agent = new Agent({ keepAlive: true, maxSockets: MIXED_CLIENTS });
        const statuses = new Map<number | 'left', number>();
        let next = 0;
        const one = async (i: number): Promise<void> => {
          const kind = i % 20;
          const headers: Record<string, string> =
            kind === 19 ? {} : { 'user-id': keys[i % keys.length] as string };
          let reply: Reply | undefined;
          if (kind === 17 || kind === 18) {
            // A client that leaves mid-request, its handler never answering.
            const sent = send(app, `/wait/left-${i}`, headers);
            setTimeout(() => sent.leave(), kind === 17 ? 0 : 2);
            reply = await sent.reply;
          } else {
            const path = kind < 12 ? '/' : kind < 14 ? '/throw' : '/slow';
            reply = await send(app, path, headers, agent).reply;
          }
          const status = reply?.status ?? 'left';
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        };
        await Promise.all(
          Array.from({ length: MIXED_CLIENTS }, async () => {
            for (let i = next++; i < mixedRequests; i = next++) await one(i);
          }),
        );
        agent.destroy();
        for (const n of [0, 1, 2]) handlers.open(`/wait/hold-${n}`);
        await Promise.all(holders.map((holder) => holder.reply));
        await noPermitLeft(limiter, keys);
        expect([...statuses.values()].reduce((sum, n) => sum + n, 0)).toBe(mixedRequests);
        for (const status of [200, 429, 500, 'left'] as const)
          expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
      }, 120_000);
    });

    test('status, Retry-After from the queue, a fallback handler, a static fallback and dryRun', async () => {
      // One count, two limiters: the queued one, and one without a queue for the dry run (a dry
      // run cannot have a queue: it never holds a request).
      const store = new MemoryStore();
      const limiter = createConcurrencyLimiter({ max: 1, store, queue: { maxWaitMs: 1, maxSize: 1 } });
      const app = await serve({ concurrency: { limiter, key: 'all', status: 503 } });
      // One permit held 1 ms or more: the queue now has a hold time to estimate from.
      await send(app, '/slow').reply;
      const holder = send(app, '/wait/1');
      await started('/wait/1');
      const waited = await send(app, '/').reply;
      expect(waited?.status).toBe(503);
      expect(waited?.headers['retry-after']).toBe('1');
      expect(waited?.body).toBe('Too many requests in progress, retry in 1 s.\n');
      const withHandler = await serve({
        concurrency: { limiter, key: 'all', fallback: driver.fallbackHandler(202) },
      });
      const handled = await send(withHandler, '/').reply;
      expect(handled?.status).toBe(202);
      expect(JSON.parse(handled?.body ?? '')).toEqual({ fallback: true, inFlight: 1 });
      const withStatic = await serve({
        concurrency: {
          limiter,
          key: 'all',
          fallback: { body: { busy: true }, headers: { 'X-Cache': 'HIT' } },
        },
      });
      const cached = await send(withStatic, '/').reply;
      expect([cached?.status, cached?.body, cached?.headers['x-cache']]).toEqual([
        200,
        '{"busy":true}',
        'HIT',
      ]);
      const unqueued = createConcurrencyLimiter({ max: 1, store });
      const dry = await serve({ concurrency: { limiter: unqueued, key: 'all', dryRun: true } });
      const passed = await send(dry, '/').reply;
      expect([passed?.status, passed?.headers['sluice-dry-run']]).toEqual([200, 'rejected']);
      handlers.open('/wait/1');
      expect((await holder.reply)?.status).toBe(200);
      await until(() => limiter.stats().inFlight === 0, 'every permit is back');
    });
  });
}
