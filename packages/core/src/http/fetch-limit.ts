import type { HttpRequest } from '../keys/http-request';
import { FetchExchange, type AbortSignalLike } from './fetch-exchange';
import { callFetchFallback, CLIENT_CLOSED_STATUS, replyResponse } from './fetch-outcome';
import type { HeaderList, HttpReply } from './http-options';
import type { ListenableResponse } from './response-close';
import type { NodeRequestLike } from './node-request';
import { setHeaderList, type AnyHttpOutcome, type HttpDecider, type NodeResponse } from './write-outcome';

/**
 * What `@hono/node-server` hands a Fetch handler after the request (and Hono as `c.env`): Node's
 * request and response.
 */
export interface NodeBindings {
  readonly incoming: NodeRequestLike;
  readonly outgoing: NodeResponse & ListenableResponse;
}

/**
 * Node's request and response under a Fetch request, when a Fetch-API runtime runs on Node's own
 * server (`@hono/node-server` passes them along); `undefined` elsewhere (Bun, Deno, workers).
 *
 * @param env - the handler's argument after the request (Hono's `c.env`)
 * @example
 * ```ts
 * const node = nodeBindingsOf(c.env); // node?.incoming.socket is the connection
 * ```
 */
export function nodeBindingsOf(env: unknown): NodeBindings | undefined {
  const bindings = env as Partial<NodeBindings> | undefined;
  return bindings?.incoming?.socket != null && typeof bindings.outgoing?.on === 'function'
    ? (bindings as NodeBindings)
    : undefined;
}

/**
 * A response without body with this header tells `@hono/node-server` that the reply was written
 * on Node's response already: it sends nothing more. It reads the header only on a `Response` of
 * Node's own class, which it replaces with a lighter one of its own once it serves: the class is
 * taken as this module loads (before any server starts, as imports come first).
 */
const ALREADY_SENT = 'x-hono-already-sent';
const NodeResponseClass = globalThis.Response;

/** Where a Fetch-API adapter is told to go on: the headers the handler's response still needs. */
export type FetchPass = HeaderList;

/** What a Fetch-API adapter does with a request: answer with this `Response`, or run the handler ({@link FetchPass}). */
export type FetchEntry = Response | FetchPass;

/** No header left to add: they are on Node's response already. */
const WRITTEN: FetchPass = [];

/**
 * Lets one request into a limit on a Fetch-API runtime (`@sluice/hono`, `withRateLimit`): decides
 * — synchronously when core can, so the common case costs no promise — and tells the adapter to
 * answer with a `Response` (the refusal, a fallback, a 499 nobody reads for a client that left
 * while held or queued), or to run the handler and add the headers it returns to its `Response`
 * (see `withHeaders`). A `delay` is held first, on a timer, given back when the client leaves.
 *
 * On Node's server (`watched` is Node's response, as `@hono/node-server` passes it along) the
 * headers go on Node's response, as every Node adapter sets them: the server merges them into
 * what it writes (a header of the handler's own wins), and a handler's `c.json(…)` keeps the
 * framework's lightest `Response`, without `Headers`; none are left to add. Elsewhere a held
 * request watches the request's `signal`.
 *
 * @param decider - the limit
 * @param request - the framework's request (Hono's `c`, the Fetch `Request`), for callbacks
 * @param http - the same request in core's neutral shape
 * @param watched - Node's response; else, for a limit that watches every response (a
 *   concurrency permit), a `FetchExchange` the adapter ends when the handler returns
 * @param fetched - the Fetch request, whose `signal` a held request watches off Node's server
 * @param reply - builds the `Response` of a refusal or a static fallback (Hono's `c.body`, which
 *   keeps the headers earlier middleware set)
 * @param response - what a `countWhen` function gets as the response (Hono's `c`; a
 *   `FetchExchange` stands for the handler's `Response`); default: `watched`
 * @example
 * ```ts
 * const entry = await enterFetch(limit, request, http, undefined, request, (_, r) => replyResponse(r));
 * if (!Array.isArray(entry)) return entry;
 * return withHeaders(await handler(request), entry);
 * ```
 */
export function enterFetch<TRequest>(
  decider: HttpDecider<TRequest, AnyHttpOutcome<(request: TRequest, decision: never) => unknown>>,
  request: TRequest,
  http: HttpRequest,
  watched: (NodeResponse & ListenableResponse) | FetchExchange | undefined,
  fetched: { readonly signal: AbortSignalLike },
  reply: (request: TRequest, reply: HttpReply) => Response,
  response?: unknown,
): FetchEntry | Promise<FetchEntry> {
  const node = watched instanceof FetchExchange ? undefined : watched;
  // A rate limit reads the response only for `countWhen`; a concurrency limit is always given one.
  const outcome = decider.decideSync(request, http, watched as ListenableResponse, response);
  if (outcome !== undefined) return entryOf(outcome, request, node, fetched, reply);
  return decider
    .decide(request, http, watched as ListenableResponse, response)
    .then((decided) => entryOf(decided, request, node, fetched, reply));
}

function entryOf<TRequest>(
  outcome: AnyHttpOutcome<(request: TRequest, decision: never) => unknown>,
  request: TRequest,
  node: (NodeResponse & ListenableResponse) | undefined,
  fetched: { readonly signal: AbortSignalLike },
  reply: (request: TRequest, reply: HttpReply) => Response,
): FetchEntry | Promise<FetchEntry> {
  if (outcome.kind === 'gone') return new Response(null, { status: CLIENT_CLOSED_STATUS });
  const written = node !== undefined;
  if (written) setHeaderList(node, outcome.headers);
  const pass = written ? WRITTEN : outcome.headers;
  switch (outcome.kind) {
    case 'next':
      return pass;
    case 'delay':
      return outcome
        .hold(node ?? new FetchExchange(fetched.signal))
        .then((here) => (here ? pass : new Response(null, { status: CLIENT_CLOSED_STATUS })));
    case 'reply':
      return reply(request, written ? { ...outcome, headers: WRITTEN } : outcome);
    case 'handler':
      return callFetchFallback(outcome, request, (rejection) => refusal(node, rejection), written);
  }
}

/**
 * The default refusal in place of a failed fallback handler, without what the handler set. One
 * that had begun its reply on Node's response has it ended, and nothing more is sent.
 */
function refusal(node: NodeResponse | undefined, rejection: HttpReply): Response {
  if (node?.headersSent !== true) return replyResponse(rejection);
  if (!node.writableEnded) node.end();
  return new NodeResponseClass(null, { headers: { [ALREADY_SENT]: 'true' } });
}
