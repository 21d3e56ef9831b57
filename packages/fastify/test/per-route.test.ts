import { MemoryStore, SluiceConfigError } from '@sluice/core';
import sluice, * as sluiceModule from '@sluice/fastify';
import type { SluiceRouteOptions } from '@sluice/fastify';
import fastify5, { type FastifyInstance, type RouteShorthandOptions } from 'fastify';
import fastify4 from 'fastify4';
import request from 'supertest';

const FRAMEWORKS: Array<[string, () => FastifyInstance]> = [
  ['fastify 5', () => fastify5()],
  ['fastify 4', () => (fastify4 as unknown as typeof fastify5)()],
];

describe.each(FRAMEWORKS)('%s: per-route limits', (_name, create) => {
  let app: FastifyInstance;
  // Time stands still: these tests never need it to move.
  const clock = () => 1_700_006_400_000;
  // supertest, not inject: Fastify 5's light-my-request loads an ES-only module jest cannot require on Node 20.
  const hit = async (url: string, headers: Record<string, string> = {}) => {
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await request(app.server).get(url).set(headers);
    return { status: res.status, headers: res.headers, body: res.text };
  };
  const statuses = async (url: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await hit(url)).status);
    return out;
  };

  beforeEach(() => {
    app = create();
  });
  afterEach(() => app.close());

  test('registered with a rate, it limits every route; rateLimit: false exempts one', async () => {
    await app.register(sluice, { rate: '2/1m', clock });
    app.get('/a', async () => 'a');
    app.get('/b', async () => 'b');
    app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
    // One zone for the whole app: /a and /b share the client's bucket.
    expect([...(await statuses('/a', 2)), ...(await statuses('/b', 1))]).toEqual([200, 200, 429]);
    expect(await statuses('/health', 5)).toEqual([200, 200, 200, 200, 200]);
    expect((await hit('/health')).headers.ratelimit).toBeUndefined();
  });

  test('without a rate, only routes whose config sets one are limited, each in its own buckets', async () => {
    const store = new MemoryStore();
    await app.register(sluice, { headers: 'legacy', clock, store });
    app.get('/free', async () => 'free');
    app.get('/sku', { config: { rateLimit: { key: '$arg_sku_id', rate: '1/1m' } } }, async () => 'sku');
    app.get('/other', { config: { rateLimit: { key: '$arg_sku_id', rate: '1/1m' } } }, async () => 'other');
    expect(await statuses('/free', 3)).toEqual([200, 200, 200]);
    expect((await hit('/free')).headers['x-ratelimit-limit']).toBeUndefined();
    const first = await hit('/sku?sku_id=1');
    // The plugin's options (legacy headers, the shared store) apply to the route's limit.
    expect([first.status, first.headers['x-ratelimit-limit']]).toEqual([200, '1']);
    expect((await hit('/sku?sku_id=1')).status).toBe(429);
    expect((await hit('/sku?sku_id=2')).status).toBe(200);
    // Same store, same key, another route: another bucket.
    expect((await hit('/other?sku_id=1')).status).toBe(200);
  });

  test('a route config overrides the plugin limit; an array composes several limits', async () => {
    // The plugin's burst shapes the plugin's rate only: /tight's own rate gets no burst of 50.
    await app.register(sluice, { rate: '100r/s', burst: 50, clock });
    app.get('/tight', { config: { rateLimit: { rate: '1/1m' } } }, async () => 'tight');
    app.get(
      '/both',
      {
        config: {
          rateLimit: [{ rate: '3/1m' }, { key: '$arg_sku_id', rate: '1/1m', fallback: { body: 'cached' } }],
        },
      },
      async () => 'fresh',
    );
    expect(await statuses('/tight', 2)).toEqual([200, 429]);
    expect((await hit('/both?sku_id=a')).body).toBe('fresh');
    expect((await hit('/both?sku_id=a')).body).toBe('cached');
    expect((await hit('/both?sku_id=b')).body).toBe('fresh');
    expect((await hit('/both?sku_id=c')).body).toBe('fresh');
    expect((await hit('/both?sku_id=d')).status).toBe(429);
  });

  test('rules on a route replace the plugin rate and its shaping; a route rate replaces plugin rules', async () => {
    await app.register(sluice, {
      rate: '100r/s',
      burst: 50,
      algorithm: 'leaky-bucket',
      nodelay: true,
      clock,
    });
    const rules = [{ rate: '1/1m' }, { algorithm: 'fixed-window' as const, rate: '5/1h' }];
    app.get('/rules', { config: { rateLimit: { rules } } }, async () => 'rules');
    expect(await statuses('/rules', 2)).toEqual([200, 429]);
    expect((await hit('/rules')).headers['ratelimit-policy']).toBe('"1/1m";q=1;w=60, "5/1h";q=5;w=3600');

    const other = create();
    await other.register(sluice, { rules, clock });
    other.get('/all', async () => 'all');
    other.get('/own', { config: { rateLimit: { rate: '2/1m' } } }, async () => 'own');
    await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const codes = async (url: string) => {
        const out: number[] = [];
        for (let i = 0; i < 3; i++) out.push((await request(other.server).get(url)).status);
        return out;
      };
      expect(await codes('/all')).toEqual([200, 429, 429]);
      expect(await codes('/own')).toEqual([200, 200, 429]);
    } finally {
      await other.close();
    }
  });

  test("hook: 'preHandler' sees what earlier hooks set on the request", async () => {
    app.addHook('preValidation', async (request) => {
      (request as unknown as { user: string }).user = String(request.headers['x-user'] ?? '');
    });
    await app.register(sluice, {
      rate: '1/1m',
      clock,
      hook: 'preHandler',
      key: (request) => (request as unknown as { user: string }).user,
    });
    app.get('/me', async () => 'me');
    expect((await hit('/me', { 'x-user': 'ann' })).status).toBe(200);
    expect((await hit('/me', { 'x-user': 'ann' })).status).toBe(429);
    expect((await hit('/me', { 'x-user': 'bob' })).status).toBe(200);
  });

  test('invalid plugin options reject registration; invalid route options throw at the route, naming the option', async () => {
    await expect(create().register(sluice, { rate: '6r/x' })).rejects.toMatchObject({ option: 'rate' });
    // Defaults without a rate: what a route's own rate replaces is checked at registration too.
    for (const [defaults, option] of [
      [{ algorithm: 'bogus' }, 'algorithm'],
      [{ burst: 'x' }, 'burst'],
      [{ algorithm: 'leaky-bucket', nodelay: 'yes' }, 'nodelay'],
      [{ delay: Number.NaN }, 'delay'],
      [{ queue: { maxWait: 5 } }, 'queue'],
    ] as const)
      await expect(create().register(sluice, defaults as never)).rejects.toMatchObject({ option });
    await expect(create().register(sluice, { rate: '6r/m', hook: 'onSend' as never })).rejects.toBeInstanceOf(
      SluiceConfigError,
    );
    await app.register(sluice, {});
    let error: unknown;
    try {
      app.get('/bad', { config: { rateLimit: { rate: '6r/m', status: 200 } } }, async () => 'bad');
      await app.ready();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SluiceConfigError);
    expect(error).toMatchObject({ option: 'status' });
  });

  test("an unknown option's message names the plugin's own option (hook) beside the others", async () => {
    const typo = create().register(sluice, { rate: '6r/m', hok: 'preHandler' } as never);
    await expect(typo).rejects.toMatchObject({ option: 'hok', code: 'SLUICE_UNKNOWN_OPTION' });
    await expect(typo).rejects.toThrow(
      /HTTP options: key, .*; Fastify plugin options \(not per route\): hook$/,
    );
    await app.register(sluice, {});
    const route = () =>
      app.get(
        '/route',
        { config: { rateLimit: { rate: '6r/m', hook: 'preHandler' } as never } },
        async () => '',
      );
    expect(route).toThrow(/^hook "preHandler": unknown option; .*\(not per route\): hook$/);
  });

  test('registers from a module namespace (require) as from the default export', async () => {
    await app.register(sluiceModule.sluice, { rate: '1/1m', clock });
    app.get('/', async () => 'ok');
    expect(await statuses('/', 2)).toEqual([200, 429]);
    expect(sluiceModule.default).toBe(sluiceModule.sluice);
  });
});

