import { SluiceConfigError } from '../policy/config-error';
import { clientAddressKey, ipv4Key } from './client-address';
import type { RequestView } from './http-request';
import { escaperFor } from './key-text';
import { forwardedClient, type TrustFunction } from './trust-proxy';

/** How the client address is resolved for `$remote_addr` and `$binary_remote_addr`. */
export interface ClientAddressOptions {
  /** From `compileTrustProxy`; `undefined`: the socket's peer, `X-Forwarded-For` ignored. */
  readonly trust: TrustFunction | undefined;
  /** IPv6 clients are keyed by this prefix length. */
  readonly ipv6Subnet: number;
}

/** A key template compiled once: reads the request and returns the key, `''` when every variable is empty. */
export type KeyReader = (view: RequestView) => string;

/** The variables a key template may use, for messages and docs. */
export const KEY_VARIABLES = [
  '$binary_remote_addr',
  '$remote_addr',
  '$http_<name>',
  '$arg_<name>',
  '$cookie_<name>',
  '$server_name',
  '$uri',
  '$route',
] as const;

const ACCEPTED = `expected text with nginx variables (${KEY_VARIABLES.join(' ')}), e.g. "$http_user_id:$arg_sku_id", or (req) => string | undefined`;

/** `$name` or `${name}`; names are nginx's: letters, digits, underscores. */
const VARIABLE = /\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/g;

/**
 * Compiles a key written with nginx variables into a reader, once, at creation.
 *
 * - `$binary_remote_addr`, `$remote_addr`: the client address (honouring `trustProxy`), IPv6 grouped
 *   by `ipv6Subnet`, `::ffff:a.b.c.d` as IPv4. Both give the same readable text: nginx's binary form
 *   saves shared memory, which a string key has no use for, and readable keys are easier to operate.
 * - `$http_user_id`: header `user-id` (lower-cased, `_` read as `-`, as nginx does; see
 *   {@link RequestView.keyHeader}).
 * - `$arg_sku_id`: query argument `sku_id` as the app reads it — from the framework's parsed query
 *   (an array by its one value, an object as absent), else the `sku_id` of the URL,
 *   percent-decoded, so `%61` and `a` share a bucket (see {@link RequestView.arg}).
 * - `$cookie_session`: the cookie named exactly `session`.
 * - `$server_name`: the host the client asked for (`Host`, without port). The client chooses it: for
 *   one bucket per server use a constant key such as `'server'`.
 * - `$uri`: the path, normalized as nginx does (decoded, `.`/`..` and `//` resolved; case and a
 *   trailing slash kept): not what a router matched, since routers ignore case or a trailing slash.
 * - `$route`: the route pattern the framework matched (`/shop/sku/:id`), one bucket per route
 *   whatever the spelling of the path. Koa and Fastify give the whole pattern, a router prefix's
 *   parameters included (`/t/:tenant/sku/:id`: one bucket for every tenant). Express keeps no
 *   pattern of a mount path, only the text that matched it, which is percent-decoded and
 *   lower-cased unless the apps match case-sensitively: a mount parameter counts by its value
 *   (`/t/acme/sku/:id`: one bucket per tenant, however spelled). Where no route has matched yet
 *   (Express middleware mounted with `app.use`, Koa middleware before the router), it is `$uri`,
 *   and a `SluiceKeyWarning` says so once: mount such a limit on the route. A request that
 *   matched no route at all (Fastify's and Nest's not-found handler) has the `$route`
 *   `NOT_FOUND_ROUTE`, `'(not found)'`: one bucket for every URL a client makes up.
 *
 * A variable given several differing values (`?sku_id=B&sku_id=A`, a header on two lines, a
 * cookie twice) reads one of them and sets {@link RequestView.several}: the app may read any of
 * them, so the HTTP layer refuses such a request (400).
 *
 * A key reading the client address refuses a request whose connection is already gone (see
 * {@link readsClientAddress}); the other variables are read only from what the request carries.
 *
 * As in nginx, the key is empty, and the request not limited by default, only when every variable
 * in it is empty; a key without variables (`'server'`) is a constant, one bucket for all.
 *
 * **Distinct values, distinct keys.** In a key of several parts, a value could contain the text
 * that separates it from the next (`user-id: a:b` with `sku_id=c` against `user-id: a` with
 * `sku_id=b:c`), so each value is escaped where it borders a separator: the separator's first
 * character and `%` become `%XX` (`a:b` → `a%3Ab`). Values are read outwards from one pivot, the
 * client address when the key has one (it stays readable, IPv6 colons included), else the last
 * variable: values left of it escape the first character of the text after them, values right of
 * it the last character of the text before them, and the pivot escapes nothing. Ordinary values
 * (`u7:42`, `2001:db8::/64:42`) read as written. Two variables side by side (`$a$b`) could always
 * run into each other, and a `%` where a value meets its separator could not be told from the
 * value's escapes (`u7%` then `x` against `u7` then `25%x`), so both are refused: put another
 * separator there.
 *
 * @param template - e.g. `'$http_user_id:$arg_sku_id'`
 * @param client - how `$remote_addr` is resolved
 * @throws {@link SluiceConfigError} naming `key` for an unknown variable, a stray `$`, two
 *   variables with nothing between them, or a `%` where a value meets its separator
 * @example
 * ```ts
 * const read = compileKeyTemplate('$http_user_id:$arg_sku_id', { trust: undefined, ipv6Subnet: 64 });
 * read(new RequestView({ remoteAddress: '10.0.0.1', url: '/buy?sku_id=42', headers: { 'user-id': 'u7' } })); // 'u7:42'
 * ```
 */
