import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rateLimit as expressRateLimit } from '@sluice/express';
import sluice from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import type { Dashboard, SluiceMetrics } from '@sluice/metrics';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';

/** A running app with a limited `GET /buy` (limiter `orders`) and the dashboard under `/ops/sluice`. */
export interface MountedApp {
  readonly url: string;
  close(): Promise<void>;
}

export const FRAMEWORKS = ['express', 'koa', 'fastify'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** The same app on each framework, the dashboard mounted as the adapters' READMEs show. */
export async function mountedApp(
  framework: Framework,
  metrics: SluiceMetrics,
  board: Dashboard,
): Promise<MountedApp> {
  const limit = { name: 'orders', rate: '2/1m', metrics, key: '$arg_user' };
  let server: Server;
  if (framework === 'express') {
    const app = express();
    app.use('/ops/sluice', board);
    app.get('/buy', expressRateLimit(limit), (_req, res) => {
      res.send('ok');
    });
    server = app.listen(0, '127.0.0.1');
  } else if (framework === 'koa') {
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== '/ops/sluice' && !ctx.path.startsWith('/ops/sluice/')) return next();
      ctx.respond = false; // the dashboard answers on Node's own response
      board(ctx.req, ctx.res);
    });
    app.use(koaRateLimit(limit));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    server = app.listen(0, '127.0.0.1');
  } else {
    const app = Fastify();
    await app.register(sluice);
    const handler = { config: { rateLimit: false as const } };
    for (const url of ['/ops/sluice', '/ops/sluice/*']) {
      app.get(url, handler, (request, reply) => {
        reply.hijack(); // the dashboard answers on Node's own response
        board(request.raw, reply.raw);
      });
    }
    app.get('/buy', { config: { rateLimit: limit } }, async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    server = app.server;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, close: () => app.close() };
  }
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
