import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RedisStore, type Store } from '@sluice/core';
import { dashboard, prometheus } from '@sluice/metrics';
import type { Express } from 'express';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { opsAccess } from './ops-access';
import { createShop } from './shop';

/** How to start the demo. */
export interface StartOptions {
  /** 0 picks a free port. @defaultValue 3000, or a free port when 3000 is taken */
  port?: number;
  /** Redis to share the limits through (`redis://host:6379`); without it, memory. */
  redisUrl?: string;
  /** Epoch ms; tests inject one. */
  clock?: () => number;
  /**
   * The secret `/metrics` and the dashboard ask for (`OPS_TOKEN`, 16 characters or more), as a
   * Bearer token or a Basic password; without it they answer this machine only (see `opsAccess`).
   */
  opsToken?: string;
}

/** The running demo. */
export interface RunningShop {
  readonly url: string;
  /** Which store holds the limits, for the banner. */
  readonly storeName: string;
  /** Three commands that show an admitted, a degraded and a limited reply. */
  readonly curls: readonly string[];
  /** Prometheus metrics of every zone (`sluice_decisions_total{limiter="seckill-sku"}`, …); see `opsToken`. */
  readonly metricsUrl: string;
  /** The live dashboard: each zone's admitted / delayed / limited per second, store health, hot keys; see `opsToken`. */
  readonly dashboardUrl: string;
  /** Stops accepting requests, closes open connections and the Redis client. */
  close(): Promise<void>;
}

/**
 * Starts the flash-sale shop.
 *
 * @param options - port, Redis URL, clock, the operations token
 * @throws Error when `opsToken` is shorter than 16 characters
 * @example
 * ```ts
 * const shop = await start({ port: 0 });
 * console.log(shop.url);
 * await shop.close();
 * ```
 */
export async function start({ port, redisUrl, clock, opsToken }: StartOptions = {}): Promise<RunningShop> {
  const access = opsAccess(opsToken === '' ? undefined : opsToken);
  let redis: Redis | undefined;
  let store: Store | undefined;
  if (redisUrl !== undefined && redisUrl !== '') {
    // When Redis is down, the limiter keeps limiting in memory (its default onStoreError).
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    store = new RedisStore({ client: redis });
  }
  // Every zone reports to one set of metrics: scraped at /metrics, watched live at /_sluice, both
  // for operators only (`access`).
  const registry = new Registry();
  const metrics = prometheus({ registry });
  const board = dashboard({ metrics, authorize: access.allows });
  const unlimited = (app: Express): void => {
    app.get('/metrics', access.guard, async (_req, res) => {
      res.type(registry.contentType).send(await registry.metrics());
    });
    app.use('/_sluice', access.guard, board);
  };
  const app = createShop({ store, clock, metrics, unlimited });
  const server = await listen(app, port);
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const show = `-w '  -> HTTP %{http_code}\\n'`;
  return {
    url,
    storeName: redis === undefined ? 'memory' : `Redis at ${redisUrl}`,
    curls: [
      `curl -s ${show} '${url}/ratelimit/sku?sku_id=iphone-17'`,
      `for i in 1 2 3 4 5 6 7; do curl -s ${show} '${url}/ratelimit/sku?sku_id=switch-2'; done`,
      `for i in 1 2 3; do curl -s ${show} -H 'user-id: alice' '${url}/ratelimit/demo'; done`,
    ],
    metricsUrl: `${url}/metrics`,
    dashboardUrl: `${url}/_sluice/`,
    async close() {
      board.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await redis?.quit().catch(() => undefined);
    },
  };
}

function listen(app: ReturnType<typeof createShop>, port: number | undefined): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port ?? 3000);
    server.once('listening', () => resolve(server));
    server.once('error', (error: NodeJS.ErrnoException) => {
      // Only the default port falls back: a port the user asked for must be the one used.
      if (error.code === 'EADDRINUSE' && port === undefined) resolve(listen(app, 0));
      else reject(error);
    });
  });
}
