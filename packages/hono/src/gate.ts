import {
  FetchRequest,
  limitFetch,
  nodeBindingsOf,
  replyHeaders,
  requestTarget,
  SluiceConfigError,
  socketPeerAddress,
  takeClientAddress,
  type AnyHttpOutcome,
  type HttpDecider,
} from '@sluice/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The client address where the runtime gives Hono none: `(c) => getConnInfo(c).remote.address` (`hono/bun`, `hono/deno`, …). */
export type ClientAddress = (c: Context) => string | undefined | null;

// Read once: a CommonJS build reads an import through getters at each use.
const [limit, bindingsOf, peerOf, targetOf, headersOf] = [
  limitFetch,
  nodeBindingsOf,
  socketPeerAddress,
  requestTarget,
  replyHeaders,
];

/** Hono's request in core's neutral shape: the query as `c.req.query(name)` reads it, the route that answers. */
class HonoRequest extends FetchRequest<Context> {
  override query(): unknown {
    const { req } = this.source;
    return (name: string) => req.query(name);
  }

  /**
   * The pattern of the route that answers, known before the first middleware runs: the first
   * matched from this one on whose function takes no `next` (Hono's test of a handler); none for
   * a 404. Not `hono/route`'s helper: Hono's code, imported here, could be a second copy of Hono
   * (the other module format) with another private `Symbol`.
   */
  override route(): string | undefined {
    const { req } = this.source;
    const routes = req.matchedRoutes;
    for (let i = req.routeIndex; i < routes.length; i++) {
      const route = routes[i];
      if (route !== undefined && route.handler.length < 2) return route.path;
    }
    return undefined;
  }
}

/**
 * The middleware of a limit from core (a rate limit, a concurrency limit: any `HttpDecider`), in
 * core's neutral shapes: on `@hono/node-server` Node's own request (an admitted request builds no
 * Fetch `Headers`) and response; elsewhere the Fetch request, its address from `clientAddress`.
 *
 * @param create - builds the limit from the options without `clientAddress`
 * @param name - the middleware's name, as stack traces show it
 * @param permits - whether the limit watches every response (concurrency), not only a held one's
 */
export function middlewareOf<TOptions>(
  options: TOptions | readonly TOptions[],
  create: (
    limits: TOptions | TOptions[],
  ) => HttpDecider<Context, AnyHttpOutcome<(c: Context, d: never) => unknown>>,
  name: string,
  permits = false,
): MiddlewareHandler {
  const { limits, clientAddress, readsAddress } = takeClientAddress<TOptions, ClientAddress>(options);
  const decider = create(limits);
  const middleware: MiddlewareHandler = async (c, next) => {
    const node = bindingsOf(c.env);
    const raw = c.req.raw;
    let address: unknown;
    if (clientAddress !== undefined) address = clientAddress(c);
    else if (node !== undefined) address = peerOf(node.incoming.socket);
    else if (readsAddress) throw new SluiceConfigError('clientAddress', undefined, NO_ADDRESS);
    // None (`undefined`, `null`): a limit keyed by the address refuses it, as a client that is gone.
    const known = typeof address === 'string' ? address : undefined;
    const http =
      node === undefined
        ? new HonoRequest(c, raw, known, targetOf(raw.url), raw.headers)
        : new HonoRequest(c, raw, known, node.incoming.url ?? '/', node.incoming.headers);
    let ran = false;
    const res = await limit(decider, permits, {
      request: c,
      http,
      node: node?.outgoing,
      signal: () => raw.signal,
      next: () => next().then(() => ((ran = true), c.res)),
      // Hono's own reply keeps the headers earlier middleware set (CORS, say).
      reply: (reply) => c.body(reply.body, reply.status as ContentfulStatusCode, headersOf(reply)),
    });
    if (!ran) return res;
    if (res !== c.res) c.res = res;
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}

const NO_ADDRESS =
  "this runtime gives Hono no client address (@hono/node-server does) and the key reads it ($binary_remote_addr, the default, or $remote_addr): pass clientAddress, e.g. (c) => getConnInfo(c).remote.address with your runtime's getConnInfo, or key by something else";
