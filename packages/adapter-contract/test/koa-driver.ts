import { createServer } from 'node:http';
import type { Decision } from '@sluice/core';
import * as sluiceKoa from '@sluice/koa';
import Router from '@koa/router';
import type Koa3 from 'koa';
import type { Context, Next } from 'koa';
import { closed, failing, listen, outcomeOf, writePartial } from './driver-helpers';
import { CUSTOM_NOT_FOUND, HANDLER_ERROR, OK, type AdapterDriver } from './drivers';

export function koaDriver(name: string, Koa: typeof Koa3): AdapterDriver {
  const { rateLimit, RateLimit } = sluiceKoa;
  type Options = sluiceKoa.RateLimitOptions;
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app = new Koa();
      app.silent = true; // the error test expects a 500; Koa would also print it
      const state = { handled: 0 };
      const limits = options as unknown as Options | Options[];
      if (mount === 'middleware') {
        app.use(rateLimit(limits));
        app.use((ctx) => {
          state.handled++;
          ctx.body = OK;
        });
      } else {
        class Controller {
          @RateLimit(limits)
          handle(ctx: Context, _next: Next): void {
            state.handled++;
            ctx.body = OK;
          }
        }
        const controller = new Controller();
        app.use((ctx, next) => controller.handle(ctx, next));
      }
      return listen(createServer(server, app.callback()), state);
    },
    async serveRoute(pattern, options, prefix = '') {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const router = new Router({ prefix });
      router.get(pattern, rateLimit(options as unknown as Options), (ctx) => {
        state.handled++;
        ctx.body = OK;
      });
      app.use(router.routes());
      return listen(createServer(app.callback()), state);
    },
    async serveSite(options, customNotFound = false) {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const ok = (ctx: Context) => {
        state.handled++;
        ctx.body = OK;
      };
      const health = new Router();
      health.get('/health', ok);
      const known = new Router();
      known.get('/known', ok);
      app.use(health.routes());
      app.use(rateLimit(options as unknown as Options));
      app.use(known.routes());
      if (customNotFound)
        app.use((ctx) => {
          state.handled++;
          ctx.status = 404;
          ctx.body = CUSTOM_NOT_FOUND;
        });
      return listen(createServer(app.callback()), state);
    },
    async serveOutcomes(options, on = 'app') {
      const app = new Koa();
      app.silent = true;
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      const handle = async (ctx: Context): Promise<void> => {
        state.handled++;
        const outcome = outcomeOf(ctx.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'hang') return closed(ctx.res);
        ctx.status = outcome === 'fail' ? 401 : 200;
        ctx.body = outcome === 'fail' ? { ok: false } : OK;
      };
      if (on === 'app') {
        app.use(limit);
        app.use(handle);
      } else {
        const router = new Router();
        router.get('/', limit, handle);
        app.use(router.routes());
      }
      return listen(createServer(app.callback()), state);
    },
    countStatus: (status) => (ctx: Context, response: Context) => ctx === response && ctx.status === status,
    fallbackHandler: (status) => (ctx: Context, d: Decision) => {
      ctx.status = status;
      ctx.body = { handled: true, remaining: d.remaining };
    },
    failingFallback: (how) => (ctx: Context) =>
      failing(how, {
        headers: () => {
          ctx.status = 203;
          ctx.set('X-Cache', 'HIT');
        },
        midReply: () => writePartial(ctx.res),
      }),
    keyFromHeader: (header) => (ctx: Context) => ctx.get(header),
    keyFromQuery: (name) => (ctx: Context) => ctx.query[name],
    tierOverrides: (name, rate) => (_key: string, ctx: Context) =>
      ctx.get(name) === 'gold' ? rate : undefined,
  };
}
