import { createLimiter } from '../../src';
import {
  createHttpLimiter,
  rateLimitHeaders,
  type HttpOutcome,
  type HttpRequest,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';

type Handler = () => void;
type Options = RateLimitOptions<unknown, Handler>;

const http = (accept = ''): HttpRequest => ({
  remoteAddress: '203.0.113.9',
  url: '/',
  headers: accept === '' ? {} : { accept },
});

let clock: FakeClock;
beforeEach(() => {
  clock = fakeClock();
});

const decide = (options: Options | Options[]) => {
  const limits = createHttpLimiter<unknown, Handler>(options);
  return async (accept = ''): Promise<HttpOutcome<Handler>> =>
    limits.decideSync({}, http(accept)) ?? (await limits.decide({}, http(accept)));
};

// The HTTP layer hands out one header list and one reply while they repeat: what it shares must
// be exactly what it would have built, and a change in any number must show.
describe('answers shared while they repeat', () => {
  test('a flood of refusals within one second shares one reply; the next second gets its own', async () => {
    const next = decide({ rate: '1/1m', clock });
    await next();
    const first = await next();
    const second = await next();
    expect(second).toBe(first);
    expect(first).toMatchObject({ kind: 'reply', status: 429 });
    expect(first.headers).toEqual([
      ['RateLimit-Policy', '"1/1m";q=1;w=60'],
      ['RateLimit', '"1/1m";r=0;t=60'],
      ['Retry-After', '60'],
    ]);
    clock.advance(1000);
    const later = await next();
    expect(later).not.toBe(first);
    expect(later.headers).toContainEqual(['Retry-After', '59']);
    expect(later.headers).toContainEqual(['RateLimit', '"1/1m";r=0;t=59']);
  });

  test('the body follows each request’s Accept header, whatever the previous one asked', async () => {
    const next = decide({ rate: '1/1m', clock });
    await next();
    const json = await next('application/json');
    const text = await next('text/plain');
    const jsonAgain = await next('application/json');
    expect([json.kind, text.kind]).toEqual(['reply', 'reply']);
    expect(json).toMatchObject({ type: 'application/json; charset=utf-8' });
    expect(text).toMatchObject({
      type: 'text/plain; charset=utf-8',
      body: 'Too many requests, retry in 60 s.\n',
    });
    expect(jsonAgain).toEqual(json);
  });

  test('admitted requests: the headers rateLimitHeaders gives, for every mode', async () => {
    for (const headers of ['draft-8', 'draft-7', 'draft-6', 'legacy', false] as const) {
      const reference = createLimiter({ rate: '3/1s', clock });
      const next = decide({
        rate: '3/1s',
        clock,
        headers,
        policyName: headers === 'draft-8' ? 'api' : undefined,
      });
      for (let i = 0; i < 4; i++) {
        const outcome = await next();
        const expected = rateLimitHeaders(headers, await reference.consume('203.0.113.9'), {
          policyName: headers === 'draft-8' ? 'api' : undefined,
          nowMs: clock(),
        });
        expect(outcome.headers).toEqual(
          outcome.kind === 'reply' ? [...expected, ['Retry-After', '1']] : expected,
        );
        clock.advance(100);
      }
    }
  });

  test('with headers off, admitted requests share one outcome without headers', async () => {
    const next = decide({ rate: '5/1s', clock, headers: false });
    const first = await next();
    expect(first).toEqual({ kind: 'next', headers: [] });
    expect(await next()).toBe(first);
  });

  test('a dry-run report never sticks to the shared list', async () => {
    const next = decide({ rate: '1/1m', clock, dryRun: true });
    const admitted = await next();
    const reported = await next();
    expect(reported.headers).toContainEqual(['Sluice-Dry-Run', 'rejected']);
    expect(admitted.headers).not.toContainEqual(['Sluice-Dry-Run', 'rejected']);
    expect(admitted.headers).toHaveLength(2);
  });

  test('an override’s own policy gets its own name and RateLimit-Policy', async () => {
    const limits = createHttpLimiter<{ gold: boolean }, Handler>({
      rate: '1/1m',
      clock,
      overrides: (_key, req) => (req.gold ? '5/1m' : undefined),
    });
    const plain = limits.decideSync({ gold: false }, http());
    const gold = limits.decideSync({ gold: true }, http());
    expect(plain?.headers[0]).toEqual(['RateLimit-Policy', '"1/1m";q=1;w=60']);
    expect(gold?.headers[0]).toEqual(['RateLimit-Policy', '"5/1m";q=5;w=60']);
  });
});
