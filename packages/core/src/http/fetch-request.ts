import type { HttpRequest } from '../keys/http-request';

/** Response or request headers of the Fetch API, as far as core reads them. */
export interface FetchHeaders {
  forEach(callback: (value: string, name: string) => void): void;
}

/** What core reads of a Fetch API `Request`. */
export interface FetchRequestLike {
  /** The absolute URL (`https://shop.example/sku?id=1`). */
  readonly url: string;
  readonly headers: FetchHeaders;
}

/**
 * A request in core's neutral shape for the Fetch-API adapters (`@sluice/hono`, `withRateLimit`):
 * the client address the adapter found, the request target, and the headers, which a Fetch
 * `Headers` object holds: they are copied into the plain record core reads only when a key or a
 * reply reads one (an admitted request keyed by the address reads none). The query is looked up
 * by name, as the app reads it: `URLSearchParams.get`, unless a framework gives its own
 * (override {@link FetchRequest.query}, as {@link FetchRequest.route}).
 *
 * @typeParam TSource - the framework's request, for subclasses' `query` and `route`
 * @example
 * ```ts
 * const http = new FetchRequest(request, request, '203.0.113.9', requestTarget(request.url), request.headers);
 * ```
 */
export class FetchRequest<TSource> implements HttpRequest {
  #headers: HttpRequest['headers'] | undefined;
  #fetchHeaders: FetchHeaders | undefined;

  /**
   * @param source - the framework's request (Hono's context, a Fetch `Request`)
   * @param request - the Fetch request, for the query
   * @param remoteAddress - the client address: `undefined` when it cannot be known (a key reading
   *   it then refuses the request), `''` when the transport has none (`onMissingKey` decides)
   * @param url - the request target, path and query (see {@link requestTarget})
   * @param headers - Node's parsed headers where the runtime has them (no copy), else the Fetch headers
   * @param rawHeaders - Node's header lines where the runtime has them, so that a header sent on
   *   several lines is read line by line as in the Node adapters; elsewhere the Fetch headers'
   *   joined value is what the app reads, and the key
   */
  constructor(
    protected readonly source: TSource,
    protected readonly request: FetchRequestLike,
    readonly remoteAddress: string | undefined,
    readonly url: string,
    headers: HttpRequest['headers'] | FetchHeaders,
    readonly rawHeaders?: readonly string[],
  ) {
    if (typeof headers.forEach === 'function') this.#fetchHeaders = headers as FetchHeaders;
    else this.#headers = headers as HttpRequest['headers'];
  }

  get headers(): HttpRequest['headers'] {
    if (this.#headers === undefined) {
      // Lower-case names, a repeated field joined with ', ', as Headers gives them.
      const record: Record<string, string> = Object.create(null) as Record<string, string>;
      this.#fetchHeaders?.forEach((value, name) => (record[name] = value));
      this.#headers = record;
    }
    return this.#headers;
  }

  /**
   * Argument look-up by name: every value `new URL(request.url).searchParams.getAll(name)` gives
   * the app (`.get` reads the first), so values that differ are seen.
   */
  query(): unknown {
    const params = new URL(this.request.url).searchParams;
    return (name: string) => {
      const values = params.getAll(name);
      return values.length === 0 ? undefined : values;
    };
  }

  /** The route matched: none for a bare Fetch handler. */
  route(): string | undefined {
    return undefined;
  }
}

/**
 * The request target (path and query) of an absolute URL, as a Fetch `Request` holds it:
 * `'https://shop.example/sku?id=1'` → `'/sku?id=1'`.
 *
 * @param url - `request.url`
 * @example
 * ```ts
 * requestTarget('http://localhost:8787/buy?sku_id=42'); // '/buy?sku_id=42'
 * ```
 */
export function requestTarget(url: string): string {
  const scheme = url.indexOf('://');
  if (scheme < 0) return url;
  const path = url.indexOf('/', scheme + 3);
  if (path >= 0) return url.slice(path);
  const query = url.indexOf('?', scheme + 3);
  return query < 0 ? '/' : `/${url.slice(query)}`;
}

/**
 * A Fetch API `Request` in core's neutral shape, for a bare Fetch handler (`withRateLimit`).
 *
 * @param request - the Fetch request
 * @param remoteAddress - the client address (see {@link FetchRequest})
 * @param rawHeaders - Node's header lines, on Node's server (see {@link FetchRequest})
 * @example
 * ```ts
 * const http = fromFetchRequest(request, server.requestIP(request)?.address);
 * ```
 */
export function fromFetchRequest(
  request: FetchRequestLike,
  remoteAddress: string | undefined,
  rawHeaders?: readonly string[],
): HttpRequest {
  return new FetchRequest(
    request,
    request,
    remoteAddress,
    requestTarget(request.url),
    request.headers,
    rawHeaders,
  );
}
