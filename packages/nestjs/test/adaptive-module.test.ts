import { Controller, Get, Module } from '@nestjs/common';
import { createAdaptiveLimiter } from '@sluice/core';
import { AdaptiveLimit, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start, type Started } from './harness';

/** The module's adaptive limit, pinned at one request in flight (min = max). */
const instanceWide = createAdaptiveLimiter({ initial: 1, min: 1, max: 1, queue: false, eventLoop: false });
/** A route's own, which replaces the module's there. */
const ownLimit = createAdaptiveLimiter({ initial: 5, min: 5, max: 5, queue: false, eventLoop: false });

let release: (() => void) | undefined;
let arrived: (() => void) | undefined;

@Controller()
class ShopController {
  @Get('slow')
  slow() {
    return new Promise<string>((resolve) => {
      release = () => resolve('done');
      arrived?.();
    });
  }

  @Get('browse')
  browse() {
    return 'browse';
  }

  @Get('own')
  @AdaptiveLimit({ limiter: ownLimit })
  own() {
    return 'own';
  }
}

@Module({
  imports: [SluiceModule.forRoot({ adaptive: { limiter: instanceWide } })],
  controllers: [ShopController],
})
class AppModule {}

describe.each(PLATFORMS)(
  `SluiceModule.forRoot({ adaptive }), Nest ${NEST_MAJOR} on %s`,
  (_platform, adapter) => {
    let app: Started;
    beforeEach(async () => {
      app = await start(AppModule, adapter());
    });
    afterEach(async () => {
      release?.();
      await app.app.close();
    });

    test('limits every route of the instance together; a route with @AdaptiveLimit has its own instead', async () => {
      const started = new Promise<void>((resolve) => (arrived = resolve));
      const slow = app.get('/slow').then((res) => res.status);
      await started;
      expect(instanceWide.inFlight()).toBe(1);
      const refused = await app.get('/browse');
      expect(refused.status).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await app.get('/own')).status).toBe(200);
      release?.();
      expect(await slow).toBe(200);
      expect((await app.get('/browse')).status).toBe(200);
      expect(instanceWide.inFlight()).toBe(0);
      expect(ownLimit.inFlight()).toBe(0);
    });
  },
);
