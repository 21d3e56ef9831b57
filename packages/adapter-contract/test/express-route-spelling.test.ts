import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rateLimit } from '@sluice/express';
import express5 from 'express';
import express4 from 'express4';
import type { Express, Request, Response } from 'express';
import { fakeClock } from '../../core/test/contract/fake-clock';
import type { TestApp } from './drivers';
import { rawStatus } from './raw-http';

/**
 * `$route` on Express is the mount path's text (`req.baseUrl`, as the client spelled it) and the
 * route's pattern: spellings Express routes alike must share one bucket. Express decodes a mount
 * path's parameters (`/t/%61cme` is tenant `acme`) and matches a mount in the app that mounted it,
 * so a sub-app's own `case sensitive routing` does not say how its mount path matched.
 */
const EXPRESSES = [
  ['express 5', express5],
  ['express 4', express4 as unknown as typeof express5],
] as const;

/** A limit of 3 an hour on `$route`, on a clock no test moves: only the buckets differ. */
const limit = () => rateLimit({ key: '$route', rate: '3/1h', clock: fakeClock() });

async function serve(app: Express): Promise<TestApp> {
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    handled: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends each path `times` times, in turn, and counts the 200s. */
async function admitted(app: TestApp, paths: readonly string[], times = 4): Promise<number> {
  let ok = 0;
  for (const path of paths)
    for (let i = 0; i < times; i++) {
      const status = await rawStatus(app, path);
      expect([path, status === 200 || status === 429]).toEqual([path, true]);
      if (status === 200) ok++;
    }
  return ok;
}

describe.each(EXPRESSES)('$route spellings of a mount path: %s', (_name, express) => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  /** `app.use('/t/:tenant', router)`, the route `/sku/:id` (and `/list`) limited on `$route`. */
  async function tenantApp(): Promise<TestApp> {
    const app = express();
    const router = express.Router({ mergeParams: true });
    const reply = (req: Request, res: Response) => res.end(`tenant=${String(req.params.tenant)}`);
    router.get('/sku/:id', limit(), reply);
    router.get('/list', limit(), reply);
    app.use('/t/:tenant', router);
    const served = await serve(app);
    apps.push(served);
    return served;
  }

  /** A sub-app serving `/sku/:id` limited on `$route`, mounted at each of `mounts`. */
  async function subApp(settings: { sub: boolean; parent: boolean }, mounts: readonly string[]) {
    const app = express();
    const sub = express();
    if (settings.parent) app.enable('case sensitive routing');
    if (settings.sub) sub.enable('case sensitive routing');
    sub.get('/sku/:id', limit(), (_req: Request, res: Response) => res.end('ok'));
    app.use([...mounts], sub);
    const served = await serve(app);
    apps.push(served);
    return served;
  }

  test('a mount parameter spelled with escapes is one tenant: 3 of 24 admitted', async () => {
    const app = await tenantApp();
    const spellings = ['acme', '%61cme', 'a%63me', 'ac%6de', 'acm%65', '%61%63me'];
    expect(
      await admitted(
        app,
        spellings.map((tenant) => `/t/${tenant}/sku/1`),
      ),
    ).toBe(3);
  });

  test('escapes of the same letters in either case are one tenant', async () => {
    const app = await tenantApp();
    // '%41' is 'A', which Express matches as 'a' without case sensitive routing.
    const spellings = ['acme', 'ACME', '%41cme', '%61cme', 'a%63%6De', 'a%63%6de', '%41%43%4D%45'];
    expect(
      await admitted(
        app,
        spellings.map((tenant) => `/t/${tenant}/sku/1`),
      ),
    ).toBe(3);
  });

  test('two routes that really differ are two buckets, and so are two tenants', async () => {
    const app = await tenantApp();
    expect(await admitted(app, ['/t/acme/sku/1', '/t/acme/list', '/t/%61cme/list'])).toBe(6);
    expect(await admitted(app, ['/t/globex/sku/1', '/t/gl%6Fbex/sku/2'])).toBe(3);
  });

  test('a %2F in a mount parameter stays data: /t/a%2Fb is not /t/a/b', async () => {
    const app = await tenantApp();
    // Tenant 'a/b' (any spelling of its escape) is one bucket; it never meets a tenant 'a'.
    expect(await admitted(app, ['/t/a%2Fb/sku/1', '/t/a%2fb/sku/1'])).toBe(3);
    expect(await admitted(app, ['/t/a/sku/1'])).toBe(3);
  });

  test('a case sensitive sub-app under a case-insensitive parent: every casing of /shop is one bucket', async () => {
    const app = await subApp({ sub: true, parent: false }, ['/shop']);
    const casings = ['/shop', '/SHOP', '/Shop', '/sHop', '/shOp', '/shoP'];
    expect(
      await admitted(
        app,
        casings.map((mount) => `${mount}/sku/1`),
      ),
    ).toBe(3);
  });

  test('a case sensitive sub-app and parent: /Shop and /shop are two mounts, two buckets', async () => {
    const app = await subApp({ sub: true, parent: true }, ['/Shop', '/shop']);
    expect(await admitted(app, ['/Shop/sku/1', '/shop/sku/1'])).toBe(6);
    // '/SHOP' is neither mount: Express's own 404.
    expect(await rawStatus(app, '/SHOP/sku/1')).toBe(404);
  });
});
