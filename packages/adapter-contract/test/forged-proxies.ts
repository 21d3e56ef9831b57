import { createLimiter, type Limiter } from '@sluice/core';
import type { LimitEvent } from '@sluice/core/adapter';
import type { AdapterDriver, TestApp } from './drivers';
import { useHostileApps } from './hostile-harness';

/**
 * Forged proxy headers, run on each framework major: `X-Forwarded-For` is believed only as far as
 * `trustProxy` says, `Forwarded` never, and garbage in either never crashes.
 */
export function describeForgedProxies(driver: AdapterDriver): void {
  describe(`forged proxy headers: ${driver.name}`, () => {
    const h = useHostileApps(driver);
    const { serve, send } = h;

    describe('forged X-Forwarded-For and Forwarded', () => {
      /** A limiter with room for every request, to read which key each request used. */
      let limiter: Limiter;
      beforeEach(() => {
        limiter = createLimiter({ rate: '100/1m', clock: h.clock });
      });
      const used = async (key: string) => 100 - (await limiter.peek(key)).remaining;
      const from = (app: TestApp, headers: Record<string, string>) => send(app, { headers });

      test('trustProxy 1: only the hop the proxy appended is believed', async () => {
        const app = await serve({ limiter, trustProxy: 1 });
        await from(app, { 'X-Forwarded-For': '203.0.113.1, 203.0.113.2, 198.51.100.1' });
        await from(app, { 'X-Forwarded-For': '10.0.0.1, 198.51.100.1' });
        await from(app, { 'X-Forwarded-For': '198.51.100.2' });
        expect([await used('198.51.100.1'), await used('198.51.100.2'), await used('203.0.113.1')]).toEqual([
          2, 1, 0,
        ]);
        expect(await used('127.0.0.1')).toBe(0);
      });

      test("trustProxy ['127.0.0.1'] believes the loopback proxy; ['10.0.0.0/8'] does not", async () => {
        const loopback = await serve({ limiter, trustProxy: ['127.0.0.1'] });
        await from(loopback, { 'X-Forwarded-For': '203.0.113.9, 198.51.100.1' });
        expect([await used('198.51.100.1'), await used('127.0.0.1')]).toEqual([1, 0]);
        const elsewhere = await serve({ limiter, trustProxy: ['10.0.0.0/8'] });
        await from(elsewhere, { 'X-Forwarded-For': '198.51.100.3' });
        await from(elsewhere, { 'X-Forwarded-For': '10.0.0.1' });
        expect([await used('127.0.0.1'), await used('198.51.100.3'), await used('10.0.0.1')]).toEqual([
          2, 0, 0,
        ]);
      });

      test.each<[string, unknown]>([
        ['false', false],
        ['true', true],
        ['loopback', 'loopback'],
      ])('Forwarded: for= is never read (trustProxy %s)', async (_name, trustProxy) => {
        const app = await serve({ limiter, trustProxy });
        await from(app, { Forwarded: 'for=198.51.100.1' });
        await from(app, { Forwarded: 'for="[2001:db8::1]:4711";proto=https, for=198.51.100.2' });
        expect([await used('127.0.0.1'), await used('198.51.100.1'), await used('2001:db8::/64')]).toEqual([
          2, 0, 0,
        ]);
      });

      const fifty = Array.from({ length: 50 }, (_, i) => `198.51.100.${i + 1}`).join(', ');
      const garbage = ['not-an-ip', '1.2.3.4, , ::1', fifty, ' , ,', '[::1]:80, unknown', '\u00ff\u00fe'];
      test.each<[string, unknown, string[]]>([
        ['false', false, garbage.map(() => '127.0.0.1')],
        // '[::1]:80, unknown': the left-most entry without its port (issue #16, item 11).
        ['true', true, ['not-an-ip', '1.2.3.4', '198.51.100.1', '127.0.0.1', '::/64', '\u00ff\u00fe']],
        ['1', 1, ['not-an-ip', '::/64', '198.51.100.50', '127.0.0.1', 'unknown', '\u00ff\u00fe']],
        [
          'loopback',
          'loopback',
          ['not-an-ip', '1.2.3.4', '198.51.100.50', '127.0.0.1', 'unknown', '\u00ff\u00fe'],
        ],
      ])('X-Forwarded-For garbage never crashes (trustProxy %s)', async (_name, trustProxy, keys) => {
        const app = await serve({ limiter, trustProxy });
        for (const [i, xff] of garbage.entries()) {
          const before = await used(keys[i] as string);
          expect((await from(app, { 'X-Forwarded-For': xff })).status).toBe(200);
          expect([xff, await used(keys[i] as string)]).toEqual([xff, before + 1]);
        }
        expect(app.handled).toBe(garbage.length);
      });

      test('trustProxy off, a forged chain never moves the key; onLimit sees the socket address', async () => {
        const limited: Array<LimitEvent<unknown>> = [];
        const app = await serve({
          rate: '1/1m',
          clock: h.clock,
          onLimit: (e: LimitEvent<unknown>) => limited.push(e),
        });
        await from(app, { 'X-Forwarded-For': '198.51.100.1', Forwarded: 'for=198.51.100.1' });
        expect((await from(app, { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(429);
        expect(limited.map((e) => e.decision.key)).toEqual(['127.0.0.1']);
      });
    });
  });
}
