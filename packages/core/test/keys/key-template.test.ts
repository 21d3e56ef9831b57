import fc from 'fast-check';
import { SluiceConfigError } from '../../src';
import {
  clientAddressKey,
  compileKeyTemplate,
  compileTrustProxy,
  forwardedClient,
  RequestView,
  resolveIpv6Subnet,
  type ClientAddressOptions,
  type HttpRequest,
} from '../../src/adapter';

const direct: ClientAddressOptions = { trust: undefined, ipv6Subnet: 64 };

function view(partial: Partial<HttpRequest> = {}): RequestView {
  return new RequestView({ remoteAddress: '203.0.113.9', url: '/', headers: {}, ...partial });
}

function keyOf(template: string, request: Partial<HttpRequest> = {}, client = direct): string {
  return compileKeyTemplate(template, client)(view(request));
}

describe('compileKeyTemplate', () => {
  test('$binary_remote_addr and $remote_addr read the socket peer', () => {
    expect(keyOf('$binary_remote_addr')).toBe('203.0.113.9');
    expect(keyOf('$remote_addr')).toBe('203.0.113.9');
    expect(keyOf('${remote_addr}')).toBe('203.0.113.9');
  });

  test('X-Forwarded-For is ignored unless trustProxy says so', () => {
    const forged = { headers: { 'x-forwarded-for': '198.51.100.1' } };
    expect(keyOf('$remote_addr', forged)).toBe('203.0.113.9');
    expect(keyOf('$remote_addr', forged, { trust: compileTrustProxy(true), ipv6Subnet: 64 })).toBe(
      '198.51.100.1',
    );
    expect(keyOf('$remote_addr', forged, { trust: compileTrustProxy('10.0.0.0/8'), ipv6Subnet: 64 })).toBe(
      '203.0.113.9',
    );
  });

  test('$http_<name> reads a header, underscores as dashes, case-insensitively', () => {
    expect(keyOf('$http_user_id', { headers: { 'user-id': 'u7' } })).toBe('u7');
    expect(keyOf('$http_User_ID', { headers: { 'user-id': 'u7' } })).toBe('u7');
    expect(keyOf('$http_x_tags', { headers: { 'x-tags': ['a', 'b'] } })).toBe('a, b');
  });

  test('$arg_<name> reads the first query argument, decoded', () => {
    expect(keyOf('$arg_sku_id', { url: '/buy?sku_id=42&x=1' })).toBe('42');
    expect(keyOf('$arg_sku_id', { url: '/buy?sku_id=a&sku_id=b' })).toBe('a');
    expect(keyOf('$arg_sku_id', { url: '/buy?sku_id=%61+b' })).toBe('a b');
    expect(keyOf('$arg_sku_id', { url: '/buy?sku_id=' })).toBe('');
    expect(keyOf('$arg_sku_id', { url: '/buy?SKU_ID=1' })).toBe('');
    expect(keyOf('$arg_q', { url: '/s?q=1#frag' })).toBe('1');
  });

  test('$cookie_<name> reads a cookie by its exact name', () => {
    const headers = { cookie: 'a=1; session=s%20x; session=second; q="quoted"' };
    expect(keyOf('$cookie_session', { headers })).toBe('s x');
    expect(keyOf('$cookie_q', { headers })).toBe('quoted');
    expect(keyOf('$cookie_Session', { headers })).toBe('');
  });

  test('$server_name is the requested host without port; $uri the normalized path', () => {
    expect(keyOf('$server_name', { headers: { host: 'Shop.Example:8080' } })).toBe('shop.example');
    expect(keyOf('$server_name', { headers: { host: '[::1]:8080' } })).toBe('[::1]');
    expect(keyOf('$uri', { url: '/a//b/./c/../d%20e?x=1' })).toBe('/a/b/d e');
    expect(keyOf('$uri', { url: '/a/%2e%2e/b/' })).toBe('/b/');
    expect(keyOf('$uri', { url: 'http://h.example/x?y' })).toBe('/x');
  });

  test('a composed key is empty only when every variable is', () => {
    const template = '$http_user_id:$arg_sku_id';
    expect(keyOf(template, { url: '/?sku_id=9', headers: { 'user-id': 'u' } })).toBe('u:9');
    expect(keyOf(template, { url: '/?sku_id=9' })).toBe(':9');
    expect(keyOf(template, { url: '/' })).toBe('');
    expect(keyOf('sku:$arg_sku_id', { url: '/' })).toBe('');
  });

  test('a key without variables is a constant', () => {
    expect(keyOf('server')).toBe('server');
  });

  test.each([['$'], ['$foo'], ['a$'], ['$http_'], ['']])('rejects %j naming the key option', (template) => {
    expect(() => compileKeyTemplate(template, direct)).toThrow(SluiceConfigError);
    try {
      compileKeyTemplate(template, direct);
    } catch (error) {
      expect((error as SluiceConfigError).option).toBe('key');
    }
  });

  test('property: literal text between variables is kept, values are substituted in order', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
    // Separators no value below contains, so nothing needs escaping; between variables never empty.
    const separator = fc.stringMatching(/^[^$a-zA-Z0-9%{}]{1,5}$/);
    const edge = fc.stringMatching(/^[^$a-zA-Z0-9%{}]{0,5}$/);
    const value = fc.stringMatching(/^[a-zA-Z0-9]{1,6}$/);
    fc.assert(
      fc.property(
        edge,
        fc.array(fc.tuple(name, value, separator), { minLength: 1, maxLength: 4 }),
        edge,
        (head, parts, tail) => {
          const headers: Record<string, string> = {};
          let template = head;
          let expected = head;
          parts.forEach(([header, v, text], i) => {
            headers[header] ??= v;
            const between = i < parts.length - 1 ? text : tail;
            template += `\${http_${header}}${between}`;
            expected += (headers[header] as string) + between;
          });
          expect(keyOf(template, { headers })).toBe(expected);
        },
      ),
    );
  });

  test('property: any text either compiles or throws SluiceConfigError, and never throws at request time', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (template, url) => {
        let read;
        try {
          read = compileKeyTemplate(template, direct);
        } catch (error) {
          expect(error).toBeInstanceOf(SluiceConfigError);
          return;
        }
        expect(typeof read(view({ url: `/${url}`, headers: { cookie: url } }))).toBe('string');
      }),
    );
  });
});

