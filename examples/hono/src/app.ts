import { concurrencyLimit, rateLimit } from '@sluice/hono';
import { Hono } from 'hono';

/**
 * A Hono app: a per-IP limit (10 r/s, bursts of 20) on everything, then each route's own limit.
 * Served by `@hono/node-server`, which gives sluice the client's address; on Bun or Deno, pass
 * `clientAddress: (c) => getConnInfo(c).remote.address` with your runtime's `getConnInfo`.
 *
 * @example
 * ```ts
 * serve({ fetch: createApp().fetch, port: 3002 });
 * ```
 */
export function createApp(): Hono {
  const app = new Hono();
  app.use(rateLimit({ rate: '10r/s', burst: 20 }));

  // 6 a minute per SKU, for everyone: past it, a cached page instead of a 429.
  app.get(
    '/sku/:id',
    rateLimit({ key: (c) => c.req.param('id'), rate: '6/1m', fallback: { body: { cached: true } } }),
    (c) => c.json({ sku: c.req.param('id'), stock: 3 }),
  );

  // At most 2 searches at once, over all clients; the third waits up to a second for its turn.
  app.get('/search', concurrencyLimit({ key: 'all', max: 2, queue: { maxWaitMs: 1000 } }), async (c) => {
    await new Promise((resolve) => setTimeout(resolve, Number(c.req.query('ms') ?? 0)));
    return c.json({ q: c.req.query('q') ?? '', results: [] });
  });

  app.get('/', (c) => c.json({ try: ['/sku/42', '/search?q=shoes&ms=500'] }));
  return app;
}
