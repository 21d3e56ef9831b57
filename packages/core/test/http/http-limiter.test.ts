import { createLimiter, SluiceConfigError, type Store } from '../../src';
import {
  createHttpLimiter,
  type HttpOutcome,
  type HttpRequest,
  type LimitEvent,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';

type Req = { user?: string };
type Handler = (req: Req) => void;
type Options = RateLimitOptions<Req, Handler>;

function http(url = '/', headers: HttpRequest['headers'] = {}, remoteAddress = '203.0.113.9'): HttpRequest {
  return { remoteAddress, url, headers };
}

let clock: FakeClock;
beforeEach(() => {
  clock = fakeClock();
});

const limiterOf = (options: Options | Options[]) => createHttpLimiter<Req, Handler>(options);

describe('createHttpLimiter: one limit', () => {
  test('admits, then rejects with headers, Retry-After and a body; skips empty keys', async () => {
    const limits = limiterOf({ rate: '6r/m', clock, key: '$arg_sku_id' });
    const ok = await limits.decide({}, http('/?sku_id=1'));
    expect(ok).toEqual({
      kind: 'next',
      headers: [
        ['RateLimit-Policy', '"6r/m";q=1;w=10'],
        ['RateLimit', '"6r/m";r=0;t=10'],
      ],
    });
    const no = await limits.decide({}, http('/?sku_id=1', { accept: 'application/json' }));
    expect(no).toMatchObject({ kind: 'reply', status: 429, type: 'application/json; charset=utf-8' });
    expect(no.headers).toContainEqual(['Retry-After', '10']);
    expect(await limits.decide({}, http('/'))).toEqual({ kind: 'next', headers: [] });
  });

  test('onMissingKey reject refuses without counting; shared puts keyless requests in one bucket', async () => {
    const reject = limiterOf({
      rate: '6r/m',
      clock,
      key: '$http_user_id',
      onMissingKey: 'reject',
      status: 503,
    });
    // 400 whatever `status` says: the client must send the key, not wait and retry.
    expect(await reject.decide({}, http())).toMatchObject({ kind: 'reply', status: 400, headers: [] });
    const shared = limiterOf({ rate: '6r/m', clock, key: '$http_user_id', onMissingKey: 'shared' });
    expect((await shared.decide({}, http())).kind).toBe('next');
    expect((await shared.decide({}, http('/', {}, '198.51.100.7'))).kind).toBe('reply');
  });

  test('key, cost and skip functions receive the framework request', async () => {
    const limits = limiterOf({
      rate: '5/1m',
      clock,
      key: (req) => req.user,
      cost: async (req) => (req.user === 'big' ? 5 : 1),
      skip: (req) => req.user === 'admin',
    });
    expect((await limits.decide({ user: 'big' }, http())).kind).toBe('next');
    expect((await limits.decide({ user: 'big' }, http())).kind).toBe('reply');
    for (let i = 0; i < 10; i++) expect((await limits.decide({ user: 'admin' }, http())).kind).toBe('next');
    expect(await limits.decide({}, http())).toEqual({ kind: 'next', headers: [] });
    // A key that is not text is no key (reported through onCallbackError), never '[object Object]'.
    const bad = limiterOf({ rate: '5/1m', key: () => ({}) as unknown as string });
    await expect(bad.decide({}, http())).resolves.toEqual({ kind: 'next', headers: [] });
  });

  test('fallback: static reply keeps rate-limit headers and Retry-After, whatever its status', async () => {
    const limits = limiterOf({
      rate: '6r/m',
      clock,
      fallback: { body: { cached: true }, headers: { 'Cache-Control': 'max-age=5' } },
    });
    await limits.decide({}, http());
    const degraded = await limits.decide({}, http());
    expect(degraded).toEqual({
      kind: 'reply',
      status: 200,
      type: 'application/json; charset=utf-8',
      body: '{"cached":true}',
      headers: [
        ['RateLimit-Policy', '"6r/m";q=1;w=10'],
        ['RateLimit', '"6r/m";r=0;t=10'],
        ['Retry-After', '10'],
        ['Cache-Control', 'max-age=5'],
      ],
    });
    const handler: Handler = () => undefined;
    const withHandler = limiterOf({ rate: '6r/m', clock, fallback: handler, headers: false });
    await withHandler.decide({}, http());
    const outcome = (await withHandler.decide({}, http())) as Extract<
      HttpOutcome<Handler>,
      { kind: 'handler' }
    >;
    expect(outcome.kind).toBe('handler');
    expect(outcome.handler).toBe(handler);
    expect(outcome.decision.allowed).toBe(false);
    expect(outcome.headers).toEqual([['Retry-After', '10']]);
  });

  test('dryRun never rejects nor delays, but reports with a header and onLimit', async () => {
    const events: Array<LimitEvent<Req>> = [];
    const limits = limiterOf({ rate: '6r/m', clock, dryRun: true, onLimit: (e) => events.push(e) });
    await limits.decide({}, http());
    const outcome = await limits.decide({ user: 'x' }, http());
    expect(outcome.kind).toBe('next');
    expect(outcome.headers).toContainEqual(['Sluice-Dry-Run', 'rejected']);
    expect(outcome.headers).not.toContainEqual(expect.arrayContaining(['Retry-After']));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ request: { user: 'x' }, dryRun: true, decision: { allowed: false } });

    const delayed = limiterOf({ rate: '1r/s', burst: 3, algorithm: 'leaky-bucket', clock, dryRun: true });
    await delayed.decide({}, http());
    const held = await delayed.decide({}, http());
    expect(held.kind).toBe('next');
    expect(held.headers).toContainEqual(['Sluice-Dry-Run', 'delayed']);
  });

  test('delay: a leaky bucket without nodelay holds excess requests', async () => {
    const limits = limiterOf({ rate: '1r/s', burst: 3, algorithm: 'leaky-bucket', clock });
    expect((await limits.decide({}, http())).kind).toBe('next');
    expect(await limits.decide({}, http())).toMatchObject({ kind: 'delay', delayMs: 1000 });
    expect(await limits.decide({}, http())).toMatchObject({ kind: 'delay', delayMs: 2000 });
  });

  test("onStoreError 'fail-closed' replies 503 with Retry-After, whatever status says", async () => {
    const down: Store = { consume: () => Promise.reject(new Error('down')), reset: () => Promise.resolve() };
    const limits = limiterOf({ rate: '6r/m', clock, store: down, onStoreError: 'fail-closed', status: 429 });
    const outcome = await limits.decide({}, http('/', { accept: 'application/json' }));
    expect(outcome).toMatchObject({ kind: 'reply', status: 503 });
    expect(outcome.headers).toContainEqual(['Retry-After', expect.stringMatching(/^[1-9]\d*$/)]);
    expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({ error: 'store_unavailable' });
  });

  test('an onLimit listener that throws does not break the request', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const limits = limiterOf({
      rate: '6r/m',
      clock,
      onLimit: () => {
        throw new Error('oops');
      },
    });
    await limits.decide({}, http());
    expect((await limits.decide({}, http())).kind).toBe('reply');
    expect((await limits.decide({}, http())).kind).toBe('reply');
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  test('a cost that can never pass gets no Retry-After', async () => {
    const limits = limiterOf({ rate: '6r/m', clock, cost: 3 });
    const outcome = await limits.decide({}, http());
    expect(outcome).toMatchObject({ kind: 'reply', status: 429 });
    expect(outcome.headers.map(([name]) => name)).toEqual(['RateLimit-Policy', 'RateLimit']);
  });
});

