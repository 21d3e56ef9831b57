import {
  FetchExchange,
  fromFetchRequest,
  holdRequest,
  replyHeaders,
  RequestView,
  requestTarget,
  takeClientAddress,
  type HttpRequest,
} from '@sluice/core/adapter';

describe('requestTarget', () => {
  test.each([
    ['http://shop.test/buy?sku_id=1', '/buy?sku_id=1'],
    ['https://[::1]:8443/a/b', '/a/b'],
    ['http://shop.test', '/'],
    ['http://shop.test?x=1', '/?x=1'],
    ['/already/a/target', '/already/a/target'],
  ])('%s → %s', (url, target) => expect(requestTarget(url)).toBe(target));
});

describe('fromFetchRequest', () => {
  test('headers are copied once, on first read, lower-case, without a prototype', () => {
    const request = new Request('http://shop.test/?a=1', { headers: { 'User-Id': 'u', Constructor: 'c' } });
    const forEach = jest.spyOn(request.headers, 'forEach');
    const http = fromFetchRequest(request, '203.0.113.9');
    expect(forEach).not.toHaveBeenCalled();
    const view = new RequestView(http);
    expect([view.header('user-id'), view.header('constructor'), view.header('toString')]).toEqual([
      'u',
      'c',
      '',
    ]);
    expect(view.header('user-id')).toBe('u');
    expect(forEach).toHaveBeenCalledTimes(1);
    expect([http.remoteAddress, http.url]).toEqual(['203.0.113.9', '/?a=1']);
  });

  test('$arg_ reads what searchParams.get reads: the first value, + as space, bad UTF-8 as U+FFFD', () => {
    const view = new RequestView(fromFetchRequest(new Request('http://x/?a=1+2&a=3&b=%FF&c'), undefined));
    expect([view.arg('a'), view.arg('b'), view.arg('c'), view.arg('d')]).toEqual(['1 2', '\uFFFD', '', '']);
  });
});

test('a query look-up that throws: the argument is read from the URL, as for a parser that throws', () => {
  const request: HttpRequest = {
    remoteAddress: '',
    url: '/?sku_id=a%2Fb',
    headers: {},
    query: () => () => {
      throw new Error('no query here');
    },
  };
  expect(new RequestView(request).arg('sku_id')).toBe('a/b');
});

describe('FetchExchange', () => {
  test('closes once, when ended: every listener runs once, a removed one never', () => {
    const exchange = new FetchExchange();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    exchange
      .on('close', () => calls.push('a'))
      .once('close', removed)
      .on('close', () => calls.push('b'));
    exchange.removeListener('close', removed);
    expect([exchange.closed, exchange.destroyed]).toEqual([false, false]);
    exchange.end();
    exchange.end();
    expect(calls).toEqual(['a', 'b']);
    expect([exchange.closed, exchange.destroyed]).toEqual([true, true]);
  });

  test('closes when the signal aborts, and stops listening to it once closed', () => {
    const controller = new AbortController();
    const removed = jest.spyOn(controller.signal, 'removeEventListener');
    const exchange = new FetchExchange(controller.signal);
    const closed = jest.fn();
    exchange.on('close', closed);
    controller.abort();
    expect([exchange.closed, closed.mock.calls.length, removed.mock.calls.length]).toEqual([true, 1, 1]);
  });

  test('an aborted signal: closed from the start, and a hold on it ends at once, its turn given back', async () => {
    const controller = new AbortController();
    controller.abort();
    const exchange = new FetchExchange(controller.signal);
    const left = jest.fn();
    expect(exchange.closed).toBe(true);
    expect(await holdRequest(60_000, exchange, left)).toBe(false);
    expect(left).toHaveBeenCalledTimes(1);
  });
});

test('replyHeaders: in order, Content-Type last, __proto__ a header like any other', () => {
  const record = replyHeaders({
    kind: 'reply',
    headers: [
      ['Retry-After', '3'],
      ['__proto__', 'x'],
    ],
    status: 429,
    type: 'text/plain',
    body: '',
  });
  expect(Object.entries(record)).toEqual([
    ['Retry-After', '3'],
    ['__proto__', 'x'],
    ['Content-Type', 'text/plain'],
  ]);
});

describe('takeClientAddress', () => {
  const address = () => '203.0.113.9';
  test.each<[string, unknown, boolean]>([
    ['the default key', { rate: '1r/s' }, true],
    ['$remote_addr composed', { key: '$http_user_id:$remote_addr', rate: '1r/s' }, true],
    ['a header', { key: '$http_user_id', rate: '1r/s' }, false],
    ['a function', { key: () => 'k', rate: '1r/s' }, false],
    ['one of several', [{ key: 'all', rate: '1r/s' }, { rate: '1r/s' }], true],
  ])('%s: reads the address %p', (_name, options, reads) => {
    expect(takeClientAddress(options).readsAddress).toBe(reads);
  });

  test('takes it out of the first limit, leaving the rest as given', () => {
    const split = takeClientAddress([{ rate: '1r/s', clientAddress: address }, { rate: '2r/s' }]);
    expect(split).toEqual({
      limits: [{ rate: '1r/s' }, { rate: '2r/s' }],
      clientAddress: address,
      readsAddress: true,
    });
    expect(takeClientAddress({ rate: '1r/s', clientAddress: address }).limits).toEqual({ rate: '1r/s' });
  });
});
