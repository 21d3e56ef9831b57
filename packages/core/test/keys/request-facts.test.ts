import {
  clientAddressKey,
  compileKeyTemplate,
  compileTrustProxy,
  forwardedClient,
  KEY_VARIABLES,
  readsClientAddress,
  RequestView,
  type ClientAddressOptions,
  type HttpRequest,
} from '../../src/adapter';

const direct: ClientAddressOptions = { trust: undefined, ipv6Subnet: 64 };

function keyOf(template: string, request: Partial<HttpRequest> = {}, client = direct): string {
  const view = new RequestView({ remoteAddress: '203.0.113.9', url: '/', headers: {}, ...request });
  return compileKeyTemplate(template, client)(view);
}

describe('$arg_ reads the query the app reads (issue #16, item 2)', () => {
  const withQuery = (query: unknown, url = '/') => ({ url, query: () => query });

  test("from the framework's parsed query: a string, an array's first element, nothing else", () => {
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: 'X' }))).toBe('X');
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: ['X', 'Y'] }))).toBe('X');
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: [] }))).toBe('');
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: [{ a: 'X' }, 'Y'] }))).toBe('');
    // Express 4's ?sku_id[a]=X: an object is no key, never '[object Object]'.
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: { a: 'X' } }))).toBe('');
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: 42 }))).toBe('');
    expect(keyOf('$arg_sku_id', withQuery({}))).toBe('');
    expect(keyOf('$arg_sku_id', withQuery(undefined))).toBe('');
    expect(keyOf('$arg_sku_id', withQuery('sku_id=X'))).toBe('');
  });

  test('the parsed query wins over the URL, and is all that is read: no second parser to disagree', () => {
    // Fastify reads X after a '#'; a URL parser stops there.
    expect(keyOf('$arg_sku_id', withQuery({ sku_id: 'X' }, '/sku?a=1#&sku_id=X'))).toBe('X');
    expect(keyOf('$arg_sku_id', withQuery({ a: '1' }, '/sku?sku_id=X'))).toBe('');
    expect(keyOf('$arg_sku_id', { url: '/sku?a=1#&sku_id=X' })).toBe('');
  });

  test('a framework parser that throws: the URL gives the key, so the request is still limited', () => {
    const query = () => {
      throw new RangeError('Input depth exceeded');
    };
    expect(keyOf('$arg_sku_id', { url: '/?sku_id=X&a[b][c][d]=1', query })).toBe('X');
  });

  test('own entries only: a plain object does not lend its prototype names', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(keyOf(`$arg_${name}`, withQuery({ a: '1' }))).toBe('');
    }
    const own = JSON.parse('{"__proto__":"p","constructor":"c"}') as unknown;
    expect(keyOf('$arg___proto__', withQuery(own))).toBe('p');
    expect(keyOf('$arg_constructor', withQuery(own))).toBe('c');
  });

  test('the query is read once per request, and only by a key that uses $arg_', () => {
    let reads = 0;
    const query = () => {
      reads++;
      return { a: 'A', b: 'B' };
    };
    const view = new RequestView({ remoteAddress: '203.0.113.9', url: '/', headers: { u: 'x' }, query });
    expect(compileKeyTemplate('$http_u:$uri:$cookie_c:$remote_addr', direct)(view)).toBe('x:/::203.0.113.9');
    expect(reads).toBe(0);
    expect(compileKeyTemplate('$arg_a:$arg_b', direct)(view)).toBe('A:B');
    expect(reads).toBe(1);
  });

  test('without a framework: the first value in the URL, names compared decoded, values decoded', () => {
    expect(keyOf('$arg_sku_id', { url: '/?sku_id=a&sku_id=b' })).toBe('a');
    expect(keyOf('$arg_sku_id', { url: '/?%73ku_id=a&sku_id=b' })).toBe('a');
    expect(keyOf('$arg_sku_id', { url: '/?sku%5Fid=a' })).toBe('a');
    expect(keyOf('$arg_sku_id', { url: '/?sku_idx=a&xsku_id=b&sku_id' })).toBe('');
    expect(keyOf('$arg_sku_id', { url: '/?&&sku_id=a+b%20c=d&' })).toBe('a b c=d');
    expect(keyOf('$arg_sku_id', { url: '/?sku_id=%FF%C3%A9' })).toBe('%FFé');
    expect(keyOf('$arg_sku_id', { url: '/?x=1#sku_id=a' })).toBe('');
    expect(keyOf('$arg_sku_id', { url: '/sku_id=a' })).toBe('');
  });
});

