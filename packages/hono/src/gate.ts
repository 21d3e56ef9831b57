import {
  fetchMiddleware,
  FetchRequest,
  NOT_FOUND_ROUTE,
  replyHeaders,
  type FetchDecider,
  type FetchGateSettings,
  type FetchMiddlewareFrame,
} from '@sluice/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

// Read once: a CommonJS build reads an import through getters at each use.
const headersOf = replyHeaders;

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
 * Hono's side of core's Fetch middleware: the Fetch request and the runtime's bindings from `c`, a
 * refusal or a static fallback by Hono's `c.body` (the headers earlier middleware set, CORS, stay
 * on it); the handler's `Response` is `c.res`.
 */
const HONO: FetchMiddlewareFrame<Context, void> = {
  request: (c) => c.req.raw,
  env: (c) => c.env,
  reply: (c, answer) => c.body(answer.body, answer.status as ContentfulStatusCode, headersOf(answer)),
  response: (c) => c.res,
  replace(c, _result, copy) {
    c.res = copy;
  },
  View: HonoRequest,
  noAddress:
    "this runtime gives Hono no client address (@hono/node-server does) and the key reads it ($binary_remote_addr, the default, or $remote_addr): pass clientAddress, e.g. (c) => getConnInfo(c).remote.address with your runtime's getConnInfo, or key by something else",
};

/** The middleware `name` of limits core builds by `create` (see core's `fetchMiddleware`). */
export function middlewareOf<TOptions>(
  options: TOptions | readonly TOptions[],
  create: (limits: TOptions | TOptions[]) => FetchDecider<Context>,
  name: string,
  settings: FetchGateSettings = { where: 'Hono options' },
): MiddlewareHandler {
  const middleware = fetchMiddleware(options, create, HONO, settings) as MiddlewareHandler;
  return Object.defineProperty(middleware, 'name', { value: name });
}
