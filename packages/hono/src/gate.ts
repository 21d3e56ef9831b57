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
 * Runs the handler: on Node's server the headers are on its response already, and `next()`'s
 * promise is returned as it is (no frame of ours waits on it); elsewhere they go on the handler's
 * `Response` once it has returned (on a copy if it is immutable).
 */
function pass(entry: FetchPass, c: Context, next: Next): Promise<void> {
  if (entry.length === 0) return next();
  return next().then(() => {
    const res = addHeaders(c.res, entry);
    if (res !== undefined && res !== c.res) c.res = res;
  });
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
    // Off Node's server, a permit goes back when the handler has returned (see FetchExchange).
    if (node === undefined && watches) return exchanged(c, next, http, raw, new FetchExchange(raw.signal));
    const entry = enter(decider, c, http, node?.outgoing, raw, reply, c);
    if (Array.isArray(entry)) return pass(entry, c, next);
    if (entry instanceof Promise)
      return (entry as Promise<FetchEntry>).then<Response | void>((settled) =>
        Array.isArray(settled) ? pass(settled, c, next) : (settled as Response),
      );
    // A refusal as it is: Hono awaits what a middleware returns, and a promise would cost one more.
    return entry as unknown as Promise<Response>;
  };
  /** The decision and the handler, watched by `exchange` until the handler has returned. */
  const exchanged = async (
    c: Context,
    next: Next,
    http: HonoRequest,
    raw: Request,
    exchange: FetchExchange,
  ): Promise<Response | void> => {
    let done: Response | undefined;
    try {
      let entry = enter(decider, c, http, exchange, raw, reply, c);
      if (!Array.isArray(entry)) entry = await entry;
      if (!Array.isArray(entry)) return entry as Response;
      await pass(entry as FetchPass, c, next);
      done = c.res;
    } finally {
      exchange.end(done);
    }
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}

const NO_ADDRESS =
  "this runtime gives Hono no client address (@hono/node-server does) and the key reads it ($binary_remote_addr, the default, or $remote_addr): pass clientAddress, e.g. (c) => getConnInfo(c).remote.address with your runtime's getConnInfo, or key by something else";
