import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RedisStore } from '@sluice/core';
import { adaptiveLimit, rateLimit } from '@sluice/express';
import { dashboard, prometheus, type Dashboard } from '@sluice/metrics';
import express from 'express';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Registry } from 'prom-client';
import { useRedisServer } from '../../core/test/harness/redis-fixtures';

/**
 * The dashboard in a real browser: Debian's chromium, driven by playwright-core. Never skipped:
 * without chromium this fails and says how to install it (`.ci/run` does).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

describe('the dashboard in chromium', () => {
  const redis = useRedisServer();
  let browser: Browser | undefined;
  let server: Server | undefined;
  let board: Dashboard | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
      );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    board?.close();
    server?.closeAllConnections();
    server?.close();
  });

  test('loads without console errors, shows each limiter, and its numbers change as requests arrive', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    board = dashboard({ metrics, authorize: 'loopback', intervalMs: 200 });
    const app = express();
    app.use('/ops/sluice', board);
    app.get('/api', rateLimit({ name: 'per-ip', rate: '3/1m', metrics }), (_req, res) => {
      res.send('ok');
    });
    const store = new RedisStore({ client: redis.client() });
    app.get(
      '/buy',
      rateLimit({ name: 'orders', key: '$arg_sku', rate: '100/1m', store, metrics, timeoutMs: 5000 }),
      (_req, res) => {
        res.send('ok');
      },
    );
    // An adaptive limit: its chart draws the limit (pinned here at 4) and the requests in flight.
    app.get(
      '/work',
      adaptiveLimit({ name: 'instance', metrics, initial: 4, min: 4, max: 4, eventLoop: false }),
      (_req, res) => {
        res.send('ok');
      },
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const page = (await (browser as Browser).newPage()) as Page;
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/ops/sluice`);
    await page.waitForSelector('[data-limiter="per-ip"]');
    await page.waitForSelector('[data-limiter="orders"]');
    expect(await page.textContent('[data-limiter="per-ip"] [data-fact="admitted"]')).toBe('0');
    await page.waitForSelector('.status:has-text("live")');

    for (let i = 0; i < 5; i++) await fetch(`${base}/api`);
    for (const sku of ['iphone-17', 'iphone-17', 'switch-2']) await fetch(`${base}/buy?sku=${sku}`);
    const fact = (limiter: string, name: string) => `[data-limiter="${limiter}"] [data-fact="${name}"]`;
    // A refresh may fall between the third request and the fifth: wait for the count after the last.
    await page.waitForSelector(`${fact('per-ip', 'limited')}:text-is("2")`);
    expect(await page.textContent(fact('per-ip', 'admitted'))).toBe('3');
    await page.waitForSelector(`${fact('orders', 'admitted')}:text-is("3")`);
    // The chart drew the burst; the hot keys and the store's health are shown.
    const points = await page.getAttribute('[data-limiter="per-ip"] polyline.admitted', 'points');
    expect(points?.split(' ').some((xy) => Number(xy.split(',')[1]) < 130)).toBe(true);
    expect(await page.textContent('[data-limiter="orders"] tbody tr:first-child td.key')).toBe('iphone-17');
    expect(await page.textContent('[data-limiter="orders"] .badge.up')).toBe('store up');
    expect(await page.textContent(fact('orders', 'latency'))).toMatch(/^[\d.]+ \/ [\d.]+ \/ [\d.]+ ms$/);
    expect(await page.isVisible(fact('per-ip', 'latency'))).toBe(false); // memory: no store health
    // The adaptive limiter's chart: hidden on the others, its limit line drawn, its facts shown.
    await fetch(`${base}/work`);
    await page.waitForSelector(`${fact('instance', 'adaptive-limit')}:text-is("4")`);
    await page.waitForSelector(`${fact('instance', 'admitted')}:text-is("1")`);
    expect(await page.isVisible('[data-limiter="instance"] svg.adaptive')).toBe(true);
    expect(await page.isVisible('[data-limiter="per-ip"] svg.adaptive')).toBe(false);
    const limit = await page.getAttribute('[data-limiter="instance"] svg.adaptive polyline.limit', 'points');
    // Pinned at 4 on an axis topped at 5: every point sits at 4/5 of the chart's height.
    const ys = (limit ?? '').split(' ').map((xy) => Number(xy.split(',')[1]));
    expect(ys.length).toBeGreaterThan(0);
    expect(new Set(ys)).toEqual(new Set([150 - 18 - (4 / 5) * (150 - 18 - 8)]));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
