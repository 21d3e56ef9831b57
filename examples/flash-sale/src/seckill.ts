import type { Decision, MetricsSink, Store } from '@sluice/core';
import type { TrustProxy } from '@sluice/express';
import { rateLimit } from '@sluice/express';
import type { Express, Request, Response } from 'express';

/** The SKUs on sale, and how many a second the order backend takes for each. */
export const SECKILL_STOCK: Record<string, string> = {
  'iphone-17': 'iPhone 17',
  'switch-2': 'Nintendo Switch 2',
  'ps6-preorder': 'PlayStation 6 pre-order',
};

/** What every zone of the shop shares: its namespace, the shop's proxy policy, store and clock. */
export interface ZoneOptions {
  prefix: string;
  policyName: string;
  /** The zone's name in metrics and on the dashboard. */
  name: string;
  /** The shop's one proxy policy (`TRUST_PROXY`): every limit keys the same client. */
  trustProxy: TrustProxy;
  store?: Store;
  metrics?: MetricsSink;
  clock?: () => number;
  timeoutMs?: number;
}

/** The one SKU everybody wants: held to a lower rate than the others (a per-key override). */
export const HOT_SKU = 'iphone-17';

/**
 * `POST /seckill/:sku`: the flash-sale endpoint, with every limit a sale needs, checked in order
 * so that a request refused by a later limit uses nothing of an earlier one:
 *
 * 1. per client address (the one the shop's reverse proxy names: see `TRUST_PROXY`): 5 a second, 5 more at once;
 * 2. per user (`user-id` header, required): 2 a second *and* 20 a minute — both or neither, in one
 *    atomic store call (a refused attempt does not count against the minute);
 * 3. per SKU: the order backend takes 50 a second per SKU, warming up over 10 s from the sale's
 *    opening (a third of the rate at first), the hot SKU held to 20 a second; past that, a
 *    "busy, try again" page with a 200, not an error.
 *
 * With a shared store (Redis) the block cache answers the flood of refused requests locally.
 *
 * @param zone - the shop's per-zone options (store, prefix, clock)
 */
export function mountSeckill(app: Express, zone: (name: string) => ZoneOptions): void {
  app.post(
    '/seckill/:sku',
    rateLimit([
      { ...zone('seckill-ip'), key: '$binary_remote_addr', rate: '5r/s', burst: 5 },
      {
        ...zone('seckill-user'),
        key: '$http_user_id',
        rate: ['2r/s', '20/1m'],
        onMissingKey: 'reject',
      },
      {
        ...zone('seckill-sku'),
        key: (req: Request) => String(req.params.sku ?? ''),
        rate: '50r/s',
        warmup: '10s',
        overrides: { [HOT_SKU]: '20r/s' },
        fallback: (req: Request, res: Response, decision: Decision) => {
          res.json({
            sku: req.params.sku,
            order: 'busy',
            retryAfter: Math.ceil(decision.retryAfterMs / 1000),
          });
        },
      },
    ]),
    (req, res) => {
      // Own properties only: `__proto__` or `constructor` is a name every object has, not a SKU.
      const sku = String(req.params.sku);
      const name = Object.hasOwn(SECKILL_STOCK, sku) ? SECKILL_STOCK[sku] : undefined;
      if (name === undefined) res.status(404).json({ error: 'not on sale' });
      else res.json({ sku: req.params.sku, name, order: 'placed' });
    },
  );
}
