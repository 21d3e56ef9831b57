import sluice, { concurrencyLimit } from '@sluice/fastify';
import type { CallbackErrorEvent } from '@sluice/core/adapter';
import fastify5, { type FastifyInstance, type FastifyReply } from 'fastify';
import fastify4 from 'fastify4';
import request from 'supertest';

const FRAMEWORKS: Array<[string, () => FastifyInstance]> = [
  ['fastify 5', () => fastify5()],
  ['fastify 4', () => (fastify4 as unknown as typeof fastify5)()],
];

/**
 * A fallback handler in Fastify's own style returns what to send, as an async route handler does.
 * It used to be taken for one that had sent its reply: the request then waited for ever.
 */
describe.each(FRAMEWORKS)('%s: a fallback handler that returns instead of sending', (_name, create) => {
  let app: FastifyInstance;
  const clock = () => 1_700_006_400_000; // time stands still
  const errors: string[] = [];
  const onCallbackError = (event: CallbackErrorEvent<unknown>): void => void errors.push(event.error.message);

  beforeEach(() => {
    app = create();
    errors.length = 0;
  });
  afterEach(() => app.close());

  const listen = async (): Promise<ReturnType<typeof request>> => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    return request(app.server);
  };

  test('rateLimit: what it returns is sent, as a route handler would send it', async () => {
    await app.register(sluice, { clock });
    app.get(
      '/sku',
      {
        config: {
          rateLimit: {
            rate: '1/1h',
            fallback: async (_request: unknown, reply: FastifyReply) => {
              reply.code(200).header('X-Cache', 'HIT');
              return { cached: true };
            },
          },
        },
      },
      async () => ({ live: true }),
    );
    const agent = await listen();
    expect((await agent.get('/sku')).body).toEqual({ live: true });
    const degraded = await agent.get('/sku').timeout(5000);
    expect([degraded.status, degraded.headers['x-cache'], degraded.body]).toEqual([
      200,
      'HIT',
      { cached: true },
    ]);
    expect(errors).toEqual([]);
  });

  test('concurrencyLimit: nothing sent and nothing returned is the default refusal, reported', async () => {
    let release: (() => void) | undefined;
    app.get(
      '/checkout',
      {
        onRequest: concurrencyLimit({
          key: 'all',
          max: 1,
          fallback: async () => undefined,
          onCallbackError,
        }),
      },
      () => new Promise((resolve) => (release = () => resolve({ paid: true }))),
    );
    const agent = await listen();
    const first = agent.get('/checkout').then((r) => r.status);
    while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
    const refused = await agent.get('/checkout').timeout(5000);
    expect(refused.status).toBe(429);
    expect(errors).toEqual([
      expect.stringMatching(/^fallback .*the fallback sent no reply and returned nothing to send/),
    ]);
    release();
    expect(await first).toBe(200);
  });
});
