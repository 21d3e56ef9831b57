import { socketPeerAddress } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';
import { SluiceConfigError } from '../policy/config-error';
import type { AbortSignalLike } from './fetch-exchange';
import {
  fetchGate,
  type FetchDecider,
  type FetchFrame,
  type FetchGateSettings,
  type FetchNext,
} from './fetch-gate';
import { nodeBindingsOf } from './fetch-limit';
import { requestTarget, type FetchHeaders, type FetchRequestLike } from './fetch-request';

/**
 * A {@link FetchFrame} for a middleware ({@link fetchMiddleware}): also where the Fetch request and
 * the runtime's bindings are, how core views the framework's request, and what to tell a user
 * whose runtime gives no client address.
 */
export interface FetchMiddlewareFrame<TContext, TResult> extends FetchFrame<TContext, TResult> {
  /** The Fetch `Request` (Hono's `c.req.raw`): a held request, or a permit off Node's server, watches its `signal`. */
  readonly request: (context: TContext) => FetchRequestLike & { readonly signal: AbortSignalLike };
  /** What the runtime passes after the request (Hono's `c.env`), where `@hono/node-server` puts Node's request and response. */
  readonly env: (context: TContext) => unknown;
  /** `FetchRequest`, or a subclass reading the framework's query and route (Hono's). */
  readonly View: new (
    source: TContext,
    request: FetchRequestLike,
    remoteAddress: string | undefined,
    url: string,
    headers: HttpRequest['headers'] | FetchHeaders,
    rawHeaders?: readonly string[],
  ) => HttpRequest;
  /** The error's text when a key reads the client address, the runtime gives none, and no `clientAddress` does. */
  readonly noAddress: string;
}

/**
 * A Fetch-API middleware of core (see {@link fetchMiddleware}): the refusal (a `Response`), or
 * the handler's result with the limits' headers.
 *
 * @param context - the framework's request (Hono's `c`)
 * @param next - runs the handler (Hono's `next`)
 */
export type FetchMiddleware<TContext, TResult> = (
  context: TContext,
  next: FetchNext<TResult>,
) => TResult | Response | Promise<TResult | Response>;

/**
 * The middleware of a Fetch-API framework (`@sluice/hono`'s), its limits resolved once from their
 * options; the adapter names it and hands it to the framework. On `@hono/node-server` core reads
 * Node's own request (an admitted request builds no Fetch `Headers`), and the client address is
 * the connection's peer unless `clientAddress(context)` gives it; elsewhere only `clientAddress`
 * gives it, and a request a key would read it of fails with a `SluiceConfigError`, never one key
 * for all.
 *
 * @param options - one limit's options, or several in order, with `clientAddress`
 * @param create - builds the limits from the options without `clientAddress`
 * @param frame - the framework's side (see {@link FetchMiddlewareFrame})
 * @param settings - see {@link FetchGateSettings}
 * @throws `SluiceConfigError` naming the first invalid option
 * @example
 * ```ts
 * const middleware = fetchMiddleware(options, createHttpLimiter, HONO_FRAME, { where: 'Hono options' });
 * app.use(Object.defineProperty(middleware as MiddlewareHandler, 'name', { value: 'sluiceRateLimit' }));
 * ```
 */
export function fetchMiddleware<TOptions, TContext, TResult>(
  options: TOptions | readonly TOptions[],
  create: (limits: TOptions | TOptions[]) => FetchDecider<TContext>,
  frame: FetchMiddlewareFrame<TContext, TResult>,
  settings?: FetchGateSettings,
): FetchMiddleware<TContext, TResult> {
  type Address = (context: TContext) => string | undefined | null;
  const { pass, clientAddress, readsAddress } = fetchGate<TOptions, Address, TContext, TResult>(
    options,
    create,
    frame,
    settings,
  );
  const { request, env, View, noAddress } = frame;
  // The framework calls this itself, no wrapper of the adapter's between: in process (cachegrind),
  // one call level more cost several hundred instructions a request on @hono/node-server.
  return (context, next) => {
    const fetched = request(context);
    const node = nodeBindingsOf(env(context));
    let address: unknown;
    if (clientAddress !== undefined) address = clientAddress(context);
    else if (node !== undefined) address = socketPeerAddress(node.incoming.socket);
    else if (readsAddress) throw new SluiceConfigError('clientAddress', undefined, noAddress);
    // None (`undefined`, `null`): a limit keyed by the address refuses it, as a client that is gone.
    const known = typeof address === 'string' ? address : undefined;
    let http: HttpRequest;
    if (node === undefined)
      http = new View(context, fetched, known, requestTarget(fetched.url), fetched.headers);
    else {
      const { url, headers, rawHeaders } = node.incoming;
      http = new View(context, fetched, known, url === undefined ? '/' : url, headers, rawHeaders);
    }
    return pass(context, http, node, fetched, next);
  };
}
