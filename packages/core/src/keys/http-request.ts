import { decodeKeyText } from './key-text';

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

/**
 * The parts of a request keys and replies read, each parsed on first use and kept for the rest
 * of the request (a key reading two query arguments parses the query once).
 */
export class RequestView {
  readonly request: HttpRequest;
  #query: Map<string, string> | undefined;
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
   * Escapes that are not UTF-8, and a decoded `%`, stay encoded (see {@link decodeKeyText}), so
   * distinct values never share a key.
   */
  arg(name: string): string {
    this.#query ??= parseQuery(this.request.url);
    return this.#query.get(name) ?? '';
  }

  /**
   * The first cookie called `name` (exact, case-sensitive, as RFC 6265 compares names), decoded
   * like {@link RequestView.arg} but without `+` as space; `''` when absent.
   */
  cookie(name: string): string {
    this.#cookies ??= parseCookies(this.header('cookie'));
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

/** Query arguments by decoded name, first value kept; a Map, so `__proto__` is a name like any other. */
function parseQuery(url: string): Map<string, string> {
  const args = new Map<string, string>();
  const mark = url.indexOf('?');
  if (mark < 0) return args;
  const hash = url.indexOf('#', mark);
  for (const pair of url.slice(mark + 1, hash < 0 ? undefined : hash).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeKeyText(eq < 0 ? pair : pair.slice(0, eq), { plusAsSpace: true });
    if (!args.has(name))
      args.set(name, eq < 0 ? '' : decodeKeyText(pair.slice(eq + 1), { plusAsSpace: true }));
  }
  return args;
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
    cookies.set(name, decodeKeyText(value));
  }
  return cookies;
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
