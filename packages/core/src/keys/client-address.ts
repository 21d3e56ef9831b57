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

/**
 * The key text of a client address:
 *
 * - IPv4 in its canonical dotted form; an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, as dual-stack
 *   sockets report IPv4 peers) is the IPv4 address, so one client never has two keys;
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
  if (address === '' || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  if (ipv6Subnet === 128) return ipaddr.fromByteArray(ip.toByteArray()).toString();
  const bytes = ip.toByteArray();
  for (let bit = ipv6Subnet; bit < 128; bit++) {
    const index = bit >> 3;
    bytes[index] = (bytes[index] as number) & ~(0x80 >> (bit & 7));
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Subnet}`;
}