describe('createHttpLimiter: several limits', () => {
  const ip = (extra: Partial<Options> = {}): Options =>
    ({ key: '$remote_addr', rate: '3/1m', clock, prefix: 'ip', ...extra }) as Options;
  const sku = (extra: Partial<Options> = {}): Options =>
    ({ key: '$arg_sku_id', rate: '1/1m', clock, prefix: 'sku', ...extra }) as Options;

  test('a request rejected by a later limit uses no unit of an earlier one', async () => {
    const limits = limiterOf([ip(), sku()]);
    const [ipLimiter] = limits.limiters;
    expect((await limits.decide({}, http('/?sku_id=a'))).kind).toBe('next');
    expect((await ipLimiter!.peek('203.0.113.9')).remaining).toBe(2);
    const rejected = await limits.decide({}, http('/?sku_id=a'));
    expect(rejected.kind).toBe('reply');
    // The SKU limit rejected; the IP limit still has both units the user had before.
    expect((await ipLimiter!.peek('203.0.113.9')).remaining).toBe(2);
    expect(rejected.headers).toContainEqual(['RateLimit', '"1/1m";r=0;t=60']);
    expect((await limits.decide({}, http('/?sku_id=b'))).kind).toBe('next');
    expect((await ipLimiter!.peek('203.0.113.9')).remaining).toBe(1);
  });

  test('the reply reports the most restrictive admitted decision', async () => {
    const limits = limiterOf([sku({ rate: '5/1m' }), ip({ rate: '2/1m' })]);
    const outcome = await limits.decide({}, http('/?sku_id=a'));
    expect(outcome.headers).toEqual([
      ['RateLimit-Policy', '"2/1m";q=2;w=60'],
      ['RateLimit', '"2/1m";r=1;t=30'],
    ]);
  });

  test('the rejecting limit chooses the reply: its status and fallback', async () => {
    const limits = limiterOf([ip({ rate: '2/1m' }), sku({ fallback: { body: 'cached page' } })]);
    await limits.decide({}, http('/?sku_id=a'));
    expect(await limits.decide({}, http('/?sku_id=a'))).toMatchObject({
      kind: 'reply',
      status: 200,
      body: 'cached page',
    });
    await limits.decide({}, http('/?sku_id=b'));
    expect(await limits.decide({}, http('/?sku_id=c'))).toMatchObject({ kind: 'reply', status: 429 });
  });

  test('a missing key refused by a later limit counts nothing in an earlier one', async () => {
    const limits = limiterOf([ip(), sku({ onMissingKey: 'reject' })]);
    expect((await limits.decide({}, http('/'))).kind).toBe('reply');
    expect((await limits.limiters[0]!.peek('203.0.113.9')).remaining).toBe(3);
  });

  test('a dry-run limit reports but does not refuse; the enforcing one still does', async () => {
    const limits = limiterOf([sku({ dryRun: true }), ip({ rate: '2/1m' })]);
    await limits.decide({}, http('/?sku_id=a'));
    const second = await limits.decide({}, http('/?sku_id=a'));
    expect(second.kind).toBe('next');
    expect(second.headers).toContainEqual(['Sluice-Dry-Run', 'rejected']);
    expect((await limits.decide({}, http('/?sku_id=b'))).kind).toBe('reply');
  });
});

