import proxyAddr from 'proxy-addr';
import { SluiceConfigError } from '../policy/config-error';

/**
 * Which proxies in front of the app may be believed about the client's address (`X-Forwarded-For`),
 * with the meanings of Express's `trust proxy` setting:
 *
 * - `false` (default): nobody; the client is the socket's peer and `X-Forwarded-For` is ignored.
 * - `true`: every hop; the client is the left-most `X-Forwarded-For` entry (only safe when a proxy
 *   you run overwrites that header).
 * - a number `n`: the `n` nearest hops are your proxies; the client is the address before them.
 * - a string or string array: addresses and subnets of your proxies (`'10.0.0.0/8'`,
 *   `'loopback'`, `'linklocal'`, `'uniquelocal'`; a string may list several separated by commas).
 * - a function `(address, hop) => boolean`: trusts the proxy at `address`, `hop` 0 being the socket's peer.
 */
export type TrustProxy =
  boolean | number | string | readonly string[] | ((address: string, hop: number) => boolean);

/** A compiled {@link TrustProxy}: whether the hop at `address` (0 = the socket's peer) is a trusted proxy. */
export type TrustFunction = (address: string, hop: number) => boolean;

const ACCEPTED =
  'expected false (default: ignore X-Forwarded-For), true, a number of proxy hops, addresses or subnets ("10.0.0.0/8", "loopback"), or (address, hop) => boolean';

/**
 * Validates and compiles the `trustProxy` option once, at creation.
 *
 * @param value - the option as given
 * @returns the trust function, or `undefined` when no proxy is trusted (the socket's peer is the client)
 * @throws {@link SluiceConfigError} naming `trustProxy` for any other value or an invalid address
 * @example
 * ```ts
 * const trust = compileTrustProxy(['loopback', '10.0.0.0/8']);
 * ```
 */
export function compileTrustProxy(value: unknown): TrustFunction | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return () => true;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      throw new SluiceConfigError('trustProxy', value, 'a number of hops must be a whole number >= 0');
    const hops = value;
    return hops === 0 ? undefined : (_address, hop) => hop < hops;
  }
  if (typeof value === 'function') return value as TrustFunction;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((s): s is string => typeof s === 'string' && s.length > 0)
  ) {
    throw new SluiceConfigError('trustProxy', value, ACCEPTED);
  }
  // proxy-addr reads "1" as the address 0.0.0.1 (as Express does): a hop count from an
  // environment variable would silently trust no one.
  const digits = list.find((entry) => /^\d+$/.test(entry));
  if (digits !== undefined) {
    throw new SluiceConfigError(
      'trustProxy',
      value,
      `a number of hops is a number, not the text "${digits}" (Number(process.env.…)); ${ACCEPTED}`,
    );
  }
  try {
    return proxyAddr.compile(list);
  } catch (error) {
    throw new SluiceConfigError('trustProxy', value, `${(error as Error).message}; ${ACCEPTED}`);
  }
}

/**
 * The client address: the socket's peer, or, walking `X-Forwarded-For` from the nearest hop
 * outwards, the first address that is not a trusted proxy (as Express and proxy-addr do). An
 * entry with a port, as some proxies write them (`203.0.113.9:51234`, `[2001:db8::1]:443`), is
 * read without it: the port changes with every connection, so keyed with it each connection
 * would have a bucket of its own.
 *
 * @param socketAddress - the TCP peer (`req.socket.remoteAddress`); `undefined` once the socket is gone
 * @param forwardedFor - the `X-Forwarded-For` header (repeated headers joined by commas)
 * @param trust - from {@link compileTrustProxy}; `undefined` ignores `forwardedFor` entirely
 * @returns the address text as received, or `''` when there is none
 */
export function forwardedClient(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trust: TrustFunction | undefined,
): string {
  if (socketAddress === undefined || socketAddress === '') return '';
  if (trust === undefined || forwardedFor === undefined || forwardedFor === '') return socketAddress;
  // Nearest hop first: the socket's peer, then X-Forwarded-For read right to left.
  const hops = [
    socketAddress,
    ...forwardedFor
      .split(',')
      .map((s) => withoutPort(s.trim()))
      .filter((s) => s !== '')
      .reverse(),
  ];
  for (let i = 0; i < hops.length - 1; i++) {
    if (!trust(hops[i] as string, i)) return hops[i] as string;
  }
  return hops[hops.length - 1] as string;
}

/** `a.b.c.d:port` → `a.b.c.d`, `[v6]:port` and `[v6]` → `v6`; anything else (a bare IPv6 address included) as is. */
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9A-Fa-f:.]+(?:%[\w.~-]+)?)\])(?::\d{1,5})?$/;

function withoutPort(entry: string): string {
  const found = WITH_PORT.exec(entry);
  return found === null ? entry : ((found[1] ?? found[2]) as string);
}
