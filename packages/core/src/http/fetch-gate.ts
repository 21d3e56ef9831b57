import type { HttpRequest } from '../keys/http-request';
import { namingAdapterOptions } from './adapter-options';
import { takeClientAddress } from './client-address-option';
import { FetchExchange, type AbortSignalLike } from './fetch-exchange';
import { enterFetch, type FetchEntry, type FetchPass, type NodeBindings } from './fetch-limit';
import { withHeaders } from './fetch-outcome';
import type { HttpReply } from './http-options';
import type { AnyHttpOutcome, HttpDecider } from './write-outcome';

/** A limit of a Fetch-API adapter, with the framework's request (Hono's `c`) in callbacks. */
export type FetchDecider<TContext> = HttpDecider<
  TContext,
  AnyHttpOutcome<(context: TContext, decision: never) => unknown>
>;

/**
 * What the Fetch-API limits need of their framework: how a refusal is answered, and where the
 * handler's `Response` is. Plain functions, made once, called without `this`.
 *
 * @typeParam TContext - the framework's request (Hono's `c`, a bare handler's `Request`)
 * @typeParam TResult - what the handler gives (`void` for Hono's `next()`, a bare handler's `Response`)
 */
export interface FetchFrame<TContext, TResult> {
  /** The `Response` of a refusal or a static fallback (Hono's `c.body`, which keeps the headers earlier middleware set). */
  readonly reply: (context: TContext, reply: HttpReply) => Response;
  /**
   * The handler's `Response` once it has run (Hono's `c.res`, a bare handler's result): the
   * headers left to add go on it, and an exchange ends with it (what `countWhen` reads).
   */
  readonly response: (context: TContext, result: TResult) => Response;
  /** Puts `copy` in the place of the handler's `Response`, whose headers were immutable (Hono: `c.res = copy`); the result to pass on. */
  readonly replace: (context: TContext, result: TResult, copy: Response) => TResult;
  /**
   * Whether a `countWhen` function gets the handler's `Response` through a `FetchExchange`, on
   * Node's server too (a bare handler, whose `Request` holds no response), not the context.
   */
  readonly countsOnExchange?: boolean;
}

/** How one adapter's limits are built from their options. */
export interface FetchGateSettings {
  /** How an unknown option's error introduces the adapter's own (`clientAddress`), e.g. `'Hono options'`; none: not named. */
  readonly where?: string;
  /** Whether the limit watches every response (a concurrency or adaptive permit), not only a held one's. */
  readonly permits?: boolean;
  /** Whether the limit reads no client address whatever its options say (an adaptive limit has no key). */
  readonly keyless?: boolean;
}

/** What runs the handler: Hono's `next`, a bare handler called with its arguments. */
export type FetchNext<TResult> = () => TResult | Promise<TResult>;

/** Fetch-API limits resolved once from their options (see {@link fetchGate}). */
export interface FetchGate<TContext, TResult, TAddress> {
  /**
   * One request through the limits: the refusal, or the handler's result with the limits'
   * headers. On Node's server an admitted request's headers are on Node's response already and
   * `next()`'s result comes back as it is (no frame of core's waits on it), as a refusal does.
   *
   * @param http - the request in core's neutral shape
   * @param node - Node's request and response under the Fetch request (see `nodeBindingsOf`)
   * @param fetched - the Fetch request: a held request, or a permit off Node's server, watches its `signal`
   */
  readonly pass: (
    context: TContext,
    http: HttpRequest,
    node: NodeBindings | undefined,
    fetched: { readonly signal: AbortSignalLike },
    next: FetchNext<TResult>,
  ) => TResult | Response | Promise<TResult | Response>;
  /** The `clientAddress` option, taken out of the limits' options (see `takeClientAddress`). */
  readonly clientAddress: TAddress | undefined;
  /** Whether some limit's key reads the client address. */
  readonly readsAddress: boolean;
}

