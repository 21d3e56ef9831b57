import { RedisStore } from '@sluice/core';
import request from 'supertest';
import { useRedisServer } from '../../../packages/core/test/harness/redis-fixtures';
import { replay, sale } from '../src/replay';
import { HOT_SKU } from '../src/seckill';
import { createShop } from '../src/shop';

describe('/seckill/:sku', () => {
  const post = (app: ReturnType<typeof createShop>, sku: string, user: string, ip: string) =>
    request(app)
      .post(`/seckill/${sku}`)
      .set('user-id', user)
      .set('x-forwarded-for', ip)
      .set('accept', 'application/json');

  test('per user: 2 a second and 20 a minute, both or neither', async () => {
    let now = Date.UTC(2026, 10, 11);
    const app = createShop({ clock: () => now });
    const outcomes: string[] = [];
    // An attempt every 333 ms for 12 s: '2r/s' (no burst) lets one in every 500 ms, so every other
    // one in the cadence passes — 18 — and the minute's 20 are never reached: refused attempts
    // took nothing from the minute.
    for (let i = 0; i < 36; i++) {
      const response = await post(app, 'switch-2', 'alice', `198.51.100.${i}`);
      outcomes.push(response.status === 429 ? 'refused' : (response.body as { order: string }).order);
      now += 1000 / 3;
    }
    expect(outcomes.filter((o) => o === 'placed')).toHaveLength(18);
    expect(outcomes.filter((o) => o === 'busy')).toHaveLength(0);
    expect(outcomes.slice(0, 4)).toEqual(['placed', 'refused', 'placed', 'refused']);
  });

  test('without a user-id the request is refused (onMissingKey: reject)', async () => {
    const app = createShop({ clock: () => Date.UTC(2026, 10, 11) });
    const response = await request(app).post('/seckill/switch-2').set('x-forwarded-for', '198.51.100.1');
    // The client's error to fix (400), not a limit to wait out (429).
    expect(response.status).toBe(400);
  });

  test('the replayed sale: the hot SKU is held to its override, others to theirs, the rest get the busy page or 429', async () => {
    const counts = await replay(sale(3, 300));
    const hot = counts[HOT_SKU] as { placed: number; busy: number; refused: number };
    expect(hot.placed).toBeGreaterThan(0);
    expect(hot.placed).toBeLessThanOrEqual(3 * 20 + 1); // 20 a second, at most (warming up: fewer)
    expect(hot.busy).toBeGreaterThan(hot.placed);
    const total = Object.values(counts).reduce((sum, row) => sum + row.placed + row.busy + row.refused, 0);
    expect(total).toBe(900);
  }, 30_000);

  describe('on Redis', () => {
    const redis = useRedisServer();

    test('the replayed sale gives the same counts as in memory (warm-up, override, block cache and all)', async () => {
      // Redis expires keys on its own (real) clock: the replay's clock must run ahead of real
      // time, or a key could expire before the sale's time reached its TTL. 900 requests over
      // 30 s of sale take a few real seconds. Every decision from Redis, however loaded the
      // machine (jest runs other suites beside this one): a call slower than the default 50 ms
      // would be decided by the insurance store instead.
      const shots = sale(30, 30);
      const client = redis.client();
      const onRedis = await replay(shots, {
        store: new RedisStore({ client, prefix: 'replay' }),
        timeoutMs: 5000,
      });
      expect(onRedis).toEqual(await replay(shots));
      // Decided in Redis (the insurance store would write nothing there): the minute counters remain.
      expect(await client.keys('replay:flash:seckill-user:{bot-0}:*')).toContain(
        'replay:flash:seckill-user:{bot-0}:gcra@2:1',
      );
    }, 30_000);
  });
});
