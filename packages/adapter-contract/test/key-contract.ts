import type { LimitEvent } from '@sluice/core/adapter';
import type request from 'supertest';
import type { FakeClock } from '../../core/test/contract/fake-clock';
import type { AdapterDriver, ContractOptions, Mount, TestApp } from './drivers';

/** What the adapter contract's parts share: how a test serves an app (closed after it), GETs, and its clock. */
export interface ContractHelpers {
  serve(options: ContractOptions | ContractOptions[], mount?: Mount): Promise<TestApp>;
  get(
    app: TestApp,
    path?: string,
    headers?: Record<string, string>,
  ): ReturnType<ReturnType<typeof request>['get']>;
  /** The fake clock of the running test (a new one before each). */
  clock(): FakeClock;
}

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

    test('a repeated query argument keys on its first value and does not crash', async () => {
      const app = await serve({ key: '$arg_sku_id', rate: '1/1m', clock });
      expect((await get(app, '/?sku_id=a&sku_id=b')).status).toBe(200);
      expect((await get(app, '/?sku_id=a')).status).toBe(429);
      expect((await get(app, '/?sku_id=b&sku_id=a')).status).toBe(200);
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