/**
 * Builds the limits of a Fetch-API adapter (`fetchMiddleware`, `withRateLimit`) from their
 * options, once: `clientAddress` taken out, the limits created, and what each request does.
 * Off Node's server, a limit that watches every response (a permit, `countWhen`) is given a
 * `FetchExchange` on the request's `signal`, ended once the handler has returned its `Response`
 * (or none ran, or it threw).
 *
 * @param options - one limit's options, or several in order
 * @param create - builds the limits from the options without `clientAddress`
 * @param frame - the framework's side (see {@link FetchFrame})
 * @param settings - see {@link FetchGateSettings}
 * @throws `SluiceConfigError` naming the first invalid option
 */
export function fetchGate<TOptions, TAddress extends (...args: never[]) => unknown, TContext, TResult>(
  options: TOptions | readonly TOptions[],
  create: (limits: TOptions | TOptions[]) => FetchDecider<TContext>,
  frame: FetchFrame<TContext, TResult>,
  settings: FetchGateSettings = {},
): FetchGate<TContext, TResult, TAddress> {
  const { limits, clientAddress, readsAddress } = takeClientAddress<TOptions, TAddress>(options);
  const { where } = settings;
  const decider =
    where === undefined
      ? create(limits)
      : namingAdapterOptions(['clientAddress'], where, () => create(limits));
  // A rate limit with `countWhen` reads every response (off Node's server: the handler's `Response`).
  const watches =
    settings.permits === true || (decider as { countsResponses?: boolean }).countsResponses === true;
  const onExchange = frame.countsOnExchange === true;
  const { reply } = frame;
  type Pass = FetchGate<TContext, TResult, TAddress>['pass'];
  type Watched = (exchange: FetchExchange, ...rest: Parameters<Pass>) => Promise<TResult | Response>;
  const watched: Watched = async (exchange, context, http, node, fetched, next) => {
    let done: Response | undefined;
    try {
      const raw = node === undefined ? exchange : node.outgoing;
      const entry = enterFetch(decider, context, http, raw, fetched, reply, onExchange ? exchange : context);
      const settled = entry instanceof Promise ? await entry : entry;
      if (!Array.isArray(settled)) return settled as Response;
      const result = (await proceed(settled, context, next, frame)) as TResult;
      done = frame.response(context, result);
      return result;
    } finally {
      exchange.end(done);
    }
  };
  const pass: Pass = (context, http, node, fetched, next) => {
    if (!watches || (node !== undefined && !onExchange)) {
      const outgoing = node === undefined ? undefined : node.outgoing;
      const entry = enterFetch(
        decider,
        context,
        http,
        outgoing,
        fetched,
        reply,
        onExchange ? undefined : context,
      );
      return proceed(entry, context, next, frame);
    }
    // Off Node's server the exchange is what a permit watches; on it, only what carries the `Response`.
    const exchange = new FetchExchange(node === undefined ? fetched.signal : undefined);
    return watched(exchange, context, http, node, fetched, next);
  };
  return { pass, clientAddress, readsAddress: readsAddress && settings.keyless !== true };
}

/**
 * What a request does with its entry: the refusal as it is, else the handler, the headers left
 * to add put on its `Response` (on a copy if it is immutable); with none left (on Node's
 * server), `next()`'s result as it is.
 */
function proceed<TContext, TResult>(
  entry: FetchEntry | Promise<FetchEntry>,
  context: TContext,
  next: FetchNext<TResult>,
  frame: FetchFrame<TContext, TResult>,
): TResult | Response | Promise<TResult | Response> {
  if (entry instanceof Promise) return entry.then((settled) => proceed(settled, context, next, frame));
  if (!Array.isArray(entry)) return entry as Response;
  if (entry.length === 0) return next();
  const pass = entry as FetchPass;
  return Promise.resolve(next()).then((result) => {
    const response = frame.response(context, result);
    const copy = withHeaders(response, pass);
    return copy === response ? result : frame.replace(context, result, copy);
  });
}
