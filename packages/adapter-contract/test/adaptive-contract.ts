import { createAdaptiveLimiter, type AdaptiveLimiter, type AdaptiveLimiterOptions } from '@sluice/core';
import { Handlers, send, until } from './concurrency-harness';
import type { ConcurrencyDriver } from './concurrency-drivers';
import type { ContractOptions, TestApp } from './drivers';

/**
 * A limiter whose limit the test pins (`min` = `max`): what the adapter does with its answers is
 * under test here, not how the limit moves (packages/core/test/adaptive).
 */
function pinned(limit: number, options: AdaptiveLimiterOptions = {}): AdaptiveLimiter {
  return createAdaptiveLimiter({
    initial: limit,
    min: limit,
    max: limit,
    queue: false,
    eventLoop: false,
    ...options,
  });
}

/** `adaptiveLimit` on every adapter: a 503 with Retry-After when full, permits back exactly once. */
export function describeAdaptiveContract(driver: ConcurrencyDriver): void {
  describe(`adaptive contract: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    let handlers: Handlers;
    beforeEach(() => {
      handlers = new Handlers();
    });
    afterEach(async () => {
      handlers.openAll();
      for (const app of apps.splice(0)) await app.close();
    });
    const serve = async (adaptive: ContractOptions): Promise<TestApp> => {
      const app = await driver.serve({ adaptive }, handlers.work);
      apps.push(app);
      return app;
    };
    const started = (path: string) => until(() => handlers.started.includes(path), `${path} runs`);
    const noneInFlight = (limiter: AdaptiveLimiter) =>
      until(() => limiter.inFlight() === 0, 'every permit is back');

    test('full: 503 with Retry-After and a short body; the permit goes back when the response ends', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter });
      const first = send(app, '/wait/1');
      await started('/wait/1');
      expect(limiter.inFlight()).toBe(1);
      const refused = await send(app, '/', { Accept: 'application/json' }).reply;
      expect(refused?.status).toBe(503);
      expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(refused?.body ?? '')).toMatchObject({ error: 'overloaded' });
      handlers.open('/wait/1');
      expect((await first.reply)?.status).toBe(200);
      await noneInFlight(limiter);
      expect((await send(app, '/').reply)?.status).toBe(200);
      expect(limiter.stats().partitions['*']).toMatchObject({ shed: 1, inFlight: 0 });
    });

    test('a client that resets gives its permit back', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter });
      const hanging = send(app, '/wait/forever');
      await started('/wait/forever');
      expect(limiter.inFlight()).toBe(1);
      hanging.leave();
      await noneInFlight(limiter);
      expect((await send(app, '/').reply)?.status).toBe(200);
    });

    test('a handler that throws gives its permit back', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter });
      expect((await send(app, '/throw').reply)?.status).toBe(500);
      await noneInFlight(limiter);
      expect((await send(app, '/').reply)?.status).toBe(200);
    });

    test('skip: a skipped request takes no permit', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter, skip: () => true });
      const first = send(app, '/wait/s1');
      await started('/wait/s1');
      expect(limiter.inFlight()).toBe(0);
      expect((await send(app, '/').reply)?.status).toBe(200);
      handlers.open('/wait/s1');
      expect((await first.reply)?.status).toBe(200);
    });

    test('dryRun: over the limit, let through, counted in flight and marked', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter, dryRun: true });
      const first = send(app, '/wait/d1');
      await started('/wait/d1');
      const second = send(app, '/wait/d2');
      await started('/wait/d2');
      expect(limiter.inFlight()).toBe(2);
      handlers.openAll();
      expect((await first.reply)?.headers['sluice-dry-run']).toBeUndefined();
      const passed = await second.reply;
      expect(passed?.status).toBe(200);
      expect(passed?.headers['sluice-dry-run']).toBe('rejected');
      await noneInFlight(limiter);
    });

    test('fallback: a static reply, or the handler with the decision, in place of the 503', async () => {
      const limiter = pinned(1);
      const app = await serve({ limiter, fallback: { status: 200, body: { cached: true } } });
      const first = send(app, '/wait/f1');
      await started('/wait/f1');
      const fallback = await send(app, '/').reply;
      expect(fallback?.status).toBe(200);
      expect(JSON.parse(fallback?.body ?? '')).toEqual({ cached: true });
      expect(fallback?.headers['retry-after']).toBeDefined();
      const other = await serve({ limiter: pinned(1), fallback: driver.fallbackHandler(202) });
      const held = send(other, '/wait/f2');
      await started('/wait/f2');
      const handled = await send(other, '/').reply;
      expect(handled?.status).toBe(202);
      expect(JSON.parse(handled?.body ?? '')).toEqual({ fallback: true, inFlight: 1 });
      handlers.openAll();
      await Promise.all([first.reply, held.reply]);
      await noneInFlight(limiter);
    });

    test('queue: a waiter runs once a permit comes back; one whose client leaves runs nothing', async () => {
      const limiter = pinned(1, { queue: { maxSize: 10, maxWaitMs: 10_000, targetMs: 10_000 } });
      const app = await serve({ limiter });
      const first = send(app, '/wait/q1');
      await started('/wait/q1');
      const leaving = send(app, '/wait/gone');
      const waiting = send(app, '/wait/q2');
      await until(() => limiter.stats().queued === 2, 'both wait in the queue');
      leaving.leave();
      await until(() => limiter.stats().queued === 1, 'the client that left is out of the queue');
      handlers.open('/wait/q1');
      expect((await first.reply)?.status).toBe(200);
      await started('/wait/q2');
      handlers.open('/wait/q2');
      expect((await waiting.reply)?.status).toBe(200);
      await noneInFlight(limiter);
      expect(handlers.started).not.toContain('/wait/gone');
    });

    test('priority and shares: a partition keeps its share while another borrowed the rest', async () => {
      const limiter = pinned(2, { shares: { checkout: 0.5, browse: 0.5 } });
      const app = await serve({ limiter, priority: () => 'browse' });
      const first = send(app, '/wait/b1');
      const second = send(app, '/wait/b2');
      await started('/wait/b1');
      await started('/wait/b2');
      expect(limiter.stats().partitions['browse']).toMatchObject({ inFlight: 2 });
      expect((await send(app, '/').reply)?.status).toBe(503);
      handlers.openAll();
      await Promise.all([first.reply, second.reply]);
      await noneInFlight(limiter);
    });
  });
}