describe('options', () => {
  test.each<[string, Record<string, unknown>]>([
    ['status', { status: 200 }],
    ['status', { status: '429' }],
    ['headers', { headers: 'draft-9' }],
    ['onMissingKey', { onMissingKey: 'allow' }],
    ['dryRun', { dryRun: 'yes' }],
    ['skip', { skip: true }],
    ['onLimit', { onLimit: 'log' }],
    ['key', { key: '$nope' }],
    ['key', { key: 42 }],
    ['cost', { cost: -1 }],
    ['fallback', { fallback: 'busy' }],
    ['fallback', { fallback: { status: 200 } }],
    ['fallback.status', { fallback: { body: '', status: 99 } }],
    ['fallback.colour', { fallback: { body: '', colour: 'red' } }],
    ['fallback.headers', { fallback: { body: '', headers: { a: 1 } } }],
    ['policyName', { policyName: 'é' }],
    ['trustProxy', { trustProxy: 'proxy.example' }],
    ['ipv6Subnet', { ipv6Subnet: 0 }],
    ['maxHeld', { maxHeld: -1 }],
    ['maxHeld', { maxHeld: 2.5 }],
    ['rate', { rate: '6r/x' }],
    ['rate', { rate: undefined }],
    ['limiter', { rate: undefined, limiter: {} }],
    // Without cancel, a held client that leaves would throw in the response's close listener.
    ['limiter', { rate: undefined, limiter: { consume: () => undefined, peek: () => undefined } }],
  ])('invalid %s throws SluiceConfigError naming it', (option, extra) => {
    const attempt = () => createHttpLimiter({ rate: '6r/m', ...extra } as Options);
    expect(attempt).toThrow(SluiceConfigError);
    expect(attempt).toThrow(expect.objectContaining({ option }));
  });

  test('unknown options are named, with the HTTP options in the message', () => {
    expect(() => createHttpLimiter({ rate: '6r/m', keys: 'x' } as unknown as Options)).toThrow(
      /^keys "x": unknown option; accepted: .*rate.*; HTTP options: key, cost/,
    );
  });

  test('a ready limiter cannot be combined with limiter options', () => {
    const limiter = createLimiter({ rate: '6r/m' });
    expect(() => createHttpLimiter({ limiter, burst: 2 } as unknown as Options)).toThrow(
      expect.objectContaining({ option: 'burst' }),
    );
    expect(createHttpLimiter({ limiter, key: '$uri', cost: 1 }).limiters[0]).toBe(limiter);
  });

  test('an empty array is refused', () => {
    expect(() => createHttpLimiter([])).toThrow(SluiceConfigError);
  });
});
