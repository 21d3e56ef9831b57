import { MemoryStore, type LimiterMetrics, type MetricsSink } from '@sluice/core';
import sluice, { type SluiceRouteOptions } from '@sluice/fastify';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import request from 'supertest';

const FRAMEWORKS: Array<[string, () => FastifyInstance]> = [
  ['fastify 5', () => fastify5()],
  ['fastify 4', () => (fastify4 as unknown as typeof fastify5)()],
];

/** A sink that only writes down the name of each limiter created. */
function namingSink(): { sink: MetricsSink; names: string[] } {
  const names: string[] = [];
  const quiet: LimiterMetrics = {
    decided: () => {},
    storeCall: () => {},
    storeError: () => {},
    storeUp: () => {},
    blockCacheHit: () => {},
    leaseCall: () => {},
  };
  return { names, sink: { limiter: (info) => (names.push(info.name), quiet) } };
}

/**
 * Routes of one method and URL that Fastify tells apart by their constraints (version, host) are
 * different routes: each route's `config.rateLimit` has its own buckets, also in a shared store.
 */
describe.each(FRAMEWORKS)('%s: routes told apart by constraints', (_name, create) => {
  let app: FastifyInstance;
  const clock = () => 1_700_006_400_000; // time stands still
  const limited = (rate: string): { config: { rateLimit: SluiceRouteOptions } } => ({
    config: { rateLimit: { rate } },
  });
  /** Status codes of each `[method, url, headers]`, in order. */
  const send = async (
    ...calls: Array<[method: 'GET' | 'HEAD', url: string, headers: Record<string, string>]>
  ): Promise<number[]> => {
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const codes: number[] = [];
    for (const [method, url, headers] of calls) {
      const agent = request(app.server);
      codes.push((await (method === 'GET' ? agent.get(url) : agent.head(url)).set(headers)).status);
    }
    return codes;
  };
  const v1 = { 'accept-version': '1.0.0' };
  const v2 = { 'accept-version': '2.0.0' };

  beforeEach(() => {
    app = create();
  });
  afterEach(() => app.close());

  test('version twins in a shared store: each has its own bucket', async () => {
    await app.register(sluice, { store: new MemoryStore(), clock });
    app.get('/items', { constraints: { version: '1.0.0' }, ...limited('1/1m') }, async () => 'v1');
    app.get('/items', { constraints: { version: '2.0.0' }, ...limited('1/1m') }, async () => 'v2');
    expect(
      await send(['GET', '/items', v1], ['GET', '/items', v2], ['GET', '/items', v1], ['GET', '/items', v2]),
    ).toEqual([200, 200, 429, 429]);
  });

  test('host twins (a string and a RegExp) in a shared store: each has its own bucket', async () => {
    await app.register(sluice, { store: new MemoryStore(), clock });
    app.get('/who', { constraints: { host: 'admin.example.com' }, ...limited('1/1m') }, async () => 'admin');
    app.get('/who', { constraints: { host: /^shop\./ }, ...limited('1/1m') }, async () => 'shop');
    const admin = { host: 'admin.example.com' };
    const shop = { host: 'shop.example.com' };
    expect(
      await send(
        ['GET', '/who', admin],
        ['GET', '/who', shop],
        ['GET', '/who', admin],
        ['GET', '/who', shop],
      ),
    ).toEqual([200, 200, 429, 429]);
  });

  test('twins sharing one rateLimit object: each HEAD shares its own GET bucket', async () => {
    await app.register(sluice, { store: new MemoryStore(), clock });
    const config = { rateLimit: { rate: '1/1m' } };
    app.get('/items', { constraints: { version: '1.0.0' }, config }, async () => 'v1');
    app.get('/items', { constraints: { version: '2.0.0' }, config }, async () => 'v2');
    expect(
      await send(
        ['GET', '/items', v1],
        ['HEAD', '/items', v2],
        ['GET', '/items', v2],
        ['HEAD', '/items', v1],
      ),
    ).toEqual([200, 200, 429, 429]);
  });

  test('the scope names the constraints, sorted; a route without any keeps its prefix', async () => {
    const { sink, names } = namingSink();
    await app.register(sluice, { store: new MemoryStore(), metrics: sink, clock });
    app.get('/plain', limited('1/1m'), async () => 'plain');
    app.get('/free', { constraints: {}, ...limited('1/1m') }, async () => 'free');
    app.get('/items', { constraints: { version: '1.0.0' }, ...limited('1/1m') }, async () => 'v1');
    app.get(
      '/who',
      { constraints: { version: '2.0.0', host: /^shop\./i }, ...limited('1/1m') },
      async () => 'shop',
    );
    await app.ready();
    // One limiter per GET route: each HEAD route shares its GET's.
    expect(names).toEqual([
      'sluice:GET /plain',
      'sluice:GET /free',
      'sluice:GET /items [version=1.0.0]',
      'sluice:GET /who [host=/^shop\\./i,version=2.0.0]',
    ]);
  });
});
