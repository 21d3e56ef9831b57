import { Controller, Get, Module } from '@nestjs/common';
import { MemoryStore, type LimiterMetrics, type MetricsSink } from '@sluice/core';
import { ConcurrencyLimit, RateLimit, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start, type Started } from './harness';

// Time stands still: no test here needs it to move.
const clock = () => 1_700_006_400_000;

/**
 * A method decorator as logging and tracing ones are written: the method becomes a function
 * assigned to `descriptor.value`, whose `name` is ''.
 */
const Logged = (): MethodDecorator => (_target, _key, descriptor) => {
  const original = descriptor.value as unknown as (...args: unknown[]) => unknown;
  descriptor.value = function (this: unknown, ...args: unknown[]) {
    return original.apply(this, args);
  } as never;
  return descriptor;
};

/** A metrics sink that only keeps the names limiters register under. */
function namesSink(): MetricsSink & { readonly names: string[] } {
  const names: string[] = [];
  const none = (): void => undefined;
  const metrics: LimiterMetrics = {
    decided: none,
    storeCall: none,
    storeError: none,
    storeUp: none,
    blockCacheHit: none,
    leaseCall: none,
  };
  return {
    names,
    limiter: (info) => (names.push(info.name), metrics),
  };
}

@Controller('shop')
class ShopController {
  @Get('a')
  @RateLimit({ rate: '1/1m' })
  @Logged()
  a() {
    return 'a';
  }

  @Get('b')
  @RateLimit({ rate: '1/1m' })
  @Logged()
  b() {
    return 'b';
  }
}

/** Two controllers of one class name, their methods wrapped: named apart by their path. */
function usersController(path: string) {
  @Controller(path)
  class UsersController {
    @Get()
    @RateLimit({ rate: '1/1m' })
    @Logged()
    list() {
      return path;
    }
  }
  return UsersController;
}
const v1 = usersController('v1/users');
const v2 = usersController('v2/users');

/** One store for both decorators' permits, as a shared Redis would be. */
const permits = new MemoryStore();
/** Handlers of `/jobs/hang` waiting to be let go. */
const hanging: Array<() => void> = [];
let arrived: (() => void) | undefined;

@Controller('jobs')
class JobsController {
  @Get('hang')
  @ConcurrencyLimit({ key: 'all', max: 1, store: permits })
  @Logged()
  hang() {
    return new Promise<string>((resolve) => {
      hanging.push(() => resolve('done'));
      arrived?.();
    });
  }

  @Get('ok')
  @ConcurrencyLimit({ key: 'all', max: 1, store: permits })
  @Logged()
  ok() {
    return 'ok';
  }
}

describe.each(PLATFORMS)(`Nest ${NEST_MAJOR} on %s: wrapped handlers`, (_platform, adapter) => {
  let started: Started | undefined;
  afterEach(async () => {
    for (const release of hanging.splice(0)) release();
    await started?.app.close();
    started = undefined;
  });

  test('two wrapped methods on one shared store: a bucket and a metrics name for each', async () => {
    const metrics = namesSink();
    @Module({
      imports: [SluiceModule.forRoot({ store: new MemoryStore(), clock, metrics })],
      controllers: [ShopController],
    })
    class AppModule {}
    started = await start(AppModule, adapter());
    expect((await started.get('/shop/a')).status).toBe(200);
    expect((await started.get('/shop/b')).status).toBe(200);
    expect((await started.get('/shop/a')).status).toBe(429);
    expect((await started.get('/shop/b')).status).toBe(429);
    expect(metrics.names).toEqual(['sluice:ShopController.a', 'sluice:ShopController.b']);
  });

  test('controllers of one class name, their methods wrapped, do not share buckets', async () => {
    const metrics = namesSink();
    @Module({
      imports: [SluiceModule.forRoot({ store: new MemoryStore(), clock, metrics })],
      controllers: [v1, v2],
    })
    class AppModule {}
    started = await start(AppModule, adapter());
    expect((await started.get('/v1/users')).status).toBe(200);
    expect((await started.get('/v2/users')).status).toBe(200);
    expect((await started.get('/v1/users')).status).toBe(429);
    expect(metrics.names).toEqual([
      'sluice:UsersController(v1/users).list',
      'sluice:UsersController(v2/users).list',
    ]);
  });

  test('two wrapped methods with @ConcurrencyLimit do not share permits', async () => {
    @Module({ imports: [SluiceModule.forRoot()], controllers: [JobsController] })
    class AppModule {}
    started = await start(AppModule, adapter());
    const entered = new Promise<void>((resolve) => (arrived = resolve));
    const held = started.get('/jobs/hang').then((res) => res.status);
    await entered;
    expect((await started.get('/jobs/ok')).status).toBe(200);
    expect((await started.get('/jobs/hang')).status).toBe(429);
    hanging.shift()?.();
    expect(await held).toBe(200);
  });
});
