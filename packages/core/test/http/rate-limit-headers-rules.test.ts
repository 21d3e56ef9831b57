import { createLimiter, type Decision } from '../../src';
import { rateLimitHeaders } from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';

/** Decisions of a limiter with 10r/s and 1000/1h (the quota of issue 7). */
async function twoRules(n: number, rate: readonly string[] = ['10r/s', '1000/1h']): Promise<Decision[]> {
  const limiter = createLimiter({ rate, clock: fakeClock() });
  const out: Decision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.consume('k'));
  return out;
}

describe('rate-limit headers with several rules', () => {
  test('draft-8 lists every rule in RateLimit-Policy and in RateLimit, each under its own name', async () => {
    const [first] = await twoRules(1);
    expect(rateLimitHeaders('draft-8', first as Decision)).toEqual([
      ['RateLimit-Policy', '"10r/s";q=1;w=1, "1000/1h";q=1000;w=3600'],
      ['RateLimit', '"10r/s";r=0;t=1, "1000/1h";r=999;t=4'],
    ]);
  });

  test('draft-8 names: the policyName goes before each rate, and a name already used gets #<n>', async () => {
    const [first] = await twoRules(1);
    expect(rateLimitHeaders('draft-8', first as Decision, { policyName: 'api' })[0]).toEqual([
      'RateLimit-Policy',
      '"api:10r/s";q=1;w=1, "api:1000/1h";q=1000;w=3600',
    ]);
    const [same] = await twoRules(1, ['5/1s', '5/1s']);
    expect(rateLimitHeaders('draft-8', same as Decision)[1]).toEqual([
      'RateLimit',
      '"5/1s";r=4;t=1, "5/1s#2";r=4;t=1',
    ]);
  });

  test('a rejection: draft-8 still lists both, the one-limit forms report the rejecting rule', async () => {
    const [, refused] = (await twoRules(2)) as [Decision, Decision];
    expect(refused).toMatchObject({ allowed: false, limit: 1, remaining: 0 });
    expect(rateLimitHeaders('draft-8', refused)).toEqual([
      ['RateLimit-Policy', '"10r/s";q=1;w=1, "1000/1h";q=1000;w=3600'],
      // The refused request took nothing from the hourly quota.
      ['RateLimit', '"10r/s";r=0;t=1, "1000/1h";r=999;t=4'],
    ]);
    expect(rateLimitHeaders('draft-7', refused)).toEqual([
      ['RateLimit-Policy', '1;w=1'],
      ['RateLimit', 'limit=1, remaining=0, reset=1'],
    ]);
    expect(rateLimitHeaders('draft-6', refused)[1]).toEqual(['RateLimit-Limit', '1']);
    expect(rateLimitHeaders('legacy', refused, { nowMs: 1_700_000_000_000 })[0]).toEqual([
      'X-RateLimit-Limit',
      '1',
    ]);
  });

  test('admitted: the one-limit forms report the most restrictive rule', async () => {
    const limiter = createLimiter({ rate: ['100/1s', '3/1m'], clock: fakeClock() });
    const d = await limiter.consume('k');
    expect(rateLimitHeaders('draft-7', d)).toEqual([
      ['RateLimit-Policy', '3;w=60'],
      ['RateLimit', 'limit=3, remaining=2, reset=20'],
    ]);
  });
});
