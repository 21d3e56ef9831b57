import type { ConcurrencyDecision } from '@sluice/core';
import {
  createHttpConcurrencyLimiter,
  type ConcurrencyLimitOptions as CoreOptions,
} from '@sluice/core/adapter';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { gateOf, hookOf } from './gate';

/** A fallback handler for {@link concurrencyLimit}: sends a reply in place of the refusal. */
export type FastifyConcurrencyFallback = (
  request: FastifyRequest,
  reply: FastifyReply,
  decision: ConcurrencyDecision,
) => unknown;

/**
 * Options of {@link concurrencyLimit}: `max` (required), `key`, `store`, `queue`, `leaseMs`,
 * `status`, `fallback`, `skip`, `onMissingKey`, `trustProxy`, `dryRun`, `name`, `prefix`, … with
 * Fastify's `request` in callbacks.
 */
export type ConcurrencyLimitOptions = CoreOptions<FastifyRequest, FastifyConcurrencyFallback>;

/**
 * A Fastify hook (Fastify 4 and 5) that caps requests in flight per key (nginx `limit_conn`): a
 * permit is taken before the handler and given back exactly once when the handler has ended its
 * response (not when the client has read it) or the connection closes first — also when the
 * handler throws, never answers, or the client leaves.
 * Add it as an `onRequest` hook (or `preHandler`, when the key needs what auth hooks set), for
 * the whole app or one route. Beside the sluice plugin's rate limits (decided at `onRequest` by
 * default), add it at `preHandler`: it then runs after them, so a request they delay or refuse
 * holds no permit meanwhile (at `onRequest` it would run first).
 *
 * @param options - `max` and the rest (validated once, here)
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * import { concurrencyLimit } from '@sluice/fastify';
 *
 * app.addHook('preHandler', concurrencyLimit({ key: 'all', max: 500, queue: { maxWaitMs: 2000 } }));
 * app.post('/checkout', { preHandler: concurrencyLimit({ key: '$http_user_id', max: 1 }) }, checkout);
 * ```
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): onRequestHookHandler {
  const limit = createHttpConcurrencyLimiter<FastifyRequest, FastifyConcurrencyFallback>(options);
  return hookOf(gateOf(limit), 'sluiceConcurrencyLimit');
}
