import { concurrencyLimit, rateLimit, withRateLimit, type RateLimitOptions } from '@sluice/hono';
import { createLimiter, SluiceConfigError } from '@sluice/core';
import { Hono, type Context } from 'hono';

/** Time stands still: these tests never wait for a limit to refill. */
const still = () => 1_700_006_400_000;

/**
 * Hono on a runtime other than Node's server (Bun, Deno, workers): the app's `fetch` is called
 * with a Fetch `Request` and the runtime's own `env` (here Bun's server, with `requestIP`), as
 * those runtimes call it. No Node socket, no Node response: the client address comes from
 * `clientAddress`, and held requests and permits watch the request's `signal`.
 */
interface BunLikeServer {
  requestIP(request: Request): { address: string } | null;
}

/** A Bun-like server where every request comes from `address` (`undefined`: unknown). */
const serverAt = (address: string | undefined): BunLikeServer => ({
  requestIP: () => (address === undefined ? null : { address }),
});

const fromServer = (c: Context<{ Bindings: BunLikeServer }>) => c.env.requestIP(c.req.raw)?.address;

function appWith(...limits: Parameters<Hono['use']>[1][]) {
  const errors: unknown[] = [];
  const app = new Hono<{ Bindings: BunLikeServer }>();
  app.onError((error, c) => {
    errors.push(error);
    return c.text('error', 500);
  });
  for (const limit of limits) app.use(limit);
  const ran: string[] = [];
  app.get('*', async (c) => {
    ran.push(c.req.path);
    return c.json({ ok: true });
  });
  return { app, errors, ran };
}

const get = (
  app: Hono<{ Bindings: BunLikeServer }>,
  env: BunLikeServer,
  init: RequestInit = {},
  path = '/',
) => app.fetch(new Request(`http://shop.test${path}`, init), env);

