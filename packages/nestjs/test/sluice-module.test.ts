import { Controller, Get, Module, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { SluiceConfigError } from '@sluice/core';
import { RateLimit, SkipRateLimit, SluiceGuard, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start, type Started } from './harness';

// Time stands still: no test here needs it to move.
const clock = () => 1_700_006_400_000;

@Controller('shop')
class ShopController {
  @Get('list')
  list() {
    return { list: true };
  }

  @Get('sku')
  @RateLimit({ key: '$arg_sku_id', rate: '1/1m', fallback: { body: { cached: true } } })
  sku() {
    return { live: true };
  }

  @Get('health')
  @SkipRateLimit()
  health() {
    return 'ok';
  }
}

@Controller('admin')
@RateLimit({ rate: '2/1m', headers: 'draft-7' })
class AdminController {
  @Get('a')
  a() {
    return 'a';
  }

  @Get('b')
  b() {
    return 'b';
  }

  @Get('free')
  @SkipRateLimit()
  free() {
    return 'free';
  }
}

@Controller('open')
@SkipRateLimit()
class OpenController {
  @Get('any')
  any() {
    return 'any';
  }

  @Get('guarded')
  @RateLimit({ rate: '1/1m' })
  guarded() {
    return 'guarded';
  }
}

const CONTROLLERS = [ShopController, AdminController, OpenController];

describe.each(PLATFORMS)(`SluiceModule, Nest ${NEST_MAJOR} on %s`, (_platform, adapter) => {
  let started: Started | undefined;
  const serve = async (imports: unknown[]) => {
    @Module({ imports: imports as never[], controllers: CONTROLLERS })
    class AppModule {}
    started = await start(AppModule, adapter());
    return started;
  };
  const statuses = async (app: Started, path: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await app.get(path)).status);
    return out;
  };
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
  });

  test('forRoot with a rate limits every route in one bucket; a decorated route has its own', async () => {
    const app = await serve([SluiceModule.forRoot({ rate: '2/1m', clock })]);
    const first = await app.get('/shop/list');
    expect([first.status, first.body, first.headers['ratelimit-policy']]).toEqual([
      200,
      { list: true },
      '"2/1m";q=2;w=60',
    ]);
    // Skipped routes and controllers take nothing from the bucket.
    expect(await statuses(app, '/shop/health', 2)).toEqual([200, 200]);
    expect(await statuses(app, '/open/any', 2)).toEqual([200, 200]);
    // One bucket for the app, as the Express middleware's: the next request spends the last unit.
    expect(await statuses(app, '/shop/list', 2)).toEqual([200, 429]);
    const json = await app.get('/shop/list', { Accept: 'application/json' });
    expect([json.status, json.headers['retry-after']]).toEqual([429, '30']);
    expect(json.body).toEqual({
      error: 'rate_limited',
      message: 'Too many requests, retry in 30 s.',
      retryAfter: 30,
    });
    expect(await statuses(app, '/shop/health', 3)).toEqual([200, 200, 200]);
    // The SKU route's limit replaces the module's (as nginx's limit_req in a location).
    expect((await app.get('/shop/sku?sku_id=a')).body).toEqual({ live: true });
    const degraded = await app.get('/shop/sku?sku_id=a');
    expect([degraded.status, degraded.body, degraded.headers['retry-after']]).toEqual([
      200,
      { cached: true },
      '60',
    ]);
    expect((await app.get('/shop/sku?sku_id=b')).body).toEqual({ live: true });
  });

  test('without a rate, only decorated routes and controllers are limited; the nearest decorator wins', async () => {
    const app = await serve([SluiceModule.forRoot({ clock })]);
    expect(await statuses(app, '/shop/list', 4)).toEqual([200, 200, 200, 200]);
    expect((await app.get('/shop/list')).headers['ratelimit-policy']).toBeUndefined();
    // A controller's limit: one bucket for its routes, its options (draft-7) on each.
    const a = await app.get('/admin/a');
    expect([a.status, a.headers['ratelimit-policy']]).toEqual([200, '2;w=60']);
    expect([...(await statuses(app, '/admin/b', 2)), ...(await statuses(app, '/admin/a', 1))]).toEqual([
      200, 429, 429,
    ]);
    expect(await statuses(app, '/admin/free', 3)).toEqual([200, 200, 200]);
    // A skipped controller; its method's own limit still applies.
    expect(await statuses(app, '/open/any', 3)).toEqual([200, 200, 200]);
    expect(await statuses(app, '/open/guarded', 2)).toEqual([200, 429]);
  });

  test("a decorator's options merge over the module's: its store, headers, status", async () => {
    const app = await serve([SluiceModule.forRoot({ clock, headers: 'legacy', status: 503 })]);
    const first = await app.get('/open/guarded');
    expect([first.status, first.headers['x-ratelimit-limit']]).toEqual([200, '1']);
    const refused = await app.get('/open/guarded');
    expect([refused.status, refused.headers['retry-after']]).toEqual([503, '60']);
  });

  test('forRootAsync takes its options from a factory with injected providers', async () => {
    const CLOCK = Symbol('clock');
    @Module({ providers: [{ provide: CLOCK, useValue: clock }], exports: [CLOCK] })
    class ClockModule {}
    const app = await serve([
      SluiceModule.forRootAsync({
        imports: [ClockModule],
        inject: [CLOCK],
        useFactory: async (now: () => number) => ({ rate: '1/1m', clock: now }),
      }),
    ]);
    expect(await statuses(app, '/shop/list', 2)).toEqual([200, 429]);
  });

  test('several limits on every route, in order', async () => {
    const app = await serve([
      SluiceModule.forRoot([
        { rate: '3/1m', clock },
        { key: '$http_user_id', rate: '1/1m', clock },
      ]),
    ]);
    expect((await app.get('/shop/list').set('user-id', 'u')).status).toBe(200);
    expect((await app.get('/shop/list').set('user-id', 'u')).status).toBe(429);
    expect((await app.get('/shop/list').set('user-id', 'v')).status).toBe(200);
    expect((await app.get('/shop/list')).status).toBe(200);
    expect((await app.get('/shop/list').set('user-id', 'w')).status).toBe(429);
  });

  test.each([
    ['the module', [SluiceModule.forRoot({ rate: '6r/x' })], 'rate'],
    ['the module (a typo)', [SluiceModule.forRoot({ rate: '6r/m', brust: 5 } as never)], 'brust'],
    ['the module, as defaults of a decorator', [SluiceModule.forRoot({ status: 200 })], 'status'],
    [
      "the module, a default a decorator's rate replaces",
      [SluiceModule.forRoot({ algorithm: 'bogus' as never })],
      'algorithm',
    ],
    [
      'a factory that returns none',
      [SluiceModule.forRootAsync({ useFactory: () => undefined as never })],
      'options',
    ],
  ])('invalid options of %s fail the start, naming the option', async (_where, imports, option) => {
    const failed = serve(imports);
    await expect(failed).rejects.toBeInstanceOf(SluiceConfigError);
    await expect(failed).rejects.toMatchObject({ option });
  });

  test('invalid options of a decorator fail the start, not the first request', async () => {
    @Controller('bad')
    class BadController {
      @Get()
      @RateLimit({ rate: '6r/m', key: '$nope' })
      bad() {
        return 'never';
      }
    }
    @Module({ imports: [SluiceModule.forRoot()], controllers: [BadController] })
    class BadModule {}
    await expect(start(BadModule, adapter())).rejects.toMatchObject({ option: 'key' });
  });
});

test('requests of other kinds than HTTP (microservices, WebSockets, GraphQL) pass untouched', () => {
  const guard = new SluiceGuard(
    new Reflector(),
    { rate: '1/1m' },
    new HttpAdapterHost(),
    null as never,
    null as never,
  );
  for (const type of ['rpc', 'ws', 'graphql']) {
    const context = { getType: () => type } as unknown as ExecutionContext;
    for (let i = 0; i < 3; i++) expect(guard.canActivate(context)).toBe(true);
  }
});
