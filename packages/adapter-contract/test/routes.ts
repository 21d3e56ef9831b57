import { fakeClock } from '../../core/test/contract/fake-clock';
import type { AdapterDriver, ContractOptions, TestApp } from './drivers';
import { rawStatus } from './raw-http';

/**
 * `$route` keys by the route the framework matched (issue #16, item 7), on every adapter: one
 * bucket for a route whatever spelling of the path reached it (Express and `@koa/router` ignore
 * case and a trailing slash by default; Fastify 4 drops what follows a `;`), and one for all the
 * paths of a pattern. `$uri` stays the path, one bucket per spelling the router treats as one.
 */
export function describeRoutes(driver: AdapterDriver): void {
  describe(`$route: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    let warnings: jest.SpyInstance;
    beforeEach(() => {
      warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    });
    afterEach(async () => {
      warnings.mockRestore();
      for (const app of apps.splice(0)) await app.close();
    });
    const keyed = (key: string): ContractOptions => ({ key, rate: '1/1m', clock: fakeClock() });
    // Nest's guard runs in the route the platform matched: as the platform routes.
    const nest = driver.name.startsWith('nest');
    const express = driver.name.startsWith('express') || (nest && driver.name.endsWith('on express'));
    const fastify = driver.name.startsWith('fastify') || (nest && driver.name.endsWith('on fastify'));
    // Hono's router, as Fastify's, serves a path only as spelled (case, a trailing slash).
    const hono = driver.name.startsWith('hono');
    const strict = fastify || hono;

    /** Each path's status, after `first` was served: every spelling the route serves is limited. */
    async function statusesAfter(app: TestApp, first: string, paths: readonly string[]) {
      expect(await rawStatus(app, first)).toBe(200);
      const statuses: Array<[string, number]> = [];
      for (const path of paths) statuses.push([path, await rawStatus(app, path)]);
      return statuses;
    }

    test('/sku, /SKU, /Sku, /sku/ and /sku;a share the route /sku: its handler runs once', async () => {
      const spellings = ['/sku', '/SKU', '/Sku', '/sku/', '/sku?x=1', '/sku;a'];
      const app = await driver.serveRoute('/sku', keyed('$route'));
      apps.push(app);
      const statuses = await statusesAfter(app, '/sku', spellings);
      // Every spelling the router serves is limited; the others never reach it (its own 404).
      for (const [path, status] of statuses)
        expect([path, status === 404 || status === 429]).toEqual([path, true]);
      expect(app.handled).toBe(1);
      const served = statuses.filter(([, status]) => status === 429).map(([path]) => path);
      if (express) expect(served).toEqual(['/sku', '/SKU', '/Sku', '/sku/', '/sku?x=1']);
      if (!strict) expect(served).toEqual(expect.arrayContaining(['/SKU', '/sku/']));
      if (driver.name === 'fastify 4') expect(served).toContain('/sku;a');
      expect(warnings).not.toHaveBeenCalled();
    });

    test('$uri keys each spelling apart: what $route is for', async () => {
      const app = await driver.serveRoute('/sku', keyed('$uri'));
      apps.push(app);
      const statuses = await statusesAfter(app, '/sku', ['/sku', '/sku?x=1', '/SKU', '/sku/']);
      expect(statuses.slice(0, 2)).toEqual([
        ['/sku', 429],
        ['/sku?x=1', 429],
      ]);
      // Served by the same route, in buckets of their own (Express, Koa), or not served (Fastify, Hono).
      expect(statuses.slice(2).map(([, status]) => status)).toEqual(strict ? [404, 404] : [200, 200]);
    });

    test('one bucket for every path of a pattern, under a router prefix of any case', async () => {
      const app = await driver.serveRoute('/sku/:id', keyed('$route'), '/shop');
      apps.push(app);
      const statuses = await statusesAfter(app, '/shop/sku/1', [
        '/shop/sku/2',
        '/shop/sku/3?x=1',
        '/SHOP/sku/4',
      ]);
      expect(statuses).toEqual([
        ['/shop/sku/2', 429],
        ['/shop/sku/3?x=1', 429],
        ['/SHOP/sku/4', strict ? 404 : 429],
      ]);
      expect(app.handled).toBe(1);
    });

    if (express && !nest)
      test('with case sensitive routing, a mount path keeps its case: /Shop and /shop are two routes', async () => {
        // One router at two mounts that only case tells apart: two routes, two buckets (without
        // the setting, the two are one mount path, and one bucket: see above).
        const app = await driver.serveRoute('/sku/:id', keyed('$route'), '/Shop', {
          caseSensitive: true,
          alsoAt: ['/shop'],
        });
        apps.push(app);
        const statuses = await statusesAfter(app, '/Shop/sku/1', [
          '/Shop/sku/2',
          '/shop/sku/3',
          '/shop/sku/4',
        ]);
        expect(statuses).toEqual([
          ['/Shop/sku/2', 429],
          ['/shop/sku/3', 200],
          ['/shop/sku/4', 429],
        ]);
        expect(app.handled).toBe(2);
      });

    test('per route and per client: $route:$remote_addr', async () => {
      const app = await driver.serveRoute('/sku/:id', keyed('$route:$remote_addr'));
      apps.push(app);
      expect(await statusesAfter(app, '/sku/1', ['/sku/2'])).toEqual([['/sku/2', 429]]);
    });

    test('before any route matched, $route is the path, and a SluiceKeyWarning says so once', async () => {
      // Limits in front of every path: Express app.use, Koa app.use, Fastify's catch-all route.
      const app = await driver.serve(keyed('$route'));
      apps.push(app);
      const statuses = await statusesAfter(app, '/a', ['/a', '/b', '/b']);
      if (fastify || nest || hono) {
        // Fastify's hook and Nest's guard run in the matched route, and Hono's middleware knows the
        // route that answers: here a catch-all, one bucket for every path.
        expect(statuses).toEqual([
          ['/a', 429],
          ['/b', 429],
          ['/b', 429],
        ]);
        expect(warnings).not.toHaveBeenCalled();
        return;
      }
      expect(statuses).toEqual([
        ['/a', 429],
        ['/b', 200],
        ['/b', 429],
      ]);
      expect(warnings).toHaveBeenCalledTimes(1);
      expect(warnings).toHaveBeenCalledWith(
        expect.stringContaining('$route is the path ($uri)'),
        'SluiceKeyWarning',
      );
    });
  });
}
