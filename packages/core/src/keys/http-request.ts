import { decodeKeyText } from './key-text';

/**
 * The framework-neutral request: the three facts every Node framework exposes unchanged from
 * `http.IncomingMessage`, and two that only the framework knows, read lazily. Adapters build it;
 * everything else (cookies, path, host, content negotiation) is derived here in core, once, the
 * same way for every framework.
 *
 * @example
 * ```ts
 * // Express
 * const request: HttpRequest = {
 *   remoteAddress: socketPeerAddress(req.socket),
 *   url: req.originalUrl,
 *   headers: req.headers,
 *   query: () => req.query,
 *   route: () => (req.route === undefined ? undefined : req.baseUrl + String(req.route.path)),
 * };
 * ```
 */
export interface HttpRequest {
  /**
   * The TCP peer, as `socketPeerAddress(req.socket)` gives it: `undefined` once the connection is
   * gone (a key reading the client address then refuses the request), `''` on a transport without
   * IP peers (a Unix socket: the address is missing, `onMissingKey` decides).
   */
  readonly remoteAddress: string | undefined;
  /**
   * The request target as received, path and query: Express `req.originalUrl`, Koa
   * `ctx.originalUrl`, Fastify `request.url` (not a mount-relative path).
   */
  readonly url: string;
  /** Headers with lower-case names, as Node parses them (`req.headers`). */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /**
   * The header lines as received, names and values in turn (Node's `req.rawHeaders`), where
   * `$http_` sees a header sent on several lines (see {@link RequestView.keyHeader}). Without it,
   * `$http_` reads {@link HttpRequest.headers} alone.
   */
  readonly rawHeaders?: readonly string[] | undefined;
  /**
   * The query as the framework parsed it, what the app will read (Express `req.query`, Koa
   * `ctx.query`, Fastify `request.query`), or a function of an argument's name giving every value
   * the app can read for it, for frameworks that look arguments up one by one (Hono's
   * `c.req.queries(name)`, a Fetch handler's `searchParams.getAll(name)`). Called at most once per
   * request, and only by a key
   * using `$arg_`. Without it, `$arg_` parses {@link HttpRequest.url}.
   */
  readonly query?: () => unknown;
  /**
   * The route pattern the framework matched (`'/shop/sku/:id'`), `undefined` when it has matched
   * none yet (Express app-level middleware runs before routing), {@link NOT_FOUND_ROUTE} when
   * routing is over and no route matched. Read only by `$route`.
   */
  readonly route?: () => string | undefined;
}

/**
 * `$route` of a request that matched no route, once routing is over (a framework's not-found
 * handler): one value for all of them, so that a client cannot make a bucket per URL it invents.
 * No route pattern starts with `(`.
 */
export const NOT_FOUND_ROUTE = '(not found)';

/**
 * One header's value: a repeated header Node keeps as an array (`set-cookie`, unknown names in
 * old Node versions) is joined with `', '` as HTTP defines for list-valued fields.
 *
 * Only the object's own entries count: Node's `req.headers` is a plain object, so a key such as
 * `$http_constructor` would otherwise read `Object.prototype.constructor` (a function) and crash.
 *
 * @param request - the neutral request
 * @param name - the header name in lower case
 * @returns the value, or `''` when absent
 * @example
 * ```ts
 * headerValue({ remoteAddress: undefined, url: '/', headers: { 'user-id': '42' } }, 'user-id'); // '42'
 * ```
 */
export function headerValue(request: HttpRequest, name: string): string {
  const { headers } = request;
  if (!Object.hasOwn(headers, name)) return '';
  const value: unknown = headers[name];
  if (typeof value === 'string') return value;
  return Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(', ') : '';
}

/** Marks a part of the request not read yet (a framework's query may itself be `undefined`). */
const UNREAD: unique symbol = Symbol('unread');
/** The query is read from the URL: no framework gave one, or its parser threw. */
const FROM_URL: unique symbol = Symbol('from-url');
const PLUS_AS_SPACE = { plusAsSpace: true } as const;

/** What was sent several times with differing values: the first of them. */
class Several {
  constructor(readonly first: string) {}
}

/**
 * The parts of a request keys and replies read, each read on first use, and only the part a key
 * uses: a key of `$arg_sku_id` decodes that one argument, never the rest of the query, so a
 * hostile argument the key does not read costs nothing but the scan past it.
 */
