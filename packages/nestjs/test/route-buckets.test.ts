import { Controller, Get, Module } from '@nestjs/common';
import { MemoryStore } from '@sluice/core';
import { ConcurrencyLimit, RateLimit, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start, type Started } from './harness';

// Time stands still: no test here needs it to move.
const clock = () => 1_700_006_400_000;

/** Two controllers of one class name, as two API versions in two folders often have. */
const v1 = (() => {
  @Controller('v1/users')
  class UsersController {
    @Get()
    @RateLimit({ rate: '1/1m' })
    list() {
      return 'v1';
    }
  }
  return UsersController;
})();
const v2 = (() => {
  @Controller('v2/users')
  class UsersController {
    @Get()
    @RateLimit({ rate: '1/1m' })
    list() {
      return 'v2';
    }
  }
  return UsersController;
})();

/** A decorated method inherited by two controllers, as generic CRUD base controllers are. */
class CrudController {
  @Get()
  @RateLimit({ rate: '1/1m' })
  @ConcurrencyLimit({ max: 1 })
  list() {
    return 'list';
  }
}
@Controller('orders')
class OrdersController extends CrudController {}
@Controller('items')
class ItemsController extends CrudController {}

describe.each(PLATFORMS)(`Nest ${NEST_MAJOR} on %s: each route its own bucket`, (_platform, adapter) => {
  let started: Started | undefined;
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
  });

  test('controllers of one class name, on one shared store, do not share buckets', async () => {
    @Module({
      imports: [SluiceModule.forRoot({ store: new MemoryStore(), clock })],
      controllers: [v1, v2],
    })
    class AppModule {}
    started = await start(AppModule, adapter());
    expect((await started.get('/v1/users')).status).toBe(200);
    expect((await started.get('/v2/users')).status).toBe(200);
    expect((await started.get('/v1/users')).status).toBe(429);
    expect((await started.get('/v2/users')).status).toBe(429);
  });

  test('a decorated method inherited by two controllers: a bucket and permits for each', async () => {
    @Module({ imports: [SluiceModule.forRoot({ clock })], controllers: [OrdersController, ItemsController] })
    class AppModule {}
    started = await start(AppModule, adapter());
    expect((await started.get('/orders')).status).toBe(200);
    expect((await started.get('/items')).status).toBe(200);
    expect((await started.get('/orders')).status).toBe(429);
  });
});
