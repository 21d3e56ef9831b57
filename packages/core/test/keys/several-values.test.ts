import {
  compileKeyTemplate,
  RequestView,
  type ClientAddressOptions,
  type HttpRequest,
} from '../../src/adapter';

const direct: ClientAddressOptions = { trust: undefined, ipv6Subnet: 64 };

/** The key of `template` for a request, and whether a variable of it read several differing values. */
function read(template: string, request: Partial<HttpRequest>): [string, boolean] {
  const view = new RequestView({ remoteAddress: '203.0.113.9', url: '/', headers: {}, ...request });
  const key = compileKeyTemplate(template, direct)(view);
  return [key, view.several];
}

const withQuery = (query: unknown) => ({ query: () => query });

describe('a variable given several differing values sets RequestView.several (the HTTP layer refuses it)', () => {
  test("$arg_ from the framework's parsed query: an array of one text is that text; else several", () => {
    expect(read('$arg_sku_id', withQuery({ sku_id: ['X', 'X'] }))).toEqual(['X', false]);
    expect(read('$arg_sku_id', withQuery({ sku_id: ['X'] }))).toEqual(['X', false]);
    expect(read('$arg_sku_id', withQuery({ sku_id: [''] }))).toEqual(['', false]);
    expect(read('$arg_sku_id', withQuery({ sku_id: [] }))).toEqual(['', false]);
    expect(read('$arg_sku_id', withQuery({ sku_id: ['', 'X'] }))).toEqual(['', true]);
    expect(read('$arg_sku_id', withQuery({ sku_id: ['Y', 'X'] }))).toEqual(['Y', true]);
    expect(read('$arg_sku_id', withQuery({ sku_id: ['X', 'X', 'Y'] }))).toEqual(['X', true]);
    // Express 4's ?sku_id[a]=X&sku_id=Y: an element that is no text reads as ''.
    expect(read('$arg_sku_id', withQuery({ sku_id: [{ a: 'X' }, 'Y'] }))).toEqual(['', true]);
    expect(read('$arg_sku_id', withQuery({ sku_id: { a: 'X' } }))).toEqual(['', false]);
  });

  test('$arg_ from the URL: every value of the name, compared decoded', () => {
    expect(read('$arg_sku_id', { url: '/?sku_id=a&sku_id=a' })).toEqual(['a', false]);
    expect(read('$arg_sku_id', { url: '/?sku_id=a+b&x=1&sku_id=a%20b' })).toEqual(['a b', false]);
    expect(read('$arg_sku_id', { url: '/?sku_id=a&%73ku_id=%61' })).toEqual(['a', false]);
    expect(read('$arg_sku_id', { url: '/?sku_id=&sku_id=a' })).toEqual(['', true]);
    expect(read('$arg_sku_id', { url: '/?sku_id=a&sku_id' })).toEqual(['a', true]);
    expect(read('$arg_sku_id', { url: '/?sku_id=b&%73ku_id=a' })).toEqual(['b', true]);
    // Names are compared exactly, after decoding: another name, another argument.
    expect(read('$arg_sku_id', { url: '/?sku_id=a&SKU_ID=b&sku_idx=c' })).toEqual(['a', false]);
    expect(read('$arg_sku_id', { url: '/?sku_id=a;sku_id=b' })).toEqual(['a;sku_id=b', false]);
    expect(read('$arg_sku_id', { url: '/?sku_id=a#&sku_id=b' })).toEqual(['a', false]);
  });

  test('$cookie_: a cookie twice with differing values; lines of the header are one list', () => {
    expect(read('$cookie_s', { headers: { cookie: 's=a; t=1; s=a' } })).toEqual(['a', false]);
    expect(read('$cookie_s', { headers: { cookie: 's=a; s="a"; s=%61' } })).toEqual(['a', false]);
    expect(read('$cookie_s', { headers: { cookie: 's=b; s=a' } })).toEqual(['b', true]);
    expect(read('$cookie_s', { headers: { cookie: 's=; s=a' } })).toEqual(['', true]);
    const lines = { headers: { cookie: 't=1; s=a' }, rawHeaders: ['Cookie', 't=1', 'Cookie', 's=a'] };
    expect(read('$cookie_s', lines)).toEqual(['a', false]);
    expect(read('$http_cookie', lines)).toEqual(['t=1; s=a', false]);
  });

  test('$http_: a header on several lines is read line by line; one line is one value, commas and all', () => {
    const twice = (a: string, b: string, joined = `${a}, ${b}`) => ({
      headers: { 'user-id': joined },
      rawHeaders: ['Host', 'x', 'User-Id', a, 'user-id', b],
    });
    expect(read('$http_user_id', twice('a', 'a'))).toEqual(['a', false]);
    expect(read('$http_user_id', twice('b', 'a'))).toEqual(['b, a', true]);
    // Node keeps the first of a singleton field such as Authorization.
    expect(read('$http_user_id', twice('b', 'a', 'b'))).toEqual(['b', true]);
    const once = { headers: { 'user-id': 'b, a' }, rawHeaders: ['User-Id', 'b, a'] };
    expect(read('$http_user_id', once)).toEqual(['b, a', false]);
    // Without the lines, the parsed value is all there is.
    expect(read('$http_user_id', { headers: { 'user-id': 'a, a' } })).toEqual(['a, a', false]);
  });

  test('in a composed key, any variable with several values marks the whole key', () => {
    const request = { url: '/?sku=1&sku=2', headers: { 'user-id': 'u' }, rawHeaders: ['User-Id', 'u'] };
    expect(read('$http_user_id:$arg_sku', request)).toEqual(['u:1', true]);
    expect(read('$http_user_id:$arg_other', request)).toEqual(['u:', false]);
  });
});
