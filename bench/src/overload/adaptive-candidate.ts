import { createAdaptiveLimiter } from '@sluice/core';
import { adaptiveLimit } from '@sluice/fastify';
import type { FastifyInstance } from 'fastify';
import { CHECKOUT_SHARE } from './scenario';

/**
 * Adds sluice's `adaptiveLimit` to `app` with its defaults (with the priorities' shares when
 * `shares`: checkout {@link CHECKOUT_SHARE}, browse the rest), and returns how to read its limit.
 * The limiter is made apart and handed in (`limiter`) only so that the bench can sample its limit.
 */
export function adaptiveCandidate(app: FastifyInstance, shares: boolean): () => number {
  const limiter = createAdaptiveLimiter(
    shares ? { shares: { checkout: CHECKOUT_SHARE, browse: 1 - CHECKOUT_SHARE } } : {},
  );
  app.addHook(
    'onRequest',
    adaptiveLimit({
      limiter,
      ...(shares
        ? { priority: (request) => (request.url.startsWith('/checkout') ? 'checkout' : 'browse') }
        : {}),
    }),
  );
  app.addHook('onClose', async () => limiter.close());
  return () => limiter.limit();
}
