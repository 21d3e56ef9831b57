import { start, type RunningShop } from '../src/server';

/** Names every plain object inherits: none of them is a SKU. */
const INHERITED = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

describe('unknown SKUs, over real sockets on 127.0.0.1', () => {
  let shop: RunningShop | undefined;
  let now = Date.UTC(2026, 10, 11);
  let base = '';
  beforeAll(async () => {
    shop = await start({ port: 0, clock: () => now });
    base = shop.url.replace('//localhost:', '//127.0.0.1:');
  });
  afterAll(async () => {
    await shop?.close();
  });

  test.each(INHERITED)('POST /seckill/%s is not on sale (404), never an order', async (sku) => {
    // A new user, address and second each time: no limit stands in the way of the answer.
    now += 10_000;
    const response = await fetch(`${base}/seckill/${sku}`, {
      method: 'POST',
      headers: { accept: 'application/json', 'user-id': `u-${sku}`, 'x-forwarded-for': '198.51.100.7' },
    });
    expect([response.status, await response.json()]).toEqual([404, { error: 'not on sale' }]);
  });

  test.each(INHERITED)(
    'GET /ratelimit/sku?sku_id=%s is an unknown sku_id (404), never served',
    async (sku) => {
      now += 10_000;
      const response = await fetch(`${base}/ratelimit/sku?sku_id=${encodeURIComponent(sku)}`, {
        headers: { 'x-forwarded-for': '198.51.100.8' },
      });
      const body = (await response.json()) as { error?: string; skus?: string[] };
      expect([response.status, body.error, body.skus]).toEqual([
        404,
        'unknown sku_id',
        ['iphone-17', 'switch-2', 'ps6-preorder'],
      ]);
    },
  );

  test('a SKU on sale is still ordered and served', async () => {
    now += 10_000;
    const order = await fetch(`${base}/seckill/switch-2`, {
      method: 'POST',
      headers: { accept: 'application/json', 'user-id': 'known', 'x-forwarded-for': '198.51.100.9' },
    });
    expect([order.status, await order.json()]).toEqual([
      200,
      { sku: 'switch-2', name: 'Nintendo Switch 2', order: 'placed' },
    ]);
    const page = await fetch(`${base}/ratelimit/sku?sku_id=iphone-17`);
    expect([page.status, await page.json()]).toEqual([
      200,
      { sku: 'iphone-17', name: 'iPhone 17', price: 799, served: 'live' },
    ]);
  });
});
