import { get as httpGet } from 'node:http';
import { createLimiter, SluiceConfigError } from '@sluice/core';
import { socketPeerAddress, type CallbackErrorEvent } from '@sluice/core/adapter';
import { withRateLimit } from '@sluice/hono';
import { serveFetch } from './serve';

/** Time stands still: these tests never wait for a limit to refill. */
const still = () => 1_700_006_400_000;

const ok = async () => Response.json({ ok: true });

describe('withRateLimit: what it refuses at creation', () => {
  test.each<[string, Parameters<typeof withRateLimit>[0]]>([
    ['the default key, without clientAddress', { rate: '1/1m' }],
    [
      '$remote_addr in a composed key, without clientAddress',
      { key: '$http_user_id:$remote_addr', rate: '1/1m' },
    ],
    ['a second limit keyed by the address', [{ key: '$http_user_id', rate: '1/1m' }, { rate: '1/1m' }]],
    ['clientAddress that is no function', { rate: '1/1m', clientAddress: 'x-real-ip' as never }],
  ])('%s: a SluiceConfigError naming clientAddress', (_name, options) => {
    expect(() => withRateLimit(options, ok)).toThrow(SluiceConfigError);
    expect(() => withRateLimit(options, ok)).toThrow(expect.objectContaining({ option: 'clientAddress' }));
  });

  test('an invalid option is named before clientAddress; a handler that is no function is refused', () => {
    expect(() => withRateLimit({ rate: '6r/x' }, ok)).toThrow(expect.objectContaining({ option: 'rate' }));
    expect(() => withRateLimit({ key: '$http_user_id', rate: '1/1m' }, 'ok' as never)).toThrow(
      expect.objectContaining({ option: 'handler' }),
    );
    expect(() => withRateLimit({ key: '$http_user_id', rate: '1/1m' }, ok)).not.toThrow();
  });
});

describe('withRateLimit: what it sends', () => {
  const clock = still;
  const byUser = { key: '$http_user_id', rate: '1/1m', clock } as const;
  const as = (user: string) => new Request('http://shop.test/', { headers: { 'User-Id': user } });

  test('rate-limit headers on a response whose headers are immutable (a redirect): on a copy', async () => {
    const limited = withRateLimit(byUser, async () => Response.redirect('http://shop.test/next', 303));
    const res = await limited(as('redirected'));
    expect([res.status, res.headers.get('location'), res.headers.get('ratelimit')]).toEqual([
      303,
      'http://shop.test/next',
      '"1/1m";r=0;t=60',
    ]);
  });

  test("a header the handler set itself is the handler's", async () => {
    const limited = withRateLimit(byUser, async () => new Response('x', { headers: { RateLimit: 'mine' } }));
    expect((await limited(as('own'))).headers.get('ratelimit')).toBe('mine');
  });

  test('a fallback that returns no Response is reported, and the default refusal goes out', async () => {
    const failures: Array<CallbackErrorEvent<Request>> = [];
    const limited = withRateLimit(
      { ...byUser, fallback: (() => ({ cached: true })) as never, onCallbackError: (e) => failures.push(e) },
      ok,
    );
    await limited(as('f'));
    const refused = await limited(as('f'));
    expect([refused.status, refused.headers.get('retry-after'), await refused.text()]).toEqual([
      429,
      '60',
      'Too many requests, retry in 60 s.\n',
    ]);
    expect(failures.map((f) => [f.source, (f.error.cause as Error).message])).toEqual([
      ['fallback', 'the fallback returned object, not a Response (return c.json(…) or new Response(…))'],
    ]);
  });

  test('$arg_ reads searchParams, as the handler does: %FF and %EF%BF%BD are both U+FFFD there', async () => {
    const limited = withRateLimit({ key: '$arg_sku_id', rate: '1/1m', clock }, ok);
    const at = (query: string) => limited(new Request(`http://shop.test/buy?${query}`));
    expect((await at('sku_id=%FF')).status).toBe(200);
    expect((await at('sku_id=%EF%BF%BD')).status).toBe(429);
    // Every value getAll gives: the same one repeated is that value, differing ones are refused.
    expect((await at('x=1&sku_id=a&sku_id=a')).status).toBe(200);
    expect((await at('sku_id=a')).status).toBe(429);
    expect((await at('sku_id=b&sku_id=a')).status).toBe(400);
    expect((await at('sku_id=&sku_id=c')).status).toBe(400);
  });
});

/**
 * Without Node's response at hand (a handler that does not pass `@hono/node-server`'s bindings
 * on, as on Bun or Deno), a held request watches the request's `signal`: on `@hono/node-server`
 * it aborts when the client leaves.
 */
test('a held request whose client leaves gives its turn back through the signal alone', async () => {
  const limiter = createLimiter({ algorithm: 'leaky-bucket', rate: '1r/s', burst: 2, clock: still });
  let ran = 0;
  let held = 0;
  const limited = withRateLimit<[address: string | undefined]>(
    { limiter, clientAddress: (_request, address) => address },
    async () => {
      ran++;
      return new Response('ok');
    },
  );
  const served = await serveFetch((request, env) => {
    const answer = limited(request, socketPeerAddress(env.incoming.socket));
    held++;
    return answer;
  });
  try {
    expect((await fetch(served.url)).status).toBe(200);
    const client = httpGet(served.url);
    client.on('error', () => undefined);
    while (held < 2) await new Promise((resolve) => setImmediate(resolve));
    // Held for 1 s: the client leaves well before.
    client.destroy();
    const deadline = Date.now() + 5000;
    while ((await limiter.peek('127.0.0.1')).remaining < 1 && Date.now() < deadline)
      await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toBe(1);
    expect((await limiter.peek('127.0.0.1')).remaining).toBe(1);
  } finally {
    await served.close();
  }
});
