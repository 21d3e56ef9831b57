import sluice from '@sluice/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

/**
 * A Fastify app with the sluice plugin: a per-IP limit on every route, and per-route overrides
 * in `config.rateLimit` (typed by declaration merging).
 *
 * @param clock - epoch ms, for tests
 * @example
 * ```ts
 * const app = await buildApp();
 * await app.listen({ port: 3002 });
 * ```
 */
export async function buildApp(clock?: () => number): Promise<FastifyInstance> {
  const app = Fastify();
  // Awaited, and before the routes: the plugin adds its hook to routes as they are defined.
  await app.register(sluice, { rate: '10r/s', burst: 20, headers: 'draft-7', ...(clock && { clock }) });

  app.get('/', async () => ({ try: ['/login (POST)', '/items/42', '/health', '/beta'] }));

  // Not limited at all: load balancers poll it.
  app.get('/health', { config: { rateLimit: false } }, async () => ({ ok: true }));

  // Brute-force protection: 5 attempts per 15 minutes per client, 503 as nginx would answer.
  app.post('/login', { config: { rateLimit: { rate: '5/15m', status: 503 } } }, async () => ({
    token: 'demo',
  }));

  // One bucket per item path ($uri), with a degraded reply instead of an error.
  app.get(
    '/items/:id',
    {
      config: {
        rateLimit: {
          key: '$uri',
          rate: '3/1m',
          fallback: { body: { cached: true, note: 'busy: cached item' } },
        },
      },
    },
    async (request) => ({ id: (request.params as { id: string }).id, cached: false }),
  );

  // A limit being tried out: counted and reported (Sluice-Dry-Run header), never enforced.
  app.get('/beta', { config: { rateLimit: { rate: '1/1m', dryRun: true } } }, async () => ({ beta: true }));
  return app;
}
