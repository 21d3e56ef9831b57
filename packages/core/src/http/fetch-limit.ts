import type { HttpRequest } from '../keys/http-request';
import { FetchExchange, type AbortSignalLike } from './fetch-exchange';
import { fetchOutcome, replyResponse, withHeaders } from './fetch-outcome';
import type { HttpReply } from './http-options';
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

/** One request through a limit on a Fetch-API runtime: see {@link limitFetch}. */
export interface FetchTurn<TRequest> {
  /** The fallback handler's and the callbacks' first argument (Hono's `c`, the `Request`). */
  readonly request: TRequest;
  /** The same request in core's neutral shape. */
  readonly http: HttpRequest;
  /**
   * Node's response where the runtime runs on Node's server (`@hono/node-server`): held requests
   * and permits watch it as on every Node adapter, pipelined connections included.
   */
  readonly node: (NodeResponse & ListenableResponse) | undefined;
  /** The request's `signal`, read only where there is no Node response and something is watched. */
  readonly signal: () => AbortSignalLike;
  /** Runs the handler; its `Response`. */
  readonly next: () => Promise<Response>;
  /** Builds the `Response` of a refusal or a static fallback (default: a plain `Response`). */
  readonly reply?: ((reply: HttpReply) => Response) | undefined;
}

/**
 * A response without body with this header tells `@hono/node-server` that the reply was written
 * on Node's response already: it sends nothing more. It reads the header only on a `Response` of
 * Node's own class, which it replaces with a lighter one of its own once it serves: the class is
 * taken as this module loads (before any server starts, as imports come first).
 */
const ALREADY_SENT = 'x-hono-already-sent';
const NodeResponseClass = globalThis.Response;

/**
 * Runs one request through a limit on a Fetch-API runtime (`@sluice/hono`, `withRateLimit`):
 * decides, answers with the refusal or the fallback (see `fetchOutcome`), or holds the request
 * and runs the handler, then adds the rate-limit headers to its `Response` (see `withHeaders`).
 * A limit that watches every response (a concurrency permit, when `permits`) watches Node's
 * response, or else a `FetchExchange` that ends when the handler returns.
 *
 * @param decider - the limit
 * @param permits - whether the limit watches every request's response, not only a held one's
 * @param turn - the request, and how to run its handler
 * @returns the response to send
 * @example
 * ```ts
 * return limitFetch(limit, false, { request, http, node: undefined, signal: () => request.signal, next: () => handler(request) });
 * ```
 */
export async function limitFetch<TRequest>(
  decider: HttpDecider<TRequest, AnyHttpOutcome<(request: TRequest, decision: never) => unknown>>,
  permits: boolean,
  turn: FetchTurn<TRequest>,
): Promise<Response> {
  const { request, http, node } = turn;
  const exchange = node === undefined && permits ? new FetchExchange(turn.signal()) : undefined;
  // A rate limit reads no response; a concurrency limit always has one.
  const watched = (node ?? exchange) as ListenableResponse;
  try {
    const outcome =
      decider.decideSync(request, http, watched) ?? (await decider.decide(request, http, watched));
    // On Node's server the headers go on Node's response, as every Node adapter sets them: the
    // runtime merges them into whatever it writes (a header of the handler's own wins), and a
    // handler's `c.json(…)` keeps the framework's cheapest way out, a `Response` without `Headers`.
    const written = node !== undefined && outcome.kind !== 'gone';
    if (written) setHeaderList(node, outcome.headers);
    const early = await fetchOutcome(
      outcome,
      request,
      () => watched ?? new FetchExchange(turn.signal()),
      turn.reply,
      (rejection) => refusal(node, rejection),
      written,
    );
    if (early !== undefined || outcome.kind === 'gone') return early as Response;
    const response = await turn.next();
    return written ? response : withHeaders(response, outcome.headers);
  } finally {
    exchange?.end();
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
