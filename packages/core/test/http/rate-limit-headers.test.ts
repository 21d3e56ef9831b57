import { createLimiter, type Decision, type LimiterOptions } from '../../src';
import { prefersJson, rateLimitHeaders, rejectionBody, retryAfterSeconds } from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';

async function decisionsOf(options: LimiterOptions, n: number): Promise<Decision[]> {
  const limiter = createLimiter({ clock: fakeClock(), ...options });
  const out: Decision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.consume('k'));
  return out;
}

describe('rateLimitHeaders', () => {
  // 6r/m without burst: one request at once, back after 10 s (nginx's own example rate).
  let first: Decision;
  let limited: Decision;
  beforeAll(async () => {
    [first, limited] = (await decisionsOf({ rate: '6r/m' }, 2)) as [Decision, Decision];
  });

  test('draft-8: RateLimit-Policy and RateLimit structured fields with q, w, r, t', () => {
    expect(rateLimitHeaders('draft-8', first)).toEqual([
      ['RateLimit-Policy', '"6r/m";q=1;w=10'],
      ['RateLimit', '"6r/m";r=0;t=10'],
    ]);
    expect(rateLimitHeaders('draft-8', first, { policyName: 'say "hi" \\' })).toEqual([
      ['RateLimit-Policy', '"say \\"hi\\" \\\\";q=1;w=10'],
      ['RateLimit', '"say \\"hi\\" \\\\";r=0;t=10'],
    ]);
  });

  test('draft-7, draft-6, legacy and false', () => {
    expect(rateLimitHeaders('draft-7', first)).toEqual([
      ['RateLimit-Policy', '1;w=10'],
      ['RateLimit', 'limit=1, remaining=0, reset=10'],
    ]);
    expect(rateLimitHeaders('draft-6', first)).toEqual([
      ['RateLimit-Policy', '1;w=10'],
      ['RateLimit-Limit', '1'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '10'],
    ]);
    expect(rateLimitHeaders('legacy', first, { nowMs: 1_700_000_000_500 })).toEqual([
      ['X-RateLimit-Limit', '1'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1700000011'],
    ]);
    expect(rateLimitHeaders(false, first)).toEqual([]);
  });

  test('q and w: capacity and the seconds it takes to come back, for buckets and windows', async () => {
    const [burst] = await decisionsOf({ rate: '6r/m', burst: 5 }, 1);
    expect(rateLimitHeaders('draft-8', burst as Decision)[0]).toEqual([
      'RateLimit-Policy',
      '"6r/m";q=6;w=60',
    ]);
    const [window] = await decisionsOf({ rate: '100/1m', algorithm: 'fixed-window' }, 1);
    expect(rateLimitHeaders('draft-8', window as Decision)).toEqual([
      ['RateLimit-Policy', '"100/1m";q=100;w=60'],
      ['RateLimit', '"100/1m";r=99;t=60'],
    ]);
    const [fast] = await decisionsOf({ rate: '10r/s', burst: 20 }, 1);
    // 21 requests at 10 per second come back in 2.1 s: rounded up, a client is never early.
    expect(rateLimitHeaders('draft-7', fast as Decision)[0]).toEqual(['RateLimit-Policy', '21;w=3']);
  });

  test('Retry-After: whole seconds rounded up; none when admitted or when the cost can never pass', async () => {
    expect(retryAfterSeconds(first)).toBeUndefined();
    expect(limited.retryAfterMs).toBe(10_000);
    expect(retryAfterSeconds(limited)).toBe(10);
    expect(retryAfterSeconds({ ...limited, retryAfterMs: 1 })).toBe(1);
    expect(retryAfterSeconds({ ...limited, retryAfterMs: 1001 })).toBe(2);
    const limiter = createLimiter({ rate: '6r/m', clock: fakeClock() });
    const tooBig = await limiter.consume('k', { cost: 5 });
    expect(tooBig.reason).toBe('cost-exceeds-capacity');
    expect(retryAfterSeconds(tooBig)).toBeUndefined();
  });
});

describe('replies', () => {
  test.each([
    ['', false],
    ['*/*', false],
    ['application/json', true],
    ['application/problem+json', true],
    ['text/html, application/json;q=0.9', true],
    ['text/plain, application/json', false],
    ['text/*;q=0.5, application/json;q=0.8', true],
    ['application/json;q=0, */*', false],
    ['text/html', false],
    ['application/*', true],
  ])('prefersJson(%j) is %s', (accept, json) => {
    expect(prefersJson(accept)).toBe(json);
  });

  test('rejection bodies: JSON or text, with the retry time', async () => {
    const [, limited] = (await decisionsOf({ rate: '6r/m' }, 2)) as [Decision, Decision];
    expect(rejectionBody(limited, 'application/json')).toEqual({
      type: 'application/json; charset=utf-8',
      body: '{"error":"rate_limited","message":"Too many requests, retry in 10 s.","retryAfter":10}',
    });
    expect(rejectionBody(limited, '*/*')).toEqual({
      type: 'text/plain; charset=utf-8',
      body: 'Too many requests, retry in 10 s.\n',
    });
    expect(JSON.parse(rejectionBody(undefined, 'application/json').body)).toEqual({
      error: 'missing_key',
      message: 'This request has no rate-limit key.',
    });
    expect(rejectionBody({ ...limited, reason: 'cost-exceeds-capacity', retryAfterMs: 0 }, '').body).toBe(
      'This request costs more than the 1 allowed at once.\n',
    );
  });
});
