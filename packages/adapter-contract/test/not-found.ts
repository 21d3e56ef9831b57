import request from 'supertest';
import { fakeClock } from '../../core/test/contract/fake-clock';
import { CUSTOM_NOT_FOUND, type AdapterDriver, type ContractOptions, type TestApp } from './drivers';
import { rawStatus } from './raw-http';

/**
 * A limit on every route counts requests that match no route, as nginx's `limit_req` in a
 * `server` does, on every adapter: URL scanning, SPA fallbacks and the app's own not-found
 * handler are limited like any route; a route exempted from the limit stays exempt. Fastify's
 * hook and Nest's guard run in a matched route, so the adapters limit the not-found handler
 * apart; there `$route` is one value for every such request.
 */
export function describeNotFound(driver: AdapterDriver): void {
  describe(`requests that match no route: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    let warnings: jest.SpyInstance;
    beforeEach(() => {
      warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    });
    afterEach(async () => {
      warnings.mockRestore();
      for (const app of apps.splice(0)) await app.close();
    });
    const serve = async (options: ContractOptions, customNotFound?: boolean) => {
      const app = await driver.serveSite({ clock: fakeClock(), ...options }, customNotFound);
      apps.push(app);
      return app;
    };
    const statuses = async (app: TestApp, paths: readonly string[]) => {
      const got: number[] = [];
      for (const path of paths) got.push(await rawStatus(app, path));
      return got;
    };
    const unknown = ['/nope', '/wp-login.php', '/.env', '/nope/1', '/a/b/c', '/known/x'];
    // The Fastify plugin limits in `onRequest` (the default) or `preHandler`.
    const hooks: ContractOptions[] = driver.name.startsWith('fastify') ? [{}, { hook: 'preHandler' }] : [{}];

    test.each(hooks)('the limit on every route counts unknown URLs (%p)', async (hook) => {
      const app = await serve({ rate: '2/1h', ...hook });
      expect(await statuses(app, unknown)).toEqual([404, 404, 429, 429, 429, 429]);
      // One client, one bucket: its known routes are limited too; the exempt one is not.
      expect(await statuses(app, ['/known', '/health', '/health'])).toEqual([429, 200, 200]);
      expect(app.handled).toBe(2);
    });

    test.each(hooks)("the app's own not-found handler is limited too (%p)", async (hook) => {
      const app = await serve({ rate: '2/1h', ...hook }, true);
      const replies = [];
      for (const path of unknown.slice(0, 4)) {
        const res = await request(app.url).get(path);
        replies.push([res.status, res.status === 404 ? res.body : undefined]);
      }
      expect(replies).toEqual([
        [404, CUSTOM_NOT_FOUND],
        [404, CUSTOM_NOT_FOUND],
        [429, undefined],
        [429, undefined],
      ]);
      expect(app.handled).toBe(2);
      expect(await statuses(app, ['/health', '/known'])).toEqual([200, 429]);
    });

    test('an exempt route stays exempt, and answers no rate-limit headers', async () => {
      const app = await serve({ rate: '1/1h' });
      expect(await statuses(app, ['/nope'])).toEqual([404]);
      for (let i = 0; i < 3; i++) {
        const res = await request(app.url).get('/health');
        expect([res.status, res.headers.ratelimit]).toEqual([200, undefined]);
      }
    });

    // Express and Koa limit in front of routing, where `$route` is the path (see routes.ts);
    // Hono has matched every route before its first middleware runs.
    if (['fastify', 'nest', 'hono'].some((name) => driver.name.startsWith(name)))
      test('$route is one value for every URL that matches no route, never one bucket per URL', async () => {
        const app = await serve({ key: '$route', rate: '1/1h' });
        expect(await statuses(app, ['/a', '/b', '/c?x=1', '/known', '/known'])).toEqual([
          404, 429, 429, 200, 429,
        ]);
        expect(warnings).not.toHaveBeenCalled();
      });
  });
}
