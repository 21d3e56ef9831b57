import { Module, type DynamicModule } from '@nestjs/common';
import { SluiceModule, type SluiceModuleOptions } from '@sluice/nestjs';
import { OrdersController, ShopController } from './shop.controller';

/**
 * The shop: 10 requests a second per client address on every route (20 at once), unless a
 * route or controller says otherwise. `clock` is for tests; leave it out in an app.
 */
export function appModule(clock?: () => number): DynamicModule {
  const perIp: SluiceModuleOptions = { rate: '10r/s', burst: 20, ...(clock ? { clock } : {}) };
  @Module({ imports: [SluiceModule.forRoot(perIp)], controllers: [ShopController, OrdersController] })
  class AppModule {}
  return { module: AppModule };
}
