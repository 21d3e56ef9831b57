import type { LimitEvent } from '@sluice/core/adapter';
import { FAKE_EPOCH, type FakeClock } from '../../core/test/contract/fake-clock';
import type { ContractHelpers } from './contract-helpers';
import { MOUNTS, type AdapterDriver } from './drivers';

/**
 * The adapter contract's replies: the rate headers of each draft, the status, a fallback
 * (static or the framework's handler) and `dryRun`.
 */
export function describeRepliesContract(
  driver: AdapterDriver,
  { serve, get, clock: currentClock }: ContractHelpers,
): void {
  describe('replies', () => {
    let clock: FakeClock;
    beforeEach(() => {
      clock = currentClock();
    });

    const RATE_HEADERS = [
      'ratelimit',
      'ratelimit-policy',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ];
    test.each<[string, unknown, Record<string, string>]>([
      ['draft-8', undefined, { 'ratelimit-policy': '"6r/m";q=1;w=10', ratelimit: '"6r/m";r=0;t=10' }],
      ['draft-8', 'draft-8', { 'ratelimit-policy': '"6r/m";q=1;w=10', ratelimit: '"6r/m";r=0;t=10' }],
      ['draft-7', 'draft-7', { 'ratelimit-policy': '1;w=10', ratelimit: 'limit=1, remaining=0, reset=10' }],
      [
        'draft-6',
        'draft-6',
        {
          'ratelimit-policy': '1;w=10',
          'ratelimit-limit': '1',
          'ratelimit-remaining': '0',
          'ratelimit-reset': '10',
        },
      ],
      [
        'legacy',
        'legacy',
        {
          'x-ratelimit-limit': '1',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String((FAKE_EPOCH + 10_000) / 1000),
        },
      ],
      ['false', false, {}],
    ])('headers %s (%p): exact strings', async (_name, headers, expected) => {
      const app = await serve({ rate: '6r/m', clock, ...(headers === undefined ? {} : { headers }) });
      const res = await get(app);
      const sent = Object.fromEntries(
        RATE_HEADERS.filter((h) => h in res.headers).map((h) => [h, res.headers[h]]),
      );
      expect(sent).toEqual(expected);
      const limited = await get(app);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('10');
    });

    test('status 503 as nginx; a cost that can never pass gets no Retry-After', async () => {
      const nginx = await serve({ rate: '6r/m', clock, status: 503 });
      await get(nginx);
      const unavailable = await get(nginx);
      expect(unavailable.status).toBe(503);
      expect(unavailable.headers['retry-after']).toBe('10');
      const heavy = await serve({ rate: '6r/m', clock, cost: 2 });
      const never = await get(heavy, '/', { Accept: 'application/json' });
      expect(never.status).toBe(429);
      expect(never.headers['retry-after']).toBeUndefined();
      expect(never.body.error).toBe('cost_exceeds_capacity');
    });

    test('fallback: a static degraded reply instead of the rejection', async () => {
      const app = await serve({
        rate: '1/1m',
        clock,
        fallback: { body: { cached: true }, headers: { 'X-Cache': 'HIT' } },
      });
      await get(app);
      const degraded = await get(app);
      expect(degraded.status).toBe(200);
      expect(degraded.body).toEqual({ cached: true });
      expect(degraded.headers['content-type']).toMatch(/^application\/json/);
      expect(degraded.headers['x-cache']).toBe('HIT');
      // One rule for every reply to a refused request: Retry-After, whatever the status.
      expect(degraded.headers['retry-after']).toBe('60');
      expect(degraded.headers.ratelimit).toBe('"1/1m";r=0;t=60');
      const html = await serve({
        rate: '1/1m',
        clock,
        fallback: { status: 503, body: '<p>busy</p>', type: 'text/html; charset=utf-8' },
      });
      await get(html);
      const busy = await get(html);
      expect([busy.status, busy.text, busy.headers['content-type'], busy.headers['retry-after']]).toEqual([
        503,
        '<p>busy</p>',
        'text/html; charset=utf-8',
        '60',
      ]);
      expect(app.handled + html.handled).toBe(2);
    });

    test.each(MOUNTS)('fallback: the framework handler receives the decision (%s)', async (mount) => {
      const app = await serve({ rate: '1/1m', clock, fallback: driver.fallbackHandler(200) }, mount);
      await get(app);
      const handled = await get(app);
      expect(handled.status).toBe(200);
      expect(handled.body).toEqual({ handled: true, remaining: 0 });
      expect(app.handled).toBe(1);
    });

    test('dryRun with block: a blocked key passes, reported as rejected (reason blocked)', async () => {
      const events: Array<LimitEvent<unknown>> = [];
      const app = await serve({
        rate: '1/1m',
        clock,
        dryRun: true,
        block: { duration: '10m' },
        onLimit: (e: LimitEvent<unknown>) => events.push(e),
      });
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push([(await get(app)).status, (await get(app)).headers['sluice-dry-run']]);
      expect(statuses.map(([status]) => status)).toEqual([200, 200, 200]);
      expect(app.handled).toBe(6);
      expect(events.map((e) => [e.dryRun, e.decision.allowed, e.decision.reason])).toEqual([
        [true, false, 'limited'],
        ...Array.from({ length: 4 }, () => [true, false, 'blocked']),
      ]);
    });

    test('dryRun never rejects, but reports with a header and events', async () => {
      const events: Array<LimitEvent<unknown>> = [];
      const app = await serve({
        rate: '1/1m',
        clock,
        dryRun: true,
        onLimit: (e: LimitEvent<unknown>) => events.push(e),
      });
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await get(app);
        statuses.push([res.status, res.headers['sluice-dry-run'], res.headers['retry-after']]);
      }
      expect(statuses).toEqual([
        [200, undefined, undefined],
        [200, 'rejected', undefined],
        [200, 'rejected', undefined],
      ]);
      expect(app.handled).toBe(3);
      expect(events.map((e) => [e.dryRun, e.decision.allowed])).toEqual([
        [true, false],
        [true, false],
      ]);
    });
  });
}
