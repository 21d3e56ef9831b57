import { SluiceConfigError } from '../policy/config-error';
import type { Decision } from '../types';
import { nodeBindingsOf } from './fetch-limit';
import { fetchGate, type FetchFrame } from './fetch-gate';
import { replyResponse, type FetchFallback } from './fetch-outcome';
import { fromFetchRequest } from './fetch-request';
import { createHttpLimiter } from './http-limiter';
import type { RateLimitOptions } from './http-options';

/**
 * A Fetch-API handler: a Next.js route handler, the `fetch` of `Bun.serve`, `Deno.serve` or
 * `@hono/node-server`. Arguments after the request are the runtime's (Bun's server, Deno's
 * connection info, Next's route context).
 */
export type FetchHandler<TArgs extends unknown[]> = (
  request: Request,
  ...rest: TArgs
) => Response | Promise<Response>;

/** A fallback handler of a Fetch handler's limits: the `Response` to send in place of the refusal. */
export type RequestFallback = FetchFallback<Request, Decision>;

/** Options of a Fetch handler's limits: the shared sluice options with the `Request` in callbacks, and `clientAddress`. */
export type FetchRateLimitOptions<TArgs extends unknown[] = unknown[]> = RateLimitOptions<
  Request,
  RequestFallback,
  Response | undefined
> & {
  /**
   * The client address, from the request and the runtime's arguments (a `Request` carries none):
   * required when a key reads it (`$binary_remote_addr`, the default, or `$remote_addr`).
   * `undefined` or `null` for a request: it is refused, as a client that is gone. With several
   * limits, give it with the first.
   * @example `(request, server) => server.requestIP(request)?.address` (Bun), `(request, info) => info.remoteAddr.hostname` (Deno)
   */
  clientAddress?: (request: Request, ...rest: TArgs) => string | undefined | null;
};

const NO_ADDRESS =
  'a Fetch Request carries no client address, and the key reads it ($binary_remote_addr, the default, or $remote_addr): pass clientAddress (on Bun, (request, server) => server.requestIP(request)?.address), or key by something else';

/**
 * Rate-limits a Fetch-API handler (`@sluice/hono`'s `withRateLimit`): the same options, keys,
 * headers, refusals, fallbacks and delays as the middleware of every adapter. `$arg_` reads
 * `new URL(request.url).searchParams`, as the handler would; a held request gives its turn back
 * when the client leaves: when the request's `signal` aborts, or on `@hono/node-server` when
 * Node's response closes.
 *
 * @param options - one limit, or several in order
 * @param handler - runs for admitted requests
 * @returns the handler behind its limits, taking the same arguments
 * @throws {@link SluiceConfigError} naming the first invalid option, or `clientAddress` when a key
 *   reads the client address and nothing gives it
 * @example
 * ```ts
 * export const GET = limitFetchHandler({ key: '$http_user_id', rate: '10r/s' }, async () => Response.json({ ok: true }));
 * ```
 */
export function limitFetchHandler<TArgs extends unknown[]>(
  options: FetchRateLimitOptions<TArgs> | ReadonlyArray<FetchRateLimitOptions<TArgs>>,
  handler: FetchHandler<TArgs>,
): (request: Request, ...rest: TArgs) => Promise<Response> {
  type Address = NonNullable<FetchRateLimitOptions<TArgs>['clientAddress']>;
  const create = (limits: FetchRateLimitOptions<TArgs> | Array<FetchRateLimitOptions<TArgs>>) =>
    createHttpLimiter<Request, RequestFallback, Response | undefined>(limits);
  const { pass, clientAddress, readsAddress } = fetchGate<
    FetchRateLimitOptions<TArgs>,
    Address,
    Request,
    Response
  >(options, create, FRAME, { where: 'withRateLimit' });
  if (readsAddress && clientAddress === undefined)
    throw new SluiceConfigError('clientAddress', undefined, NO_ADDRESS);
  if (typeof handler !== 'function')
    throw new SluiceConfigError('handler', handler, 'expected a function (request) => Response');
  return async function sluiceRateLimited(request: Request, ...rest: TArgs): Promise<Response> {
    const address = clientAddress?.(request, ...rest);
    const bindings = nodeBindingsOf(rest[0]);
    const known = typeof address === 'string' ? address : undefined;
    const http = fromFetchRequest(request, known, bindings?.incoming.rawHeaders);
    // On Node's server (`@hono/node-server`), Node's response tells when the client left, also
    // for a pipelined request waiting behind another, where the request's signal never aborts.
    return pass(request, http, bindings, request, () => handler(request, ...rest));
  };
}

/**
 * A bare handler's side of the gate: a refusal or a static fallback as a plain `Response` (no
 * framework to build it); the handler's `Response` is its result, which a `countWhen` function
 * gets through the exchange.
 */
const FRAME: FetchFrame<Request, Response> = {
  reply: (_request, reply) => replyResponse(reply),
  response: (_request, response) => response,
  replace: (_request, _response, copy) => copy,
  countsOnExchange: true,
};
