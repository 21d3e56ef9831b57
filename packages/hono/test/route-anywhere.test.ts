import { rateLimit } from '@sluice/hono';
import { Hono } from 'hono';
import { serveFetch } from './serve';

/** Time stands still: these tests never wait for a limit to refill. */
const still = () => 1_700_006_400_000;

/**
 * `$route` on Hono is the pattern of the route that answers, wherever the limit is mounted: Hono
 * matches every route before its first middleware runs, so `app.use` knows it (Express cannot).
 */
describe('$route in a limit mounted with app.use', () => {
  let warnings: jest.SpyInstance;
  beforeEach(() => {
    warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warnings.mockRestore());

  test('one bucket per route pattern, under app.route prefixes, past other middleware', async () => {
    const app = new Hono();
    app.use(rateLimit({ key: '$route', rate: '1/1m', clock: still }));
    app.use('/shop/*', async (_c, next) => next()); // middleware between the limit and the route
    const shop = new Hono();
    shop.get('/sku/:id', (c) => c.text('sku'));
    shop.get('/cart', (c) => c.text('cart'));
    app.route('/shop', shop);
    const served = await serveFetch(app.fetch);
    try {
      const statuses: Array<[string, number]> = [];
      for (const path of ['/shop/sku/1', '/shop/sku/2', '/shop/cart', '/shop/cart', '/nowhere', '/elsewhere'])
        statuses.push([path, (await fetch(served.url + path)).status]);
      expect(statuses).toEqual([
        ['/shop/sku/1', 200],
        ['/shop/sku/2', 429],
        ['/shop/cart', 200],
        ['/shop/cart', 429],
        // No route answers a 404: one bucket for all of them, never one per made-up URL.
        ['/nowhere', 404],
        ['/elsewhere', 429],
      ]);
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      await served.close();
    }
  });
});
