import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { clientAddressKey } from '../../src/adapter';

/** The key as the parser gives it, without the IPv4 shortcut. */
function parsed(address: string): string {
  if (address === '' || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  return ip.kind() === 'ipv4' ? ip.toString() : 'ipv6';
}

// The HTTP fast path keys IPv4 peers without ipaddr.js: it must agree with the parser everywhere,
// including forms the parser reads otherwise (octal '010', hex, short '127.1').
describe('client address keys of IPv4 text: the shortcut agrees with ipaddr.js', () => {
  const part = fc.oneof(
    fc.integer({ min: 0, max: 300 }).map(String),
    fc.constantFrom('0', '00', '010', '0x1f', '255', '256', '', '-1', '1e2', ' 1', '٣'),
  );
  const dotted = fc
    .array(part, { minLength: 1, maxLength: 5 })
    .chain((parts) =>
      fc.constantFrom('', '::ffff:', '::FFFF:', '::', '::ffff:0:').map((prefix) => prefix + parts.join('.')),
    );

  test('every dotted text, with and without an IPv4-mapped prefix', () => {
    fc.assert(
      fc.property(dotted, (address) => {
        const key = clientAddressKey(address, 64);
        const expected = parsed(address);
        if (expected === 'ipv6') expect(key).toMatch(/\/64$/);
        else expect(key).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['010.0.0.1', '8.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['1.2.3.256', '1.2.3.256'],
  ])('%s → %s', (address, key) => {
    expect(clientAddressKey(address, 64)).toBe(key);
  });
});
