import type { Decision, MetricsSink, Store } from '@sluice/core';
import { rateLimit, type TrustProxy } from '@sluice/express';
import express, { type Express, type Request, type Response } from 'express';
import { mountSeckill } from './seckill';

/** What the shop is built with: the store every limit keeps its state in, and (for tests) a clock. */
export interface ShopOptions {
  /** @defaultValue a MemoryStore per limit */
  store?: Store;
  /** Epoch ms; tests inject one. */
  clock?: () => number;
  /** Where every zone reports its decisions (`prometheus()` from `@sluice/metrics`), under the zone's name. */
  metrics?: MetricsSink;
  /** Routes mounted before any limit, so no limit counts them: `/metrics` and the dashboard. */
  unlimited?: (app: Express) => void;
  /**
   * How long each limit waits for a shared store before `onStoreError` decides (sluice's default,
   * 50 ms, when left out); a test replaying a sale on Redis raises it, so that a slow moment of a
   * loaded machine is not decided by the insurance store.
   */
  timeoutMs?: number;
}

/**
 * The addresses of the reverse proxy the shop runs behind (on this machine): a request from one
 * of them is keyed by the client its `X-Forwarded-For` names; any other request, by its own
 * address. Every limit uses this one policy. In production, list your proxies' addresses (or
 * their subnet, `'10.0.0.0/8'`); without a proxy, `false`.
 */
export const TRUST_PROXY: TrustProxy = ['127.0.0.1', '::1'];

interface Product {
  readonly name: string;
  readonly price: number;
}

const CATALOG: Record<string, Product> = {
  'iphone-17': { name: 'iPhone 17', price: 799 },
  'switch-2': { name: 'Nintendo Switch 2', price: 449 },
  'ps6-preorder': { name: 'PlayStation 6 pre-order', price: 599 },
};

/**
 * The shop, limited with the zones a flash sale configures in nginx:
 *
 * ```nginx
 * limit_req_zone $server_name        zone=server:1m rate=1000r/s;   # limit_req zone=server burst=1000 nodelay;
 * limit_req_zone $binary_remote_addr zone=ip:10m    rate=10r/s;     # limit_req zone=ip burst=20 nodelay;
 * limit_req_zone $arg_sku_id         zone=sku:10m   rate=6r/m;      # /ratelimit/sku, degraded page when full
 * limit_req_zone $http_user_id       zone=user:10m  rate=2r/m;      # /ratelimit/demo
 * ```
 *
 * @param options - store and clock
 * @example
 * ```ts
 * createShop().listen(3000);
 * ```
 */
export function createShop({ store, clock, metrics, unlimited, timeoutMs }: ShopOptions = {}): Express {
  // One namespace per zone: in a shared Redis, zones must not see each other's keys.
  const zone = (prefix: string) => ({
    prefix: `flash:${prefix}`,
    policyName: prefix,
    name: prefix,
    trustProxy: TRUST_PROXY,
    ...(store && { store }),
    ...(clock && { clock }),
    ...(metrics && { metrics }),
    ...(timeoutMs && { timeoutMs }),
  });
  const app = express();
  unlimited?.(app);

  // The flash-sale endpoint keeps its own zones (address, user, SKU): mounted first, it answers
  // before the shop-wide limits below.
  mountSeckill(app, zone);

  // Everything: one server-wide bucket, then one per client address (the one the proxy names), in
  // one middleware, so a request the per-IP limit refuses uses nothing of the server-wide one. A
  // constant key is one bucket: nginx writes $server_name, which in Node would be the
  // client-chosen Host header.
  app.use(
    rateLimit([
      { ...zone('server'), key: 'server', rate: '1000r/s', burst: 1000 },
      { ...zone('ip'), key: '$binary_remote_addr', rate: '10r/s', burst: 20 },
    ]),
  );

  app.get('/', (_req, res) => {
    res.json({
      try: ['/ratelimit/sku?sku_id=switch-2', '/ratelimit/demo (header user-id)'],
      skus: Object.keys(CATALOG),
    });
  });

  // 6 requests a minute per SKU (all 6 at once, then one every 10 s); past that, the cached
  // product page with a 200 instead of an error, as a flash sale shows "busy" rather than failing.
  app.get(
    '/ratelimit/sku',
    rateLimit({
      ...zone('sku'),
      key: '$arg_sku_id',
      rate: '6/1m',
      fallback: (req: Request, res: Response, decision: Decision) => {
        res.json({
          ...productOf(req),
          served: 'cached',
          retryAfter: Math.ceil(decision.retryAfterMs / 1000),
        });
      },
    }),
    (req, res) => {
      const product = productOf(req);
      if (product === undefined)
        res.status(404).json({ error: 'unknown sku_id', skus: Object.keys(CATALOG) });
      else res.json({ ...product, served: 'live' });
    },
  );

  // Per user (the user-id header); a request without one is not limited by this zone, as in nginx.
  app.get(
    '/ratelimit/demo',
    rateLimit({ ...zone('user'), key: '$http_user_id', rate: '2/1m' }),
    (req, res) => {
      res.json({ user: req.get('user-id') ?? null, ok: true });
    },
  );

  return app;
}

function productOf(req: Request): ({ sku: string } & Product) | undefined {
  // A repeated sku_id arrives as an array; the limit keys on its first value, and so does the shop.
  const raw = req.query.sku_id;
  const sku = String(Array.isArray(raw) ? raw[0] : (raw ?? ''));
  // Own properties only: `?sku_id=constructor` names what every object inherits, not a product.
  const product = Object.hasOwn(CATALOG, sku) ? CATALOG[sku] : undefined;
  return product === undefined ? undefined : { sku, ...product };
}
