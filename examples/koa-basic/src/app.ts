import { RateLimit, rateLimit } from '@sluice/koa';
import Koa, { type Context, type Next } from 'koa';

/**
 * Limits kept next to the code they protect: standard (TC39) method decorators. Each decorated
 * method gets its own limit, created once, when the class is defined.
 */
export class AccountController {
  /** 2 profile reads a minute per user; a request without `user-id` is refused, not waved through. */
  @RateLimit({ key: '$http_user_id', rate: '2/1m', onMissingKey: 'reject' })
  async profile(ctx: Context, _next: Next): Promise<void> {
    ctx.body = { user: ctx.get('user-id') };
  }

  /** Searches cost by page size: `?limit=50` takes 5 units of 10 a minute per client. */
  @RateLimit({
    rate: '10/1m',
    cost: (ctx: Context) => Math.max(1, Math.ceil(Number(ctx.query.limit ?? 10) / 10)),
  })
  async search(ctx: Context, _next: Next): Promise<void> {
    ctx.body = { q: ctx.query.q ?? '', results: [] };
  }
}

/**
 * A Koa app: a per-IP limit (10 r/s, bursts of 20) on everything, then the controller's own limits.
 *
 * @example
 * ```ts
 * createApp().listen(3001);
 * ```
 */
export function createApp(): Koa {
  const app = new Koa();
  app.use(rateLimit({ rate: '10r/s', burst: 20 }));
  const account = new AccountController();
  app.use(async (ctx, next) => {
    if (ctx.path === '/profile') return account.profile(ctx, next);
    if (ctx.path === '/search') return account.search(ctx, next);
    ctx.body = { try: ['/profile (header user-id)', '/search?q=shoes&limit=50'] };
  });
  return app;
}
