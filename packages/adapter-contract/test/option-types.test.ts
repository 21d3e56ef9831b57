import { createLimiter } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import sluice, { type SluiceRouteOptions } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';

// Compiled by `pnpm typecheck`: the options users write, typed as each adapter declares them.
describe('adapter option types', () => {
  const rules = [{ rate: '10r/s' }, { algorithm: 'fixed-window', rate: '1000/1h' }] as const;

  test('Express: rules, and overrides reading req', () => {
    const app = express();
    app.use(expressRateLimit({ rules }));
    app.use(
      expressRateLimit({
        rate: '10r/s',
        overrides: (_key, req) => (req.headers['x-tier'] === 'gold' ? '100r/s' : undefined),
      }),
    );
    // @ts-expect-error rules replace rate
    expect(() => expressRateLimit({ rate: '1r/s', rules })).toThrow(/^rules /);
    // @ts-expect-error a ready limiter carries its own rules
    expect(() => expressRateLimit({ limiter: createLimiter({ rate: '1r/s' }), rules })).toThrow(/^rules /);
  });

  test('Koa: rules, and overrides reading ctx', () => {
    const app = new Koa();
    app.use(koaRateLimit({ rules }));
    app.use(
      koaRateLimit({
        rate: '10r/s',
        overrides: (_key, ctx) => (ctx.get('x-tier') === 'gold' ? '100r/s' : undefined),
      }),
    );
  });

  test('Fastify: rules on the plugin and on a route, and overrides reading request', async () => {
    const app = fastify();
    await app.register(sluice, {
      rules,
      overrides: (_key, request) =>
        request.headers['x-tier'] === 'gold' ? ['100r/s', '5000/1h'] : undefined,
    });
    const route: SluiceRouteOptions = { rules: [{ rate: '1r/s', algorithm: 'leaky-bucket', burst: 2 }] };
    app.get('/sku', { config: { rateLimit: route } }, async () => 'ok');
    await app.ready();
    await app.close();
  });
});
