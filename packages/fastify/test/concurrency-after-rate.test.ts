import sluice, { concurrencyLimit } from '@sluice/fastify';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import request from 'supertest';

const FRAMEWORKS: Array<[string, () => FastifyInstance]> = [
  ['fastify 5', () => fastify5()],
  ['fastify 4', () => (fastify4 as unknown as typeof fastify5)()],
];

/**
 * The plugin's rate limit decides at `onRequest`; a `concurrencyLimit` added at `preHandler` runs
 * after it, so a request the rate limit holds (a delay) or refuses holds no permit meanwhile. The
 * same limit at `onRequest` would run first: delayed requests would sit on its permits.
 */
describe.each(FRAMEWORKS)('%s: concurrencyLimit at preHandler, beside the plugin', (_name, create) => {
  let app: FastifyInstance;
  afterEach(() => app.close());

  test('a request the rate limit delays takes its permit only once it goes on', async () => {
    app = create();
    // Six at once: one passes, five are held 10 ms apart (nginx `limit_req burst=10`, no nodelay).
    await app.register(sluice, { key: 'all', algorithm: 'leaky-bucket', rate: '100r/s', burst: 10 });
    const refused: number[] = [];
    app.addHook('preHandler', concurrencyLimit({ key: 'all', max: 2, onLimit: () => void refused.push(1) }));
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(app.server)
          .get('/')
          .then((r) => r.status),
      ),
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(refused).toEqual([]);
  });
});
