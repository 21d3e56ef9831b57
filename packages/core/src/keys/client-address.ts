import ipaddr from 'ipaddr.js';
import { SluiceConfigError } from '../policy/config-error';

/**
 * Validates the `ipv6Subnet` option: the prefix length IPv6 clients are grouped by.
 *
 * One IPv6 subscriber usually holds a whole /64 (often a /56 or /48), so keying by the full
 * address would let one client rotate through 2^64 addresses and never be limited.
 *
 * @param value - the option as given
 * @defaultValue 64
 * @throws {@link SluiceConfigError} naming `ipv6Subnet` unless a whole number from 1 to 128
 * @example
 * ```ts
 * resolveIpv6Subnet(56); // 56
 * ```
 */
export function resolveIpv6Subnet(value: unknown): number {
  if (value === undefined) return 64;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 128) {
    throw new SluiceConfigError(
      'ipv6Subnet',
      value,
      'must be a whole number from 1 to 128 (the prefix length IPv6 clients are grouped by)',
    );
  }
  return value;
}

/** What the neutral request reads of a connection: Node's `net.Socket` (or a framework's stand-in). */
export interface PeerSocket {
  readonly remoteAddress?: string | undefined;
  readonly localAddress?: string | undefined;
  readonly destroyed?: boolean;
}

/**
 * The client address of a connection, for the neutral request's `remoteAddress`. Node reads the
 * peer's address from the operating system when asked, so once the client has reset the
 * connection (`socket.resetAndDestroy()` right after writing its request) `remoteAddress` is
 * `undefined`, though the request still reaches the app; no framework reads it earlier. Such a
 * request must not pass a limit keyed by the address: this tells a connection that is gone from
 * one that never had an IP peer.
 *
 * @param socket - `req.socket`
 * @returns the peer's address; `undefined` when the connection is gone (the socket is destroyed,
 *   or a TCP socket, which still knows its own address, no longer knows its peer's); `''` when
 *   the transport has no IP peers (a Unix socket knows neither address)
 * @example
 * ```ts
 * socketPeerAddress(req.socket); // '::ffff:203.0.113.9'
 * ```
 */
export function socketPeerAddress(socket: PeerSocket | null | undefined): string | undefined {
  const address = socket?.remoteAddress;
  if (address !== undefined || socket === null || socket === undefined) return address;
  return socket.destroyed === true || socket.localAddress !== undefined ? undefined : '';
}

/**
 * The key text of a client address:
 *
 * - IPv4 in its canonical dotted form; an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, as dual-stack
 *   sockets report IPv4 peers) is the IPv4 address, so one client never has two keys; so is an
 *   address of the NAT64 well-known prefix (`64:ff9b::1.2.3.4`, RFC 6052), through which a
 *   translator shows IPv4 clients to an IPv6 server — grouped by /64, they would all share one key;
 * - IPv6 masked to its `/ipv6Subnet` network, written `2001:db8:1:2::/64` (the full address when 128);
 *   a zone id (`%eth0`) is dropped;
 * - anything else (an unparsable `X-Forwarded-For` entry from a trusted proxy) as received.
 *
 * @param address - the address text (`''` when there is no client address)
 * @param ipv6Subnet - prefix length from {@link resolveIpv6Subnet}
 * @example
 * ```ts
 * clientAddressKey('2001:db8:1:2:aaaa::1', 64); // '2001:db8:1:2::/64'
 * clientAddressKey('::ffff:10.0.0.7', 64);      // '10.0.0.7'
 * ```
 */
export function clientAddressKey(address: string, ipv6Subnet: number): string {
  const ipv4 = ipv4Key(address);
  if (ipv4 !== undefined) return ipv4;
  if (address === '' || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const bytes = ip.toByteArray();
  if (isNat64(bytes)) return bytes.slice(12).join('.');
  if (ipv6Subnet === 128) return ipaddr.fromByteArray(bytes).toString();
  for (let bit = ipv6Subnet; bit < 128; bit++) {
    const index = bit >> 3;
    bytes[index] = (bytes[index] as number) & ~(0x80 >> (bit & 7));
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Subnet}`;
}

/** `64:ff9b::/96`, the NAT64 well-known prefix: the last 32 bits are the IPv4 client. */
const NAT64_PREFIX = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

function isNat64(bytes: readonly number[]): boolean {
  return NAT64_PREFIX.every((byte, i) => bytes[i] === byte);
}

/**
 * The key of what sockets report for IPv4 peers, found without parsing (ipaddr.js tries its IPv6
 * regexes first): a canonical `a.b.c.d` is its own key, `::ffff:a.b.c.d` is `a.b.c.d`;
 * `undefined` for anything else. Same result as {@link clientAddressKey} where defined.
 *
 * @param address - the address text
 * @example
 * ```ts
 * ipv4Key('::ffff:10.0.0.7'); // '10.0.0.7'
 * ipv4Key('2001:db8::1');     // undefined
 * ```
 */
export function ipv4Key(address: string): string | undefined {
  if (isCanonicalIpv4(address, 0)) return address;
  if (address.startsWith('::ffff:') && isCanonicalIpv4(address, 7)) return address.slice(7);
  return undefined;
}

/**
 * Whether `text` from `start` is an IPv4 address in canonical dotted-decimal form (four parts
 * 0–255, no leading zeros), the form `ipaddr.js` writes back: `'010.0.0.1'` (octal to ipaddr.js)
 * or `'127.1'` are not, and take the parsing path.
 */
function isCanonicalIpv4(text: string, start: number): boolean {
  let dots = 0;
  let digits = 0;
  let value = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return false; // a leading zero
      value = value * 10 + c - 48;
      if (value > 255) return false;
      digits++;
    } else {
      return false;
    }
  }
  return dots === 3 && digits > 0;
}
