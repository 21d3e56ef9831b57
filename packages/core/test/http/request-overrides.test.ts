import { createLimiter } from '../../src';
import {
  createHttpLimiter,
  type CallbackErrorEvent,
  type HttpOutcome,
  type HttpRequest,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';

type Req = { readonly tier?: string };
type Handler = (req: Req) => void;
type Options = RateLimitOptions<Req, Handler>;

const http: HttpRequest = { remoteAddress: '203.0.113.9', url: '/', headers: {} };
const gold: Req = { tier: 'gold' };

let clock: FakeClock;
beforeEach(() => {
  clock = fakeClock();
});

/** Decides `n` requests, on the synchronous path when the limit allows it. */
async function kinds(
  limits: ReturnType<typeof createHttpLimiter<Req, Handler>>,
  request: Req,
  n: number,
): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const outcome: HttpOutcome<Handler> =
      limits.decideSync(request, http) ?? (await limits.decide(request, http));
    out.push(outcome.kind);
  }
  return out;
}

describe('overrides: the request is the function’s second argument', () => {
  const tiered = (key: string, req: Req) => (req.tier === 'gold' ? '3/1m' : undefined);

  test('on the synchronous path (a key template, a memory store)', async () => {
    const limits = createHttpLimiter<Req, Handler>({ rate: '1/1m', clock, overrides: tiered });
    expect(limits.decideSync({}, http)).toBeDefined();
    expect(await kinds(limits, {}, 2)).toEqual(['reply', 'reply']);
    expect(await kinds(limits, gold, 4)).toEqual(['next', 'next', 'next', 'reply']);
  });

  test('on the general path (a key function) and with several limits', async () => {
    const seen: unknown[] = [];
    const limits = createHttpLimiter<Req, Handler>([
      { rate: '10/1m', clock, key: () => 'all' },
      {
        rate: '1/1m',
        clock,
        key: () => 'k',
        overrides: (key, req) => {
          seen.push(req);
          return req.tier === 'gold' ? '3/1m' : undefined;
        },
      },
    ]);
    expect(limits.decideSync(gold, http)).toBeUndefined();
    expect(await kinds(limits, gold, 4)).toEqual(['next', 'next', 'next', 'reply']);
    // Several limits are decided together, each asked once with the request (no look-ahead).
    expect(seen).toHaveLength(4);
    expect(seen.every((req) => req === gold)).toBe(true);
  });

  test('the look-ahead of several limits predicts at the request’s own rate (issue 16.5)', async () => {
    // A gold user's 2 admissions may spend 2 SKU units, never 10: the peek must see gold's '2/1m'.
    const limits = createHttpLimiter<Req, Handler>([
      { rate: '10/1m', clock, key: () => 'sku:1', algorithm: 'fixed-window' },
      {
        rate: '1/1m',
        clock,
        key: (req) => req.tier ?? 'anonymous',
        overrides: (_key, req) => (req.tier === 'gold' ? '2/1m' : undefined),
      },
    ]);
    expect(await kinds(limits, gold, 10)).toEqual(['next', 'next', ...Array(8).fill('reply')]);
    const sku = await limits.limiters[0]?.peek('sku:1');
    expect(sku?.remaining).toBe(8);
    // The next user still finds SKU units left.
    expect(await kinds(limits, { tier: 'silver' }, 1)).toEqual(['next']);
  });

  test('a ready limiter gets the request as context too', async () => {
    const contexts: unknown[] = [];
    const limiter = createLimiter({
      rate: '1/1m',
      clock,
      overrides: (_key, context) => {
        contexts.push(context);
        return undefined;
      },
    });
    const limits = createHttpLimiter<Req, Handler>({ limiter });
    await kinds(limits, gold, 1);
    expect(contexts).toEqual([gold]);
  });

  test('one that throws: the limit’s own rate, reported to onCallbackError with the request', async () => {
    const events: Array<CallbackErrorEvent<Req>> = [];
    const limits = createHttpLimiter<Req, Handler>({
      rate: '1/1m',
      clock,
      overrides: (_key, req) => {
        if (req.tier === 'broken') throw new Error('tier service down');
        return undefined;
      },
      onCallbackError: (event) => events.push(event),
    });
    const broken: Req = { tier: 'broken' };
    expect(await kinds(limits, broken, 2)).toEqual(['next', 'reply']);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ request: broken, source: 'overrides', key: '203.0.113.9' });
    expect(events[0]?.error.message).toBe(
      'overrides "Error: tier service down": the function threw; the key is limited by the limit\'s own rate',
    );
    // reset(key) has no request: a function reading it throws, silently, and the own state is reset.
    await expect(limits.limiters[0]?.reset('203.0.113.9')).resolves.toBeUndefined();
    expect(events).toHaveLength(2);
    expect(await kinds(limits, {}, 1)).toEqual(['next']);
  });

  test('an async one (a client can make it reject): the own rate, both reported, no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const events: Array<CallbackErrorEvent<Req>> = [];
      const limits = createHttpLimiter<Req, Handler>({
        rate: '1/1m',
        clock,
        overrides: (async (_key: string, req: Req) => {
          if (req.tier === undefined)
            throw new TypeError("Cannot read properties of undefined (reading 'plan')");
          return '3/1m';
        }) as unknown as (key: string, req: Req) => string,
        onCallbackError: (event) => events.push(event),
      });
      expect(await kinds(limits, {}, 2)).toEqual(['next', 'reply']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      // Per request: the promise returned, then what it rejected with.
      expect(events.map((e) => e.error.message)).toEqual([
        expect.stringMatching(
          /^overrides .*the function returned it, expected a rate, a list of rates or undefined, at once \(not a promise\); the key is limited by the limit's own rate$/,
        ),
        expect.stringMatching(/^overrides .*the function returned it/),
        `overrides "TypeError: Cannot read properties of undefined (reading 'plan')": the function threw; the key is limited by the limit's own rate`,
        `overrides "TypeError: Cannot read properties of undefined (reading 'plan')": the function threw; the key is limited by the limit's own rate`,
      ]);
      expect(events[0]).toMatchObject({ request: {}, source: 'overrides', key: '203.0.113.9' });
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('rules type-check and decide as createLimiter’s', async () => {
    const options: Options = {
      rules: [{ rate: '2/1s' }, { algorithm: 'fixed-window', rate: '3/1h' }],
      clock,
      overrides: (_key, req) => (req.tier === 'gold' ? ['10/1s', '100/1h'] : undefined),
    };
    const limits = createHttpLimiter<Req, Handler>(options);
    expect(limits.limiters[0]?.policies.map((p) => p.algorithm)).toEqual(['gcra', 'fixed-window']);
    expect(await kinds(limits, {}, 3)).toEqual(['next', 'next', 'reply']);
    const outcome = limits.decideSync(gold, http);
    expect(outcome?.headers[0]).toEqual(['RateLimit-Policy', '"10/1s";q=10;w=1, "100/1h";q=100;w=3600']);
  });
});