export function compileKeyTemplate(template: string, client: ClientAddressOptions): KeyReader {
  if (template === '') throw new SluiceConfigError('key', template, ACCEPTED);
  const names: string[] = [];
  const literals: string[] = [];
  let last = 0;
  for (const match of template.matchAll(VARIABLE)) {
    literals.push(template.slice(last, match.index));
    names.push((match[1] ?? match[2]) as string);
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  literals.push(tail);
  const readers = names.map((name) => variableReader(name, template, client));
  const stray = literals.find((text) => text.includes('$'));
  if (stray !== undefined) {
    throw new SluiceConfigError(
      'key',
      template,
      `"$" must start a variable such as $arg_sku_id; ${ACCEPTED}`,
    );
  }
  if (literals.slice(1, -1).includes('')) {
    throw new SluiceConfigError(
      'key',
      template,
      'put text between two variables ("$http_user_id:$arg_sku_id"): side by side, one value could run into the next',
    );
  }
  if (readers.length === 0) return () => template;
  if (readers.length === 1 && literals[0] === '' && tail === '') return readers[0] as KeyReader;
  const addressAt = names.findIndex((name) => name === 'remote_addr' || name === 'binary_remote_addr');
  const pivot = addressAt >= 0 ? addressAt : readers.length - 1;
  // A value ends (left of the pivot) or starts (right of it) at the separator's character it
  // escapes; a `%` there could not be told from the value's own escapes (`u7%` then `x`, `u7`
  // then `25%x`).
  const unsafe = names.findIndex((_, i) =>
    i < pivot
      ? (literals[i + 1] as string).startsWith('%')
      : i > pivot && (literals[i] as string).endsWith('%'),
  );
  if (unsafe >= 0) {
    throw new SluiceConfigError(
      'key',
      template,
      `put another separator than "%" beside $${names[unsafe] as string} ("$http_user_id:$arg_sku_id"): values are escaped as %XX, so a "%" beside one could not say where it ends`,
    );
  }
  const escapes = readers.map((_, i) => {
    if (i === pivot) return undefined;
    // Neighbouring literals are non-empty (checked above), so each has a first and a last character.
    const separator = i < pivot ? (literals[i + 1] as string) : (literals[i] as string);
    const chars = [...separator];
    return escaperFor((i < pivot ? chars[0] : chars[chars.length - 1]) as string);
  });
  return (view) => {
    let key = literals[0] as string;
    let empty = true;
    for (let i = 0; i < readers.length; i++) {
      const value = (readers[i] as KeyReader)(view);
      if (value !== '') empty = false;
      const escape = escapes[i];
      key += (escape === undefined ? value : escape(value)) + (literals[i + 1] as string);
    }
    return empty ? '' : key;
  };
}

function variableReader(name: string, template: string, client: ClientAddressOptions): KeyReader {
  switch (name) {
    case 'binary_remote_addr':
    case 'remote_addr':
      return addressReader(client);
    case 'server_name':
      return (view) => view.host();
    case 'uri':
      return (view) => view.uri();
    case 'route':
      return routeReader(template);
  }
  const [, kind, field] = /^(http|arg|cookie)_(.+)$/.exec(name) ?? [];
  if (kind === 'http' && field !== undefined) {
    const header = field.toLowerCase().replaceAll('_', '-');
    return (view) => view.keyHeader(header);
  }
  if (kind === 'arg' && field !== undefined) return (view) => view.arg(field);
  if (kind === 'cookie' && field !== undefined) return (view) => view.cookie(field);
  throw new SluiceConfigError('key', template, `unknown variable $${name}; ${ACCEPTED}`);
}

/**
 * Whether a key template reads the client address (`$remote_addr`, `$binary_remote_addr`): such
 * a limit refuses a request whose connection is gone (`remoteAddress` `undefined`), whatever
 * `onMissingKey` says — the empty key would otherwise let it pass, and the client is not there
 * to read a reply.
 *
 * @param template - a key template that compiles
 * @example
 * ```ts
 * readsClientAddress('$http_user_id:$remote_addr'); // true
 * ```
 */
export function readsClientAddress(template: string): boolean {
  for (const match of template.matchAll(VARIABLE)) {
    const name = match[1] ?? match[2];
    if (name === 'remote_addr' || name === 'binary_remote_addr') return true;
  }
  return false;
}

/** `$route`, or `$uri` where no route has matched, with a warning the first time. */
function routeReader(template: string): KeyReader {
  let warned = false;
  return (view) => {
    const route = view.route();
    if (route !== undefined) return route;
    if (!warned) {
      warned = true;
      process.emitWarning(
        `sluice key "${template}": no route has matched at this point (e.g. Express app.use, Koa middleware before the router), so $route is the path ($uri); mount the limit on the route to key by its pattern`,
        'SluiceKeyWarning',
      );
    }
    return view.uri();
  };
}

/** Distinct addresses whose key an address reader remembers before it starts afresh. */
const ADDRESS_CACHE_SIZE = 1024;

/**
 * `$remote_addr`: the client address's key. An IPv4 peer's is found at once; IPv6 keys take
 * parsing and masking, so the last {@link ADDRESS_CACHE_SIZE} other addresses' keys are
 * remembered (a client sends many requests), the bound keeping forged addresses from growing memory.
 */
function addressReader({ trust, ipv6Subnet }: ClientAddressOptions): KeyReader {
  const keys = new Map<string, string>();
  // The last client's, first: a keep-alive connection hands the same address string each time.
  let lastAddress = '';
  let lastKey = '';
  return (view) => {
    const { remoteAddress } = view.request;
    const address =
      trust === undefined
        ? (remoteAddress ?? '')
        : forwardedClient(remoteAddress, view.header('x-forwarded-for'), trust);
    if (address === lastAddress) return lastKey;
    let key = ipv4Key(address) ?? keys.get(address);
    if (key === undefined) {
      key = clientAddressKey(address, ipv6Subnet);
      if (keys.size >= ADDRESS_CACHE_SIZE) keys.clear();
      keys.set(address, key);
    }
    lastAddress = address;
    lastKey = key;
    return key;
  };
}
