import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { useRedisServer } from '../../../packages/core/test/harness/redis-fixtures';
import { start, type RunningShop } from '../src/server';
import { createShop } from '../src/shop';

const run = promisify(execFile);

/** Runs a printed command line as a user would paste it (async: the server shares this process). */
async function shell(line: string): Promise<string[]> {
  const { stdout } = await run('bash', ['-c', line]);
  return stdout.trim().split('\n');
}

/** The three printed curl lines show an admitted, a degraded and a limited reply. */
async function expectPrintedCurlsWork(shop: RunningShop): Promise<void> {
  const [admitted, degraded, limited] = shop.curls as [string, string, string];
  expect(await shell(admitted)).toEqual([expect.stringMatching(/"served":"live".*-> HTTP 200$/)]);
  const sku = await shell(degraded);
  expect(sku).toHaveLength(7);
  expect(sku.slice(0, 6).every((line) => /"served":"live".*-> HTTP 200$/.test(line))).toBe(true);
  expect(sku[6]).toMatch(/"served":"cached","retryAfter":10\}.*-> HTTP 200$/);
  const demo = await shell(limited);
  expect(demo.slice(0, 2).every((line) => line.endsWith('-> HTTP 200'))).toBe(true);
  // The text body ends with a newline, so curl's status line follows on its own line.
  expect(demo.slice(2)).toEqual(['Too many requests, retry in 30 s.', '  -> HTTP 429']);
}

describe('flash-sale demo', () => {
  let shop: RunningShop | undefined;
  afterEach(async () => {
    await shop?.close();
    shop = undefined;
  });

  test('in memory: the printed curl lines show admitted, degraded and limited replies', async () => {
    shop = await start({ port: 0 });
    expect(shop.storeName).toBe('memory');
    await expectPrintedCurlsWork(shop);
  });

  describe('with REDIS_URL', () => {
    const redis = useRedisServer();

    test('the same replies, with the limits kept in Redis', async () => {
      const { host, port } = redis.server();
      shop = await start({ port: 0, redisUrl: `redis://${host}:${port}` });
      expect(shop.storeName).toMatch(/^Redis at /);
      await expectPrintedCurlsWork(shop);
      const keys = await redis.client().keys('flash:*');
      expect(keys.some((key) => key.startsWith('flash:sku:'))).toBe(true);
      expect(keys.some((key) => key.startsWith('flash:user:'))).toBe(true);
    });
  });

  test('the zones, on a fake clock: per SKU refills one every 10 s; per IP 21 at once', async () => {
    let now = 1_700_006_400_000;
    const app = createShop({ clock: () => now });
    const sku = () => request(app).get('/ratelimit/sku?sku_id=ps6-preorder');
    for (let i = 0; i < 6; i++) expect((await sku()).body.served).toBe('live');
    expect((await sku()).body).toMatchObject({ served: 'cached', retryAfter: 10 });
    now += 10_000;
    expect((await sku()).body.served).toBe('live');
    expect((await request(app).get('/ratelimit/sku?sku_id=nope')).status).toBe(404);

    const ipApp = createShop({ clock: () => now });
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await request(ipApp).get('/')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(21);
    expect(statuses[21]).toBe(429);
  });
});
