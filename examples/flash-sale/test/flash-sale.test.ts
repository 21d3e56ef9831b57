import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { useRedisServer } from '../../../packages/core/test/harness/redis-fixtures';
import { drive, sale } from '../src/replay';
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

  test('metrics and the dashboard: every zone counted by name; the replay drives the running shop', async () => {
    shop = await start({ port: 0 });
    expect(shop.dashboardUrl).toBe(`${shop.url}/_sluice/`);
    const page = await fetch(shop.dashboardUrl);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    // One second of sale, in real time.
    const counts = await drive(shop.url, sale(1, 100));
    const served = Object.values(counts).reduce((sum, row) => sum + row.placed + row.busy + row.refused, 0);
    expect(served).toBe(100);
    const text = await (await fetch(shop.metricsUrl)).text();
    const decisions = (zone: string, outcome: string) =>
      Number(
        new RegExp(`sluice_decisions_total\\{limiter="${zone}",outcome="${outcome}"\\} (\\d+)`).exec(
          text,
        )?.[1],
      );
    // Each refusal is counted by the one zone that refused: the SKU zone's become the busy page,
    // the address and user zones' the 429s.
    const total = (column: 'placed' | 'busy' | 'refused') =>
      Object.values(counts).reduce((sum, row) => sum + row[column], 0);
    expect(total('busy')).toBeGreaterThan(0);
    expect(decisions('seckill-sku', 'limited')).toBe(total('busy'));
    expect(decisions('seckill-ip', 'limited') + decisions('seckill-user', 'limited')).toBe(total('refused'));
    expect(decisions('seckill-sku', 'admitted')).toBeGreaterThanOrEqual(total('placed'));
    // The scrape and the page went around the limits: the shop-wide zones saw neither.
    expect(decisions('server', 'admitted') + decisions('server', 'limited')).toBe(0);
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
