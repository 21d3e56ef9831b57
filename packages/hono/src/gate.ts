import { SluiceConfigError } from '@sluice/core';
import {
  enterFetch,
  FetchExchange,
  FetchRequest,
  nodeBindingsOf,
  NOT_FOUND_ROUTE,
  replyHeaders,
  requestTarget,
  socketPeerAddress,
  takeClientAddress,
  withHeaders,
  type AnyHttpOutcome,
  type FetchEntry,
  type FetchPass,
  type HttpReply,
  type HttpDecider,
} from '@sluice/core/adapter';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

type HonoDecider = HttpDecider<Context, AnyHttpOutcome<(c: Context, d: never) => unknown>>;

/** The client address where the runtime gives Hono none: `(c) => getConnInfo(c).remote.address` (`hono/bun`, `hono/deno`, …). */
export type ClientAddress = (c: Context) => string | undefined | null;

// Read once: a CommonJS build reads an import through getters at each use.
const [enter, bindingsOf, peerOf, targetOf, headersOf, addHeaders] = [
  enterFetch,
  nodeBindingsOf,
  socketPeerAddress,
  requestTarget,
  replyHeaders,
  withHeaders,
];

/** A refusal or a static fallback, by Hono's `c.body`: headers earlier middleware set (CORS) stay on it. */
const reply = (c: Context, answer: HttpReply): Response =>
  c.body(answer.body, answer.status as ContentfulStatusCode, headersOf(answer));

/** Hono's request in core's neutral shape: the query as `c.req.queries(name)` reads it, the route that answers. */
class HonoRequest extends FetchRequest<Context> {
  override query(): unknown {
    const { req } = this.source;
    return (name: string) => req.queries(name);
  }

  /**
   * The route that answers: the first matched from here on whose function takes no `next` (Hono's
   * test of a handler); `NOT_FOUND_ROUTE` for a 404. Not `hono/route`'s helper: Hono imported
   * here could be a second copy (the other module format) with another private `Symbol`.
   */
  override route(): string | undefined {
    const { req } = this.source;
    const routes = req.matchedRoutes;
    for (let i = req.routeIndex; i < routes.length; i++) {
      const route = routes[i];
      if (route !== undefined && route.handler.length < 2) return route.path;
    }
    return NOT_FOUND_ROUTE;
  }
}

/**
 * What the middleware does with its decision: the refusal as it is (Hono awaits what a
 * middleware returns), else the handler. On Node's server the headers are on its response
 * already and `next()`'s promise is returned as it is (no frame of ours waits on it); elsewhere
 * they go on the handler's `Response` once it has returned (on a copy if it is immutable).
 */
function proceed(entry: FetchEntry | Promise<FetchEntry>, c: Context, next: Next): Promise<Response | void> {
  if (entry instanceof Promise) return entry.then((settled) => proceed(settled, c, next));
  if (!Array.isArray(entry)) return entry as unknown as Promise<Response>;
  if (entry.length === 0) return next();
  return next().then(() => {
    const res = addHeaders(c.res, entry as FetchPass);
    if (res !== undefined && res !== c.res) c.res = res;
  });
}

/** {@link proceed}, `exchange` told once the handler has returned its `Response` (or none ran). */
async function watched(
  exchange: FetchExchange,
  c: Context,
  next: Next,
  decide: () => FetchEntry | Promise<FetchEntry>,
): Promise<Response | void> {
  let ran = false;
  let done: Response | undefined;
  try {
    const refusal = await proceed(decide(), c, () => {
      ran = true;
      return next();
    });
    if (!ran) return refusal;
    done = c.res;
  } finally {
    exchange.end(done);
  }
}

/**
 * The middleware `name` of a limit from core (any `HttpDecider`, built by `create` from the options
 * without `clientAddress`): on `@hono/node-server` Node's own request and response (an admitted
 * request builds no Fetch `Headers`); elsewhere the Fetch request, its address from `clientAddress`.
 *
 * @param permits - whether the limit watches every response (concurrency), not only a held one's
 */
export function middlewareOf<TOptions>(
  options: TOptions | readonly TOptions[],
  create: (limits: TOptions | TOptions[]) => HonoDecider,
  name: string,
  permits = false,
): MiddlewareHandler {
  const { limits, clientAddress, readsAddress } = takeClientAddress<TOptions, ClientAddress>(options);
  const decider = create(limits);
  // A rate limit with `countWhen` reads every response (off Node's server: the handler's `Response`).
  const watches = permits || (decider as { readonly countsResponses?: boolean }).countsResponses === true;
  const middleware: MiddlewareHandler = (c, next) => {
    const node = bindingsOf(c.env);
    const raw = c.req.raw;
    let address: unknown;
    if (clientAddress !== undefined) address = clientAddress(c);
    else if (node !== undefined) address = peerOf(node.incoming.socket);
    else if (readsAddress) throw new SluiceConfigError('clientAddress', undefined, NO_ADDRESS);
    // None (`undefined`, `null`): a limit keyed by the address refuses it, as a client that is gone.
    const known = typeof address === 'string' ? address : undefined;
    const incoming = node?.incoming;
    const url = incoming === undefined ? targetOf(raw.url) : (incoming.url ?? '/');
    const http = new HonoRequest(c, raw, known, url, incoming?.headers ?? raw.headers, incoming?.rawHeaders);
    if (node !== undefined || !watches)
      return proceed(enter(decider, c, http, node?.outgoing, raw, reply, c), c, next);
    // Off Node's server, a permit goes back when the handler has returned (see FetchExchange).
    const exchange = new FetchExchange(raw.signal);
    return watched(exchange, c, next, () => enter(decider, c, http, exchange, raw, reply, c));
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}

const NO_ADDRESS =
  "this runtime gives Hono no client address (@hono/node-server does) and the key reads it ($binary_remote_addr, the default, or $remote_addr): pass clientAddress, e.g. (c) => getConnInfo(c).remote.address with your runtime's getConnInfo, or key by something else";
