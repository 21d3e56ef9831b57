import { connect } from 'node:net';
import { storeOptions, type StoreUnderTest } from './stores-under-test';
import type { AdapterDriver, ContractOptions, ServerSettings, TestApp } from './drivers';
import { useHostileApps, type Send } from './hostile-harness';
import { appReadings, keyOfReading } from './raw-http';

/** Room for 1 MB keys in a header, the query or a cookie (Node's default is 16 KB). */
const ROOMY: ServerSettings = { maxHeaderSize: 4 << 20 };
const MB = 1 << 20;
const BIG = 'x'.repeat(MB);
const BIG_TOO = `${'x'.repeat(MB - 1)}y`;

/**
 * Hostile key text, run on each framework major and each store: values that try to crash a key
 * (prototype names, CR/LF, 1 MB), to land in another value's bucket (separators, bytes that are
 * not UTF-8, `%`), or to be skipped. Each distinct value must get its own bucket; empty is skipped.
 * A query argument's value is the one the app reads from its framework's parsed query, so values
 * the framework reads alike (bytes that are not UTF-8) share one.
 */
export function describeHostileKeys(driver: AdapterDriver, stores: readonly StoreUnderTest[]): void {
  describe(`hostile keys: ${driver.name}`, () => {
    const h = useHostileApps(driver);
    const { serve, send } = h;

    /**
     * Every value once (each admitted: no value landed in another's bucket), then every value again
     * (each refused: each was counted), then the empty value (skipped: not limited, no headers).
     */
    async function expectOwnBuckets(app: TestApp, values: readonly string[], shape: (value: string) => Send) {
      const label = (v: string) =>
        v.length > 40 ? `${v.slice(0, 20)}… (${v.length} chars)` : JSON.stringify(v);
      const handled = app.handled;
      for (const pass of [200, 429]) {
        for (const value of values)
          expect([label(value), (await send(app, shape(value))).status]).toEqual([label(value), pass]);
      }
      for (let i = 0; i < 2; i++) {
        const empty = await send(app, shape(''));
        expect([empty.status, empty.headers.ratelimit]).toEqual([200, undefined]);
      }
      expect(app.handled - handled).toBe(values.length + 2);
      expect(h.failures).toEqual([]);
    }

    /**
     * `$arg_` keys the value the app reads (its framework's parsed query): paths the app reads
     * alike share a bucket, paths it reads differently never do, and a path where it reads no text
     * has no key. Each path once (admitted when its reading is new), then again (each limited).
     */
    async function expectBucketsAsRead(app: TestApp, paths: readonly string[], name = 'sku_id') {
      const readings = (await appReadings(driver, name, paths, ROOMY)).map(keyOfReading);
      const label = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}… (${v.length} chars)` : v);
      const seen = new Set<string>();
      const handled = app.handled;
      let buckets = 0;
      for (const [i, path] of paths.entries()) {
        const reading = readings[i] as string;
        const status = reading === '' || !seen.has(reading) ? 200 : 429;
        if (reading !== '' && !seen.has(reading)) buckets++;
        seen.add(reading);
        expect([label(path), (await send(app, { path })).status]).toEqual([label(path), status]);
      }
      for (const [i, path] of paths.entries()) {
        const status = readings[i] === '' ? 200 : 429;
        expect([label(path), (await send(app, { path })).status]).toEqual([label(path), status]);
      }
      expect(app.handled - handled).toBe(buckets + 2 * readings.filter((r) => r === '').length);
      expect(h.failures).toEqual([]);
      return { readings, buckets };
    }

    describe.each(stores)('$name store', (under) => {
      const onStore = storeOptions(under, 'hostile');
      const keyed = (key: unknown): ContractOptions => onStore({ key, rate: '1/1m', clock: h.clock });

      test('$arg_: {}, prototype names, CR/LF, unicode, bytes that are not UTF-8, %, 1 MB: one bucket each', async () => {
        const app = await serve(keyed('$arg_sku_id'), 'middleware', ROOMY);
        // As sent in the query: each a distinct value (+ is a space, so a+b is "a b" and a%2Bb is "a+b").
        const values = [
          'a',
          '%7B%7D',
          '__proto__',
          'constructor',
          'toString',
          '%0D%0A',
          'a%0D%0Ab',
          '%C3%A9',
          'e%CC%81',
          '%F0%9F%98%80',
          '%EF%BF%BD',
          '%FF',
          '%FE',
          '%25FF',
          '%25',
          'a%3Ab',
          'a+b',
          'a%2Bb',
          BIG,
          BIG_TOO,
        ];
        const { buckets } = await expectBucketsAsRead(app, [
          ...values.map((v) => `/buy?x=1&sku_id=${v}`),
          '/buy?x=1&sku_id=',
        ]);
        // Only bytes that are not UTF-8 may be read alike (as U+FFFD, or %25FF as %FF).
        expect(buckets).toBeGreaterThanOrEqual(values.length - 2);
      });

      test('$http_: {}, prototype names, bytes beyond ASCII, separators, 1 MB: one bucket each', async () => {
        const app = await serve(keyed('$http_user_id'), 'middleware', ROOMY);
        // Header text reaches Node as latin1: 'Ã©' is how the UTF-8 bytes of é arrive.
        const values = [
          'a',
          '{}',
          '__proto__',
          'constructor',
          'Ã©',
          'é',
          'ÿ',
          'a:b',
          'a, b',
          '%FF',
          BIG,
          BIG_TOO,
        ];
        await expectOwnBuckets(app, values, (v) => ({ headers: { 'User-Id': v } }));
      });

      test('$cookie_: {}, prototype names, CR/LF, unicode, %, 1 MB: one bucket each', async () => {
        const app = await serve(keyed('$cookie_session'), 'middleware', ROOMY);
        const values = ['a', '{}', '__proto__', '%0D%0A', '%C3%A9', '%FF', '%25FF', 'a%3Bb', BIG, BIG_TOO];
        await expectOwnBuckets(app, values, (v) => ({
          headers: { Cookie: `theme=dark; session=${v}` },
        }));
      });

      test('a composed key: values holding the separator never shift into their neighbour', async () => {
        const app = await serve(keyed('$http_user_id:$arg_sku_id'), 'middleware', ROOMY);
        const pairs = [
          'a:b|c',
          'a|b:c',
          'a%3Ab|c',
          '|a:b:c',
          'a:b:c|',
          ':|',
          '|:',
          '__proto__|constructor',
          '{}|{}',
          `${BIG}|${BIG}`,
        ];
        await expectOwnBuckets(app, pairs, (pair): Send => {
          const [user = '', sku = ''] = pair.split('|');
          return {
            path: `/?sku_id=${encodeURIComponent(sku)}`,
            headers: user === '' ? {} : { 'User-Id': user },
          };
        });
      });

      test('a key function: the same values, and 1 MB it builds itself', async () => {
        const app = await serve(keyed(driver.keyFromHeader('x-api-key')), 'middleware', ROOMY);
        const values = ['a', '{}', '__proto__', 'constructor', 'Ã©', 'a:b', BIG, BIG_TOO];
        await expectOwnBuckets(app, values, (v) => ({ headers: { 'X-Api-Key': v } }));
      });

      test.each(['__proto__', 'constructor', 'toString'])(
        'prototype names as the argument read: $arg_%s keys what the app reads, never an inherited value',
        async (name) => {
          const app = await serve(keyed(`$arg_${name}`));
          // Absent: nothing inherited from Object.prototype is read as a value.
          expect((await send(app)).headers.ratelimit).toBeUndefined();
          // Beside the other prototype names (the one read given twice would be several values).
          const others = ['toString', 'constructor'].filter((other) => other !== name);
          const paths = ['x', 'y', '__proto__'].map((v) => `/?${name}=${v}&${others.join('=1&')}=1`);
          const { readings } = await expectBucketsAsRead(app, paths, name);
          // Express 4 (qs) drops an argument named __proto__: its app reads none, so there is no key.
          const dropped = name === '__proto__' && driver.name === 'express 4';
          expect(readings).toEqual(dropped ? ['', '', ''] : ['x', 'y', '__proto__']);
        },
      );

      test.each([
        ['$http_constructor', (v: string): Send => ({ headers: { Constructor: v } })],
        ['$http___proto__', (v: string): Send => ({ headers: { '--proto--': v } })],
        ['$cookie___proto__', (v: string): Send => ({ headers: { Cookie: `__proto__=${v}` } })],
        ['$cookie_constructor', (v: string): Send => ({ headers: { Cookie: `constructor=${v}` } })],
      ])('prototype names as the name read: %s', async (template, shape) => {
        const app = await serve(keyed(template));
        // Absent: nothing inherited from Object.prototype is read as a value.
        expect((await send(app)).headers.ratelimit).toBeUndefined();
        await expectOwnBuckets(app, ['x', 'y', '__proto__'], shape);
        expect(app.handled).toBe(6);
      });
    });

    test("1 MB in a header or the query at Node's default limit: 431 before any framework code", async () => {
      const app = await serve({ key: '$http_user_id', rate: '1/1m', clock: h.clock });
      expect((await send(app, { headers: { 'User-Id': BIG } })).status).toBe(431);
      expect((await send(app, { path: `/?sku_id=${BIG}` })).status).toBe(431);
      expect(app.handled).toBe(0);
      expect((await send(app, { headers: { 'User-Id': 'a' } })).status).toBe(200);
      // A key function may still build a 1 MB key out of a short header.
      const header = driver.keyFromHeader('x-api-key') as (request: unknown) => string | undefined;
      const key = (req: unknown) => (header(req) ?? '').repeat(MB / 4);
      const built = await serve({ key, rate: '1/1m', clock: h.clock });
      const short = (v: string) => ({ headers: { 'X-Api-Key': v } });
      expect((await send(built, short('abcd'))).status).toBe(200);
      expect((await send(built, short('abce'))).status).toBe(200);
      expect((await send(built, short('abcd'))).status).toBe(429);
    });

    test('CR or LF inside a header never reaches the app: Node answers 400', async () => {
      const app = await serve({ key: '$http_user_id', rate: '1/1m', clock: h.clock });
      const { port } = new URL(app.url);
      const head = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write('GET / HTTP/1.1\r\nHost: x\r\nUser-Id: a\rb\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(app.handled).toBe(0);
    });
  });
}