// Declaration merging: route config is typed (checked by `pnpm typecheck`, never run).
export function typedRouteConfig(app: FastifyInstance): void {
  app.get(
    '/typed',
    { config: { rateLimit: { key: '$arg_sku_id', rate: '6r/m', headers: 'draft-7' } } },
    async () => 'ok',
  );
  // @ts-expect-error status is a number
  app.get('/wrong', { config: { rateLimit: { rate: '6r/m', status: '429' } } }, async () => 'ok');
}

// Misspelled options are type errors (issue 14): on the plugin, in route options typed as
// `SluiceRouteOptions`, and in a route config checked with `satisfies`. An inline `config` literal
// passed straight to `app.get` is the exception: Fastify infers its `ContextConfig` type
// parameter from that literal, which then admits any key (sluice refuses it when the route is
// defined, as the test above shows).
export async function misspelledOptions(app: FastifyInstance): Promise<void> {
  // @ts-expect-error brust is not an option
  await app.register(sluice, { rate: '6r/m', brust: 5 });
  // @ts-expect-error brust is not an option
  const sku: SluiceRouteOptions = { rate: '6r/m', brust: 5 };
  // @ts-expect-error brust is not an option (neither in an array of limits)
  const both: readonly SluiceRouteOptions[] = [{ rate: '6r/m' }, { rate: '1r/s', brust: 5 }];
  app.get('/sku', { config: { rateLimit: sku } }, async () => 'ok');
  app.get('/both', { config: { rateLimit: both } }, async () => 'ok');
  app.get(
    '/checked',
    // @ts-expect-error brust is not an option
    { config: { rateLimit: { rate: '6r/m', brust: 5 } satisfies SluiceRouteOptions } },
    async () => 'ok',
  );
  const shorthand: RouteShorthandOptions = {
    // @ts-expect-error brust is not an option
    config: { rateLimit: { rate: '6r/m', brust: 5 } },
  };
  app.get('/shorthand', shorthand, async () => 'ok');
}
