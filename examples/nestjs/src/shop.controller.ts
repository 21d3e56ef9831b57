import { Controller, Get, Headers, Query } from '@nestjs/common';
import { RateLimit, SkipRateLimit } from '@sluice/nestjs';

const STOCK: Record<string, number> = { 'switch-2': 12, 'ps6-pro': 0 };

@Controller()
export class ShopController {
  @Get()
  index() {
    return { try: ['/sku?sku_id=switch-2', '/orders (header user-id)', '/health'] };
  }

  // 6 a minute per SKU (all 6 at once, then one every 10 s); past that a cached page with a 200
  // instead of an error. This limit replaces the module's per-IP one on this route: list both
  // (`@RateLimit([perIp, perSku])`) to keep it.
  @Get('sku')
  @RateLimit({ key: '$arg_sku_id', rate: '6/1m', fallback: { body: { served: 'cached' } } })
  sku(@Query('sku_id') sku: string) {
    return { sku, stock: STOCK[sku] ?? null, served: 'live' };
  }

  @Get('health')
  @SkipRateLimit()
  health() {
    return { ok: true };
  }
}

// Every route of this controller: 2 a minute per user-id header; without one, 400 (the key is missing).
@Controller('orders')
@RateLimit({ key: '$http_user_id', rate: '2/1m', onMissingKey: 'reject' })
export class OrdersController {
  @Get()
  list(@Headers('user-id') user: string) {
    return { user, orders: [] };
  }
}
