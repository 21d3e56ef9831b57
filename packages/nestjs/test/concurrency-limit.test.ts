import { request as httpRequest } from 'node:http';
import { Controller, Get, Module } from '@nestjs/common';
import { ConcurrencyLimit, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start, type Started } from './harness';

/** Handlers of `/work/hang` that have started and wait to be let go, in arrival order. */
const hanging: Array<() => void> = [];
let arrived: (() => void) | undefined;
/** Resolves when a `/work/hang` handler has started: its permit is held. */
const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));

@Controller('work')
@ConcurrencyLimit({ key: '$http_user_id', max: 1 })
class WorkController {
  @Get('hang')
  hang() {
    return new Promise<string>((resolve) => {
      hanging.push(() => resolve('done'));
      arrived?.();
    });
  }

  @Get('throw')
  fail(): never {
    throw new Error('the handler failed');
  }

  @Get('ok')
  ok() {
    return 'ok';
  }
}

@Controller('other')
class OtherController {
  @Get('free')
  @ConcurrencyLimit({ key: '$http_user_id', max: 1, status: 503, dryRun: false })
  free() {
    return 'free';
  }
}

@Module({ imports: [SluiceModule.forRoot()], controllers: [WorkController, OtherController] })
class AppModule {}

describe.each(PLATFORMS)(`@ConcurrencyLimit, Nest ${NEST_MAJOR} on %s`, (_platform, adapter) => {
  let app: Started;
  const as = (user: string, path: string) => app.get(path, { 'User-Id': user });
  /** Polls (bounded) until the server has seen a connection close: its `close` comes asynchronously. */
  const eventually = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) {
      if (await check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return false;
  };

  beforeEach(async () => {
    app = await start(AppModule, adapter());
  });
  afterEach(async () => {
    for (const release of hanging.splice(0)) release();
    await app.app.close();
  });

  test('max 1 per user: a second request of the user is refused while the first runs; others pass', async () => {
    const entered = nextArrival();
    const first = as('u1', '/work/hang').then((res) => [res.status, res.text]);
    await entered;
    const refused = await as('u1', '/work/ok');
    expect([refused.status, refused.text, refused.headers['retry-after']]).toEqual([
      429,
      'Too many requests in progress.\n',
      undefined,
    ]);
    expect((await as('u1', '/work/hang').set('Accept', 'application/json')).body).toEqual({
      error: 'too_many_in_flight',
      message: 'Too many requests in progress.',
    });
    expect((await as('u2', '/work/ok')).status).toBe(200);
    // Another decorator, its own permits: the user's hanging request there takes none.
    expect((await as('u1', '/other/free')).status).toBe(200);
    hanging.shift()?.();
    expect(await first).toEqual([200, 'done']);
    expect((await as('u1', '/work/ok')).status).toBe(200);
    expect((await as('u1', '/work/ok')).status).toBe(200);
  });

  test('a handler that throws gives its permit back', async () => {
    expect((await as('u1', '/work/throw')).status).toBe(500);
    expect((await as('u1', '/work/throw')).status).toBe(500);
    // The permit is free: the next request takes it, and holds it.
    const entered = nextArrival();
    const held = as('u1', '/work/hang').then((res) => res.status);
    await entered;
    expect((await as('u1', '/work/ok')).status).toBe(429);
    hanging.shift()?.();
    expect(await held).toBe(200);
  });

  test('a client that leaves mid-request gives its permit back, though the handler still runs', async () => {
    const entered = nextArrival();
    const { port } = new URL(app.url);
    const leaving = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/work/hang',
      headers: { 'User-Id': 'u1' },
    });
    const closed = new Promise((resolve) => leaving.on('error', resolve).on('close', resolve));
    leaving.end();
    await entered;
    expect((await as('u1', '/work/ok')).status).toBe(429);
    leaving.destroy();
    await closed;
    expect(await eventually(async () => (await as('u1', '/work/ok')).status === 200)).toBe(true);
    // The handler never finished: only the connection's close gave the permit back.
    expect(hanging).toHaveLength(1);
  });
});