export class RequestView {
  readonly request: HttpRequest;
  /**
   * Set when a key variable read something the request sends several times with differing
   * values (`?sku_id=B&sku_id=A`, a header on two lines, a cookie twice): the reader returns the
   * first, but the app may read any of them, so no one key stands for the request. Whoever reads
   * a key clears it first (the HTTP layer refuses such a request: see `createHttpLimiter`).
   */
  several = false;
  #query: unknown = UNREAD;
  #path: string | undefined;

  /** @param request - the neutral request the adapter built */
  constructor(request: HttpRequest) {
    this.request = request;
  }

  /** A header (lower-case name), `''` when absent. */
  header(name: string): string {
    return headerValue(this.request, name);
  }

  /**
   * A header as `$http_` reads it: its value as the app reads it ({@link RequestView.header};
   * a line's commas are part of it), but a header sent on several lines, which Node joins
   * (`a, b`) or keeps the first of (`authorization`), is read line by line: the lines' one value
   * when they agree (`a` twice is `a`), else the value as Node gives it, and
   * {@link RequestView.several} is set.
   * `cookie` lines are one list of cookies (HTTP/2 sends a cookie a line) and read joined.
   */
  keyHeader(name: string): string {
    const { rawHeaders } = this.request;
    const value = this.header(name);
    if (rawHeaders === undefined || name === 'cookie') return value;
    let first: string | undefined;
    let lines = 0;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const field = rawHeaders[i] as string;
      if (field.length !== name.length || field.toLowerCase() !== name) continue;
      const line = rawHeaders[i + 1] as string;
      lines++;
      if (first === undefined) first = line;
      else if (line !== first) return this.#one(new Several(value));
    }
    return lines > 1 ? (first as string) : value;
  }

  /**
   * Query argument `name` as the app reads it, `''` when absent:
   *
   * - from the framework's parsed query when the adapter gives one: a string as is, an array
   *   (`?a=1&a=2`, Express's `?a[]=1`) by its one value when every element is that text (an
   *   element that is no text counts as `''`), anything else (an object such as Express's
   *   `?a[b]=1`) as absent — a key is never `'[object Object]'`;
   * - else (no framework, or its parser threw) from the URL: the value of `name` (exact, after
   *   decoding), percent-decoded (`+` is a space), as nginx's `$arg_`; escapes that are not
   *   UTF-8, and a decoded `%`, stay encoded (see {@link decodeKeyText}), so distinct values never
   *   share a key.
   *
   * Given several differing values (`?a=&a=1`, `?a=2&a=1`), it returns the first and sets
   * {@link RequestView.several}: the app may read any of them.
   */
  arg(name: string): string {
    if (this.#query === UNREAD) this.#query = frameworkQuery(this.request);
    if (this.#query === FROM_URL) return this.#one(urlArg(this.request.url, name));
    try {
      return this.#one(parsedArg(this.#query, name));
    } catch {
      // A look-up function that throws, as a parser that throws (see frameworkQuery).
      return this.#one(urlArg(this.request.url, name));
    }
  }

  /**
   * The cookie called `name` (exact, case-sensitive, as RFC 6265 compares names), decoded like
   * {@link RequestView.arg} but without `+` as space; `''` when absent. Only its value is decoded.
   * Sent several times with differing values (`a=1; a=2`), the first, and
   * {@link RequestView.several} is set.
   */
  cookie(name: string): string {
    return this.#one(cookieValue(this.header('cookie'), name));
  }

  /** A value read: several differing ones set {@link RequestView.several} and give the first. */
  #one(value: string | Several): string {
    if (typeof value === 'string') return value;
    this.several = true;
    return value.first;
  }

  /**
   * `$uri`, as nginx normalizes it: the path without query or fragment, each segment
   * percent-decoded (escapes that are not UTF-8, a decoded `%` and `%2F` stay encoded), runs of
   * `/` merged, `.` and `..` segments resolved. Case and a trailing slash are kept.
   */
  uri(): string {
    if (this.#path === undefined) this.#path = normalizePath(this.request.url);
    return this.#path;
  }

  /** `$route`: the route pattern the framework matched, `undefined` when none has (yet). */
  route(): string | undefined {
    const route = this.request.route?.();
    return typeof route === 'string' && route !== '' ? route : undefined;
  }

  /** The host name the client asked for (`Host`, or HTTP/2 `:authority`), lower-case and without port. */
  host(): string {
    const authority = this.header('host') || this.header(':authority');
    // '[::1]:8080' keeps its brackets; 'example.com:8080' loses its port.
    const host = authority.startsWith('[')
      ? authority.slice(0, authority.indexOf(']') + 1)
      : authority.split(':')[0];
    return (host ?? '').trim().toLowerCase();
  }
}

/**
 * The framework's parsed query, or {@link FROM_URL}. A parser that throws (a framework's option,
 * say a strict depth limit) would fail the app's own read too; the URL still gives the key, so
 * such a request is limited as any other, never let through for want of a key.
 */
function frameworkQuery(request: HttpRequest): unknown {
  if (request.query === undefined) return FROM_URL;
  try {
    return request.query();
  } catch {
    return FROM_URL;
  }
}

/**
 * An argument of a framework's parsed query: own entries only (`__proto__` is a name like any
 * other), or what its look-up function gives for the name.
 */
function parsedArg(query: unknown, name: string): string | Several {
  let value: unknown;
  if (typeof query === 'function') value = (query as (name: string) => unknown)(name);
  else if (typeof query !== 'object' || query === null || !Object.hasOwn(query, name)) return '';
  else value = (query as Record<string, unknown>)[name];
  if (!Array.isArray(value)) return textOf(value);
  const first = textOf(value[0]);
  for (let i = 1; i < value.length; i++) if (textOf(value[i]) !== first) return new Several(first);
  return first;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The value of argument `name` in the URL's query (up to a `#`). One scan: each name is compared
 * as sent, and decoded only when it holds an escape and could be `name`; only the matching
 * values are decoded.
 */
function urlArg(url: string, name: string): string | Several {
  const mark = url.indexOf('?');
  if (mark < 0) return '';
  let end = url.indexOf('#', mark);
  if (end < 0) end = url.length;
  let start = mark + 1;
  let found: string | undefined;
  while (start < end) {
    let stop = url.indexOf('&', start);
    if (stop < 0 || stop > end) stop = end;
    if (stop > start) {
      // Bounded to this pair: a search for '=' never runs on into later pairs.
      const pair = url.slice(start, stop);
      const eq = pair.indexOf('=');
      const raw = eq < 0 ? pair : pair.slice(0, eq);
      if (raw === name || (isEncodedName(raw, name) && decodeKeyText(raw, PLUS_AS_SPACE) === name)) {
        const value = eq < 0 ? '' : decodeKeyText(pair.slice(eq + 1), PLUS_AS_SPACE);
        if (found === undefined) found = value;
        else if (value !== found) return new Several(found);
      }
    }
    start = stop + 1;
  }
  return found ?? '';
}

/** Whether `raw` could decode to `name` (word characters): it holds an escape, and decoding only shortens text. */
function isEncodedName(raw: string, name: string): boolean {
  return raw.length > name.length && raw.includes('%');
}

function cookieValue(header: string, name: string): string | Several {
  let start = 0;
  let found: string | undefined;
  while (start < header.length) {
    let stop = header.indexOf(';', start);
    if (stop < 0) stop = header.length;
    const pair = header.slice(start, stop);
    const eq = pair.indexOf('=');
    if (eq >= 0 && pair.slice(0, eq).trim() === name) {
      let value = pair.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      value = decodeKeyText(value);
      if (found === undefined) found = value;
      else if (value !== found) return new Several(found);
    }
    start = stop + 1;
  }
  return found ?? '';
}

/**
 * nginx normalizes `$uri` so that one resource has one key: `/a//b/./c/../d%20e` → `/a/b/d e`.
 * Segments are decoded before `.` and `..` are resolved (`%2e%2e` is `..`, as in nginx); a `%2F`
 * is not re-split and stays `%2F` (it was data, not a separator: `/a%2Fb` is not `/a/b`).
 */
function normalizePath(url: string): string {
  const end = url.search(/[?#]/);
  let path = end < 0 ? url : url.slice(0, end);
  // An absolute-form target ('http://host/path') keeps only its path.
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
  if (scheme) path = path.slice(scheme[0].length) || '/';
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    const segment = decodeKeyText(raw, { keep: '/' });
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}${path.length > 1 && path.endsWith('/') && segments.length > 0 ? '/' : ''}`;
}
