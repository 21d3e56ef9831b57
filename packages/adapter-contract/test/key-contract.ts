import type { LimitEvent } from '@sluice/core/adapter';
import request from 'supertest';
import type { FakeClock } from '../../core/test/contract/fake-clock';
import type { ContractHelpers } from './contract-helpers';
import type { AdapterDriver, TestApp } from './drivers';

/**
 * The adapter contract's keys: nginx variables and key functions, a missing key
 * (`onMissingKey`), and the client address behind proxies (`trustProxy`, `ipv6Subnet`).
 */
export function describeKeyContract(
  driver: AdapterDriver,
  { serve, get, clock: currentClock }: ContractHelpers,
): void {
  describe('keys', () => {
    let clock: FakeClock;
    beforeEach(() => {
      clock = currentClock();
    });

    type Shape = (value: string) => { path?: string; headers?: Record<string, string> };
    const cases: Array<[string, () => unknown, Shape]> = [
      ['$http_user_id', () => '$http_user_id', (v) => ({ headers: { 'User-Id': v } })],
      ['$arg_sku_id', () => '$arg_sku_id', (v) => ({ path: `/buy?sku_id=${v}&x=1` })],
      [
        '$cookie_session',
        () => '$cookie_session',
        (v) => ({ headers: { Cookie: `theme=dark; session=${v}` } }),
      ],
      ['$server_name', () => '$server_name', (v) => ({ headers: { Host: `${v}.example:8080` } })],
      ['$uri', () => '$uri', (v) => ({ path: `/items/${v}?page=1` })],
      [
        '$http_user_id:$arg_sku_id',
        () => '$http_user_id:$arg_sku_id',
        (v) => ({ path: `/?sku_id=${v}`, headers: { 'user-id': 'u1' } }),
      ],
      ['a key function', () => driver.keyFromHeader('x-api-key'), (v) => ({ headers: { 'X-Api-Key': v } })],
    ];
    test.each(cases)('%s: one bucket per value', async (_name, key, shape) => {
      const app = await serve({ key: key(), rate: '1/1m', clock });
      const send = (value: string) => {
        const { path = '/', headers = {} } = shape(value);
        return get(app, path, headers);
      };
      expect((await send('a')).status).toBe(200);
      expect((await send('a')).status).toBe(429);
      expect((await send('b')).status).toBe(200);
    });

    /** The status and error of a GET with `headers`, each given as one line per value. */
    const sent = async (app: TestApp, headers: Record<string, string | string[]>, path = '/') => {
      const res = await request(app.url).get(path).set(headers).set('Accept', 'application/json');
      return [res.status, res.body.error ?? res.headers['sluice-dry-run']] as const;
    };

    test('a variable given several differing values is refused with 400, whichever value the app reads', async () => {
      const arg = await serve({ key: '$arg_sku_id', rate: '1/1m', clock });
      expect(await sent(arg, {}, '/?sku_id=a&sku_id=a')).toEqual([200, undefined]);
      expect(await sent(arg, {}, '/?sku_id=a')).toEqual([429, 'rate_limited']);
      expect(await sent(arg, {}, '/?sku_id=b&sku_id=a')).toEqual([400, 'ambiguous_key']);
      expect(await sent(arg, {}, '/?sku_id=&sku_id=a')).toEqual([400, 'ambiguous_key']);
      expect(await sent(arg, {}, '/?sku_id=b')).toEqual([200, undefined]);
      expect(arg.handled).toBe(2);

      // A header on several lines: Node joins them (`a, b`) or keeps the first (`authorization`).
      const header = await serve({ key: '$http_user_id', rate: '1/1m', clock });
      expect(await sent(header, { 'User-Id': 'a' })).toEqual([200, undefined]);
      expect(await sent(header, { 'User-Id': ['a', 'a'] })).toEqual([429, 'rate_limited']);
      expect(await sent(header, { 'User-Id': ['b', 'a'] })).toEqual([400, 'ambiguous_key']);
      // One line is one value, commas and all: what the app reads.
      expect(await sent(header, { 'User-Id': 'b, a' })).toEqual([200, undefined]);
      const auth = await serve({ key: '$http_authorization', rate: '1/1m', clock });
      expect(await sent(auth, { Authorization: 'a' })).toEqual([200, undefined]);
      expect(await sent(auth, { Authorization: ['a', 'b'] })).toEqual([400, 'ambiguous_key']);
      expect(await sent(auth, { Authorization: ['b', 'a'] })).toEqual([400, 'ambiguous_key']);

      const cookie = await serve({ key: '$cookie_session', rate: '1/1m', clock });
      expect(await sent(cookie, { Cookie: 'session=a; theme=dark' })).toEqual([200, undefined]);
      expect(await sent(cookie, { Cookie: 'session=a; session=a' })).toEqual([429, 'rate_limited']);
      expect(await sent(cookie, { Cookie: 'session=b; session=a' })).toEqual([400, 'ambiguous_key']);
      // Cookie lines are one list (HTTP/2 sends one cookie a line).
      expect(await sent(cookie, { Cookie: ['theme=dark', 'session=a'] })).toEqual([429, 'rate_limited']);
      expect(await sent(cookie, { Cookie: ['session=b', 'session=a'] })).toEqual([400, 'ambiguous_key']);
      expect(header.handled + auth.handled + cookie.handled).toBe(4);
    });

    test('several values: refused whatever onMissingKey says, in a composed key too; never in a dry run', async () => {
      const composed = await serve({
        key: '$http_user_id:$arg_sku_id',
        rate: '1/1m',
        clock,
        onMissingKey: 'shared',
      });
      expect(await sent(composed, { 'User-Id': 'u' }, '/?sku_id=a&sku_id=b')).toEqual([400, 'ambiguous_key']);
      expect(await sent(composed, { 'User-Id': ['u', 'v'] }, '/?sku_id=a')).toEqual([400, 'ambiguous_key']);
      expect(await sent(composed, { 'User-Id': 'u' }, '/?sku_id=a')).toEqual([200, undefined]);
      const dry = await serve({ key: '$arg_sku_id', rate: '1/1m', clock, dryRun: true });
      expect(await sent(dry, {}, '/?sku_id=a&sku_id=b')).toEqual([200, undefined]);
      expect(composed.handled + dry.handled).toBe(2);
    });

    test('an empty key is not limited by default; reject and shared are one option away', async () => {
      const skip = await serve({ key: '$http_user_id', rate: '1/1m', clock });
      for (let i = 0; i < 3; i++) {
        const res = await get(skip);
        expect(res.status).toBe(200);
        expect(res.headers.ratelimit).toBeUndefined();
      }
      const reject = await serve({
        key: '$http_user_id:$arg_sku_id',
        rate: '1/1m',
        clock,
        onMissingKey: 'reject',
      });
      const refused = await get(reject, '/', { Accept: 'application/json' });
      expect(refused.status).toBe(400);
      expect(refused.headers['retry-after']).toBeUndefined();
      expect(refused.body.error).toBe('missing_key');
      expect(reject.handled).toBe(0);
      const shared = await serve({ key: '$http_user_id', rate: '1/1m', clock, onMissingKey: 'shared' });
      expect((await get(shared)).status).toBe(200);
      expect((await get(shared)).status).toBe(429);
      expect((await get(shared, '/', { 'user-id': 'u' })).status).toBe(200);
    });

    test('trustProxy off ignores a forged X-Forwarded-For; on, believes it', async () => {
      const off = await serve({ rate: '1/1m', clock });
      expect((await get(off, '/', { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(200);
      expect((await get(off, '/', { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(429);
      const on = await serve({ rate: '1/1m', clock, trustProxy: 'loopback' });
      expect((await get(on, '/', { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(200);
      expect((await get(on, '/', { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(200);
      expect((await get(on, '/', { 'X-Forwarded-For': '203.0.113.5, 198.51.100.1' })).status).toBe(429);
    });

    test('IPv6 clients of one /64 share a bucket; ::ffff:a.b.c.d is the IPv4 client', async () => {
      const events: Array<LimitEvent<unknown>> = [];
      const app = await serve({
        rate: '1/1m',
        clock,
        trustProxy: true,
        onLimit: (e: LimitEvent<unknown>) => events.push(e),
      });
      const from = (address: string) => get(app, '/', { 'X-Forwarded-For': address });
      expect((await from('2001:db8:1:2::1')).status).toBe(200);
      expect((await from('2001:db8:1:2:ffff:ffff:ffff:fffe')).status).toBe(429);
      expect((await from('2001:db8:1:3::1')).status).toBe(200);
      expect((await from('::ffff:198.51.100.7')).status).toBe(200);
      expect((await from('198.51.100.7')).status).toBe(429);
      expect(events.map((e) => e.decision.key)).toEqual(['2001:db8:1:2::/64', '198.51.100.7']);
      const wide = await serve({ rate: '1/1m', clock, trustProxy: true, ipv6Subnet: 48 });
      expect((await get(wide, '/', { 'X-Forwarded-For': '2001:db8:1:2::1' })).status).toBe(200);
      expect((await get(wide, '/', { 'X-Forwarded-For': '2001:db8:1:9::1' })).status).toBe(429);
    });
  });
}