describe('client addresses', () => {
  test('IPv4-mapped IPv6 is the IPv4 address', () => {
    expect(clientAddressKey('::ffff:10.0.0.7', 64)).toBe('10.0.0.7');
    expect(clientAddressKey('::FFFF:10.0.0.7', 64)).toBe('10.0.0.7');
  });

  test('IPv6 is grouped by its /ipv6Subnet network', () => {
    expect(clientAddressKey('2001:db8:1:2:aaaa::1', 64)).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:2:ffff:ffff:ffff:ffff', 64)).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:3::1', 64)).toBe('2001:db8:1:3::/64');
    expect(clientAddressKey('2001:db8:1:3::1', 48)).toBe('2001:db8:1::/48');
    expect(clientAddressKey('2001:db8:1:3::1', 56)).toBe('2001:db8:1::/56');
    expect(clientAddressKey('2001:db8:1:3:0:0:0:1', 128)).toBe('2001:db8:1:3::1');
    expect(clientAddressKey('fe80::1%eth0', 64)).toBe('fe80::/64');
  });

  test('unparsable text is kept; no address is empty', () => {
    expect(clientAddressKey('unknown', 64)).toBe('unknown');
    expect(clientAddressKey('', 64)).toBe('');
  });

  test('forwardedClient walks X-Forwarded-For from the nearest hop', () => {
    const xff = '198.51.100.1, 10.0.0.2, 10.0.0.3';
    expect(forwardedClient('10.0.0.4', xff, undefined)).toBe('10.0.0.4');
    expect(forwardedClient('10.0.0.4', xff, compileTrustProxy(true))).toBe('198.51.100.1');
    expect(forwardedClient('10.0.0.4', xff, compileTrustProxy(1))).toBe('10.0.0.3');
    expect(forwardedClient('10.0.0.4', xff, compileTrustProxy(2))).toBe('10.0.0.2');
    expect(forwardedClient('10.0.0.4', xff, compileTrustProxy('10.0.0.0/8'))).toBe('198.51.100.1');
    expect(forwardedClient('10.0.0.4', xff, compileTrustProxy(['loopback']))).toBe('10.0.0.4');
    expect(
      forwardedClient(
        '10.0.0.4',
        xff,
        compileTrustProxy((a: string) => a === '10.0.0.4'),
      ),
    ).toBe('10.0.0.3');
    expect(forwardedClient(undefined, xff, compileTrustProxy(true))).toBe('');
  });

  test('invalid trustProxy and ipv6Subnet throw naming the option', () => {
    for (const bad of [-1, 1.5, 'not-an-ip', [], {}, [1]]) {
      expect(() => compileTrustProxy(bad)).toThrow(expect.objectContaining({ option: 'trustProxy' }));
    }
    for (const bad of [0, 129, 64.5, '64']) {
      expect(() => resolveIpv6Subnet(bad)).toThrow(expect.objectContaining({ option: 'ipv6Subnet' }));
    }
    expect(compileTrustProxy(false)).toBeUndefined();
    expect(compileTrustProxy(0)).toBeUndefined();
  });
});
