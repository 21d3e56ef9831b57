import type { AdaptiveDecision } from '../adaptive/adaptive-types';
import { SluiceConfigError } from '../policy/config-error';
import { createHttpAdaptiveLimiter } from './adaptive-limit';
import type { AdaptiveLimitOptions } from './adaptive-options';
import { FetchExchange } from './fetch-exchange';
import type { FetchHandler } from './fetch-handler';
import { enterFetch, nodeBindingsOf } from './fetch-limit';
import { replyResponse, withHeaders, type FetchFallback } from './fetch-outcome';
import { fromFetchRequest } from './fetch-request';

/** Options of a Fetch handler's adaptive limit: `adaptiveLimit`'s, with the `Request` in callbacks. */
export type FetchAdaptiveLimitOptions = AdaptiveLimitOptions<
  Request,
  FetchFallback<Request, AdaptiveDecision>
>;

/**
 * Puts an adaptive limit in front of a Fetch-API handler (`@sluice/hono`'s `withAdaptiveLimit`;
 * Next.js route handlers, `Bun.serve`, `Deno.serve`): the same options, 503 and `Retry-After`
 * as every adapter's `adaptiveLimit`. The permit goes back when the handler has returned its
 * `Response` or the request's `signal` aborts (on `@hono/node-server`, when Node's response is
 * ended or closes).
 *
 * @param options - the limit's options, all optional
 * @param handler - runs for admitted requests
 * @throws {@link SluiceConfigError} naming the first invalid option
 * @example
 * ```ts
 * export const POST = limitFetchHandlerAdaptively({ shares: { checkout: 1 }, priority: () => 'checkout' }, async () => Response.json({ ok: true }));
 * ```
 */
export function limitFetchHandlerAdaptively<TArgs extends unknown[]>(
  options: FetchAdaptiveLimitOptions,
  handler: FetchHandler<TArgs>,
): (request: Request, ...rest: TArgs) => Promise<Response> {
  const decider = createHttpAdaptiveLimiter<Request, FetchFallback<Request, AdaptiveDecision>>(options);
  if (typeof handler !== 'function')
    throw new SluiceConfigError('handler', handler, 'expected a function (request) => Response');
  return async function sluiceAdaptiveLimited(request: Request, ...rest: TArgs): Promise<Response> {
    const bindings = nodeBindingsOf(rest[0]);
    const exchange = bindings === undefined ? new FetchExchange(request.signal) : undefined;
    // The handler's Response ends the exchange: its status tells the permit what to measure.
    let response: Response | undefined;
    try {
      const http = fromFetchRequest(request, undefined, bindings?.incoming.rawHeaders);
      const entry = await enterFetch(decider, request, http, bindings?.outgoing ?? exchange, request, answer);
      if (!Array.isArray(entry)) return entry as Response;
      response = await handler(request, ...rest);
      return withHeaders(response, entry);
    } finally {
      exchange?.end(response);
    }
  };
}

const answer = (_request: Request, reply: Parameters<typeof replyResponse>[0]): Response =>
  replyResponse(reply);
