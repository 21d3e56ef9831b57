/**
 * The framework-neutral request: the three facts every Node framework exposes unchanged from
 * `http.IncomingMessage`. Adapters build it; everything else (query, cookies, path, host,
 * content negotiation) is derived here in core, once, the same way for every framework.
 *
 * @example
 * ```ts
 * // Express
 * const request: HttpRequest = { remoteAddress: req.socket.remoteAddress, url: req.originalUrl, headers: req.headers };
 * ```
 */
export interface HttpRequest {
  /** The TCP peer (`req.socket.remoteAddress`); `undefined` once the socket is gone. */
  readonly remoteAddress: string | undefined;
  /**
   * The request target as received, path and query: Express `req.originalUrl`, Koa
   * `ctx.originalUrl`, Fastify `request.url` (not a mount-relative path).
   */
  readonly url: string;
  /** Headers with lower-case names, as Node parses them (`req.headers`). */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/**
 * One header's value: a repeated header Node keeps as an array (`set-cookie`, unknown names in
 * old Node versions) is joined with `', '` as HTTP defines for list-valued fields.
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
  const value = request.headers[name];
  if (value === undefined) return '';
  return typeof value === 'string' ? value : value.join(', ');
}

/**
 * The parts of a request keys and replies read, each parsed on first use and kept for the rest
 * of the request (a key reading two query arguments parses the query once).
 */
export class RequestView {
  readonly request: HttpRequest;
  #query: URLSearchParams | undefined;
  #cookies: Map<string, string> | undefined;
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
   * The first value of query argument `name`, percent-decoded (`+` is a space), `''` when absent.
   * A repeated argument (`?sku_id=a&sku_id=b`) gives its first value, as nginx's `$arg_` does.
   */
  arg(name: string): string {
    if (this.#query === undefined) {
      const url = this.request.url;
      const mark = url.indexOf('?');
      const hash = url.indexOf('#', mark);
      this.#query = new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1, hash < 0 ? undefined : hash));
    }
    return this.#query.get(name) ?? '';
  }

  /** The first cookie called `name` (exact, case-sensitive, as RFC 6265 compares names), decoded; `''` when absent. */
  cookie(name: string): string {
    if (this.#cookies === undefined) this.#cookies = parseCookies(this.header('cookie'));
    return this.#cookies.get(name) ?? '';
  }

  /** nginx `$uri`: the path without the query, percent-decoded, slashes merged, `.` and `..` resolved. */
  uri(): string {
    if (this.#path === undefined) this.#path = normalizePath(this.request.url);
    return this.#path;
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

function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (name === '' || cookies.has(name)) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    cookies.set(name, safeDecode(value));
  }
  return cookies;
}

/** Decodes percent-escapes; text that is not valid UTF-8 once decoded is kept as received. */
function safeDecode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * nginx normalizes `$uri` so that one resource has one key: `/a//b/./c/../d%20e` → `/a/b/d e`.
 * Segments are decoded before `.` and `..` are resolved (`%2e%2e` is `..`, as in nginx); a decoded
 * `%2F` is not re-split (it was data, not a separator).
 */
function normalizePath(url: string): string {
  const end = url.search(/[?#]/);
  let path = end < 0 ? url : url.slice(0, end);
  // An absolute-form target ('http://host/path') keeps only its path.
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
  if (scheme) path = path.slice(scheme[0].length) || '/';
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    const segment = safeDecode(raw);
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}${path.length > 1 && path.endsWith('/') && segments.length > 0 ? '/' : ''}`;
}