describe('$route: the route the framework matched (issue #16, item 7)', () => {
  let warnings: jest.SpyInstance;
  beforeEach(() => {
    warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warnings.mockRestore());

  test('is a key variable', () => {
    expect(KEY_VARIABLES).toContain('$route');
  });

  test("the pattern, whatever the path's spelling; composable like any variable", () => {
    const route = () => '/shop/sku/:id';
    for (const url of ['/shop/sku/1', '/SHOP/sku/2/', '/shop//sku/3?x=1']) {
      expect(keyOf('$route', { url, route })).toBe('/shop/sku/:id');
    }
    expect(keyOf('$route|$http_u', { url: '/', route, headers: { u: 'u7' } })).toBe('/shop/sku/:id|u7');
    expect(warnings).not.toHaveBeenCalled();
  });

  test('no route matched (yet): the normalized path, with one SluiceKeyWarning per limit', () => {
    const read = compileKeyTemplate('$route', direct);
    const at = (url: string, route?: () => string | undefined) =>
      read(new RequestView({ remoteAddress: '203.0.113.9', url, headers: {}, ...(route ? { route } : {}) }));
    expect(at('/a//b/../c?x=1', () => undefined)).toBe('/a/c');
    expect(at('/d', () => '')).toBe('/d');
    expect(at('/e')).toBe('/e');
    expect(warnings).toHaveBeenCalledTimes(1);
    expect(warnings.mock.calls[0]).toEqual([
      expect.stringContaining('$route is the path ($uri)'),
      'SluiceKeyWarning',
    ]);
    expect(at('/f', () => '/f/:x')).toBe('/f/:x');
  });
});

describe('client addresses: NAT64 and ports in X-Forwarded-For (issue #16, item 11)', () => {
  test('a NAT64 address (64:ff9b::/96) is keyed by the IPv4 address it carries', () => {
    expect(clientAddressKey('64:ff9b::192.0.2.33', 64)).toBe('192.0.2.33');
    expect(clientAddressKey('64:ff9b::c000:221', 64)).toBe('192.0.2.33');
    expect(clientAddressKey('64:FF9B:0:0:0:0:C000:0222', 128)).toBe('192.0.2.34');
    expect(keyOf('$remote_addr', { remoteAddress: '64:ff9b::198.51.100.7' })).toBe('198.51.100.7');
    // Two IPv4 clients behind one translator: two keys, where a /64 would make them one.
    expect(clientAddressKey('64:ff9b::1.2.3.4', 64)).not.toBe(clientAddressKey('64:ff9b::5.6.7.8', 64));
    // Only the well-known /96: other prefixes (RFC 8215's 64:ff9b:1::/48 is the operator's to lay out) are IPv6.
    expect(clientAddressKey('64:ff9b:1::c000:221', 64)).toBe('64:ff9b:1::/64');
    expect(clientAddressKey('64:ff9b:0:0:1::c000:221', 64)).toBe('64:ff9b::/64');
  });

  test('an X-Forwarded-For entry with a port is the address without it', () => {
    const all = compileTrustProxy(true);
    expect(forwardedClient('10.0.0.1', '203.0.113.9:51234', all)).toBe('203.0.113.9');
    expect(forwardedClient('10.0.0.1', '[2001:db8::1]:443', all)).toBe('2001:db8::1');
    expect(forwardedClient('10.0.0.1', '[2001:db8::1]', all)).toBe('2001:db8::1');
    expect(forwardedClient('10.0.0.1', '[fe80::1%eth0]:80', all)).toBe('fe80::1%eth0');
    expect(forwardedClient('10.0.0.1', '2001:db8::1', all)).toBe('2001:db8::1');
    expect(forwardedClient('10.0.0.1', '::ffff:1.2.3.4', all)).toBe('::ffff:1.2.3.4');
    // Not an address with a port: kept as received.
    for (const text of ['unknown:80', '1.2.3.4:', '1.2.3.4:123456', '[::1]x', 'a.b.c.d:1']) {
      expect(forwardedClient('10.0.0.1', text, all)).toBe(text);
    }
  });

  test('a number of hops written as text (from an environment variable) is refused, not read as an address', () => {
    for (const text of ['1', ' 2 ', '1, 10.0.0.0/8']) {
      expect(() => compileTrustProxy(text)).toThrow(/trustProxy .*a number of hops is a number/);
    }
    expect(compileTrustProxy(Number('1'))?.('10.0.0.1', 0)).toBe(true);
    expect(compileTrustProxy('127.0.0.1')?.('127.0.0.1', 0)).toBe(true);
  });

  test('ports never split one client into many keys; proxies are trusted by address, port or not', () => {
    const trusted: ClientAddressOptions = { trust: compileTrustProxy('10.0.0.0/8'), ipv6Subnet: 64 };
    const keyFrom = (xff: string) =>
      keyOf('$remote_addr', { remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': xff } }, trusted);
    const keys = new Set(
      ['203.0.113.9', '203.0.113.9:1', '203.0.113.9:65535', '203.0.113.9:80, 10.0.0.2:8080'].map(keyFrom),
    );
    expect([...keys]).toEqual(['203.0.113.9']);
    expect(keyFrom('[2001:db8:1:2::7]:443, 10.0.0.3:1')).toBe('2001:db8:1:2::/64');
  });
});

describe('readsClientAddress: which keys refuse a request whose connection is gone (issue #16, item 1)', () => {
  test.each<[string, boolean]>([
    ['$binary_remote_addr', true],
    ['$remote_addr', true],
    ['${remote_addr}', true],
    ['$http_user_id:$remote_addr', true],
    ['$http_user_id', false],
    ['$http_remote_addr', false],
    ['remote_addr', false],
    ['$arg_sku_id:$uri', false],
  ])('%s → %s', (template, reads) => {
    expect(readsClientAddress(template)).toBe(reads);
  });
});
