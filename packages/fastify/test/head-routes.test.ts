import sluice, { type SluiceRouteOptions } from '@sluice/fastify';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import request from 'supertest';

const FRAMEWORKS: Array<[string, () => FastifyInstance]> = [
  ['fastify 5', () => fastify5()],
  ['fastify 4', () => (fastify4 as unknown as typeof fastify5)()],
];

/**
 * Fastify adds a HEAD route for each GET route (`exposeHeadRoutes`, on by default): it is the same
 * route, so it shares the GET's limit — one gate, one bucket (issue #16, item 8).
 */
describe.each(FRAMEWORKS)('%s: automatic HEAD routes', (_name, create) => {
  let app: FastifyInstance;
  let handled: number;
  const clock = () => 1_700_006_400_000; // time stands still
  const handler = async () => {
    handled++;
    return 'ok';
  };
  const limited = (rate: string): { config: { rateLimit: SluiceRouteOptions } } => ({
    config: { rateLimit: { rate } },
  });
  /** Status codes of `method url`, in order. */
  const send = async (...calls: Array<[method: 'GET' | 'HEAD', url: string]>): Promise<number[]> => {
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const codes: number[] = [];
    for (const [method, url] of calls) {
      const agent = request(app.server);
      codes.push((await (method === 'GET' ? agent.get(url) : agent.head(url))).status);
    }
    return codes;
  };

  beforeEach(() => {
    app = create();
    handled = 0;
  });
  afterEach(() => app.close());

  test("a route's config.rateLimit covers its HEAD route: GET, GET, HEAD is 200, 429, 429", async () => {
    await app.register(sluice, { clock });
    app.get('/sku', limited('1/1m'), handler);
    expect(await send(['GET', '/sku'], ['GET', '/sku'], ['HEAD', '/sku'])).toEqual([200, 429, 429]);
    expect(handled).toBe(1);
  });

  test('a HEAD first takes the unit its GET would have had', async () => {
    await app.register(sluice, { clock });
    app.get('/sku', limited('1/1m'), handler);
    expect(await send(['HEAD', '/sku'], ['GET', '/sku'])).toEqual([200, 429]);
    expect(handled).toBe(1);
  });

  test('the plugin-wide limit counts HEAD and GET together', async () => {
    await app.register(sluice, { rate: '1/1m', clock });
    app.get('/sku', handler);
    expect(await send(['GET', '/sku'], ['HEAD', '/sku'])).toEqual([200, 429]);
    expect(handled).toBe(1);
  });

  test('one options object on two routes: each route has its own bucket, its HEAD included', async () => {
    await app.register(sluice, { clock });
    const shared = limited('1/1m');
    app.get('/a', shared, handler);
    app.get('/b', shared, handler);
    expect(await send(['GET', '/a'], ['HEAD', '/a'], ['HEAD', '/b'], ['GET', '/b'])).toEqual([
      200, 429, 200, 429,
    ]);
  });

  test('under a prefix, the HEAD of "/" and of "/prefix/" share the GET limit', async () => {
    await app.register(sluice, { clock });
    await app.register(async (shop) => void shop.get('/', limited('1/1m'), handler), { prefix: '/shop' });
    expect(await send(['GET', '/shop'], ['HEAD', '/shop'], ['HEAD', '/shop/'], ['GET', '/shop/'])).toEqual([
      200, 429, 429, 429,
    ]);
    expect(handled).toBe(1);
  });

  test('a HEAD route declared with its own config keeps its own limit', async () => {
    await app.register(sluice, { clock });
    app.head('/sku', limited('2/1m'), handler);
    app.get('/sku', limited('1/1m'), handler);
    expect(
      await send(['GET', '/sku'], ['GET', '/sku'], ['HEAD', '/sku'], ['HEAD', '/sku'], ['HEAD', '/sku']),
    ).toEqual([200, 429, 200, 200, 429]);
  });
});