describe('Hono without Node bindings', () => {
  test('a limit keyed by the address, without clientAddress, fails each request with a SluiceConfigError naming it, never one key for all', async () => {
    const { app, errors, ran } = appWith(rateLimit({ rate: '1/1m' }));
    const res = await get(app, serverAt('203.0.113.1'));
    expect(res.status).toBe(500);
    expect(errors[0]).toBeInstanceOf(SluiceConfigError);
    expect(errors[0]).toMatchObject({ option: 'clientAddress' });
    expect((errors[0] as Error).message).toContain('getConnInfo');
    expect(ran).toEqual([]);
  });

  test('clientAddress keys each client apart; an unknown address is refused, never shared', async () => {
    const limiter = createLimiter({ rate: '1/1m', clock: still });
    const options: RateLimitOptions = { limiter, clientAddress: fromServer };
    const { app, ran } = appWith(rateLimit(options));
    const statuses = [];
    for (const address of ['203.0.113.1', '203.0.113.1', '203.0.113.2', undefined, undefined])
      statuses.push((await get(app, serverAt(address))).status);
    expect(statuses).toEqual([200, 429, 200, 429, 429]);
    expect(ran).toHaveLength(2);
    expect((await limiter.peek('')).remaining).toBe(1);
  });

  test('a key without the address needs no clientAddress', async () => {
    const { app } = appWith(rateLimit({ key: '$http_user_id', rate: '1/1m', clock: still }));
    const as = (user: string) => get(app, serverAt(undefined), { headers: { 'User-Id': user } });
    expect([(await as('a')).status, (await as('a')).status, (await as('b')).status]).toEqual([200, 429, 200]);
  });

  test('the rate-limit headers go on any Response the handler returns, an immutable one on a copy', async () => {
    const app = new Hono();
    app.use(rateLimit({ key: '$http_user_id', rate: '2/1m', clock: still }));
    app.get('/moved', () => Response.redirect('http://shop.test/new', 302));
    app.get('/own', (c) => c.text('own', 200, { RateLimit: 'mine' }));
    const get = (path: string) =>
      app.fetch(new Request(`http://shop.test${path}`, { headers: { 'User-Id': 'u' } }));
    const moved = await get('/moved');
    expect([moved.status, moved.headers.get('location'), moved.headers.get('ratelimit')]).toEqual([
      302,
      'http://shop.test/new',
      '"2/1m";r=1;t=30',
    ]);
    expect((await get('/own')).headers.get('ratelimit')).toBe('mine');
  });

  test('several limits take clientAddress from the first; on another it is refused at creation', () => {
    expect(() =>
      rateLimit([
        { rate: '1/1m' },
        { key: '$http_user_id', rate: '1/1m', clientAddress: fromServer as never },
      ]),
    ).toThrow(expect.objectContaining({ option: 'clientAddress' }));
    expect(() => rateLimit({ rate: '1/1m', clientAddress: 'x-real-ip' as never })).toThrow(SluiceConfigError);
    expect(() => rateLimit({ rate: '1/1m', clientAdress: fromServer } as never)).toThrow(
      /clientAdress.*Hono options: clientAddress/,
    );
  });

  describe('held requests watch the signal', () => {
    afterEach(() => jest.useRealTimers());

    test('one whose client aborts while held runs nothing, gets a 499 nobody reads, and gives its turn back', async () => {
      const limiter = createLimiter({
        algorithm: 'leaky-bucket',
        rate: '1r/s',
        burst: 2,
        clock: still,
      });
      const { app, ran } = appWith(rateLimit({ limiter, clientAddress: fromServer }));
      const env = serverAt('203.0.113.1');
      expect((await get(app, env)).status).toBe(200);
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const leaving = new AbortController();
      const held = get(app, env, { signal: leaving.signal });
      while (jest.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      leaving.abort();
      expect((await held).status).toBe(499);
      expect(jest.getTimerCount()).toBe(0);
      expect(ran).toHaveLength(1);
      // Its turn went back: the next request is held 1 s, not 2.
      const next = get(app, env);
      while (jest.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      jest.advanceTimersByTime(1000);
      expect((await next).status).toBe(200);
      expect(ran).toHaveLength(2);
    });
  });

  describe('concurrencyLimit', () => {
    test('the permit goes back when the handler has returned its Response, or when the signal aborts first', async () => {
      const app = new Hono();
      const gates: Array<() => void> = [];
      app.use(concurrencyLimit({ key: 'all', max: 1 }));
      app.get('*', async (c) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        return c.text('ok');
      });
      const first = app.fetch(new Request('http://shop.test/'));
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      expect((await app.fetch(new Request('http://shop.test/'))).status).toBe(429);
      gates.shift()?.();
      expect((await first).status).toBe(200);

      const leaving = new AbortController();
      const abandoned = app.fetch(new Request('http://shop.test/', { signal: leaving.signal }));
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      leaving.abort();
      const after = app.fetch(new Request('http://shop.test/'));
      while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
      for (const open of gates.splice(0)) open();
      expect([(await abandoned).status, (await after).status]).toEqual([200, 200]);
    });
  });
});

describe('countWhen without Node bindings: the handler’s Response decides', () => {
  test("Hono: 'failed' counts a 401 and a throw, gives a 200 back; the function gets (c, c)", async () => {
    const limiter = createLimiter({ rate: '5/15m', clock: still });
    const seen: number[] = [];
    const app = new Hono<{ Bindings: BunLikeServer }>();
    app.onError((_error, c) => c.text('error', 500));
    app.use(rateLimit({ limiter, key: 'login', clientAddress: fromServer, countWhen: 'failed' }));
    app.get(
      '/fn',
      rateLimit({
        rate: '5/15m',
        clock: still,
        key: 'fn',
        countWhen: (c, res) => {
          seen.push(res.res.status);
          return c.res.status === 401;
        },
      }),
      (c) => c.json({ ok: true }),
    );
    app.get('*', (c) => {
      const outcome = c.req.query('outcome');
      if (outcome === 'throw') throw new Error('handler failed');
      return c.json({ ok: outcome !== 'fail' }, outcome === 'fail' ? 401 : 200);
    });
    const env = serverAt('203.0.113.1');
    const left = async () => (await limiter.peek('login')).remaining;
    expect((await get(app, env, {}, '/?outcome=ok')).status).toBe(200);
    expect(await left()).toBe(5);
    expect((await get(app, env, {}, '/?outcome=fail')).status).toBe(401);
    expect((await get(app, env, {}, '/?outcome=throw')).status).toBe(500);
    expect(await left()).toBe(3);
    expect((await get(app, env, {}, '/fn')).status).toBe(200);
    expect(seen).toEqual([200]);
  });

  test("withRateLimit: the function gets the handler's Response, undefined when it threw", async () => {
    const seen: Array<number | undefined> = [];
    const handler = withRateLimit(
      {
        rate: '5/15m',
        clock: still,
        key: 'login',
        countWhen: (_request, response) => {
          seen.push(response?.status);
          return response?.status !== 200;
        },
      },
      async (request: Request) => {
        const outcome = new URL(request.url).searchParams.get('outcome');
        if (outcome === 'throw') throw new Error('handler failed');
        return Response.json({ ok: outcome !== 'fail' }, { status: outcome === 'fail' ? 401 : 200 });
      },
    );
    const call = (outcome: string) => handler(new Request(`http://shop.test/?outcome=${outcome}`));
    expect((await call('ok')).status).toBe(200);
    expect((await call('fail')).status).toBe(401);
    await expect(call('throw')).rejects.toThrow('handler failed');
    expect(seen).toEqual([200, 401, undefined]);
  });
});
