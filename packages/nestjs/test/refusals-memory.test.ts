import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * A refused request leaves Nest's pipeline waiting on a promise that never settles (see
 * SluiceGuard.canActivate): nothing may keep it, or the request, alive. A plain Node process
 * (with `--expose-gc`) runs the built package on Nest 12, refuses 10 000 requests on each
 * platform and measures the heap after a full collection. Nest 12 only (the jest project of Nest
 * 11 leaves this file out): the built package resolves `@nestjs/*` from packages/nestjs.
 */
const HERE = resolve(__dirname, '..');
const SCRIPT = `
require('reflect-metadata');
const http = require('node:http');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { ExpressAdapter } = require('@nestjs/platform-express');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { SluiceModule } = require('./dist/index.cjs');
const settle = () => new Promise((resolve) => setTimeout(resolve, 100)).then(() => global.gc());
async function measure(adapter) {
  class Home { get() { return 'ok'; } }
  Get()(Home.prototype, 'get', Object.getOwnPropertyDescriptor(Home.prototype, 'get'));
  Controller()(Home);
  class AppModule {}
  Module({ imports: [SluiceModule.forRoot({ rate: '1/1h' })], controllers: [Home] })(AppModule);
  const app = await NestFactory.create(AppModule, adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  const port = app.getHttpServer().address().port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const hit = () => new Promise((resolve, reject) =>
    http.get({ port, host: '127.0.0.1', agent }, (res) => res.resume().on('end', () => resolve(res.statusCode))).on('error', reject));
  const send = async (n) => {
    const statuses = new Set();
    for (let i = 0; i < n; i += 50) for (const s of await Promise.all(Array.from({ length: 50 }, hit))) statuses.add(s);
    return [...statuses];
  };
  await send(1000);
  await settle();
  const before = process.memoryUsage().heapUsed;
  const statuses = await send(10000);
  await settle();
  const grown = process.memoryUsage().heapUsed - before;
  agent.destroy();
  await app.close();
  return { statuses, grownMb: grown / 1e6 };
}
(async () => {
  const express = await measure(new ExpressAdapter());
  const fastify = await measure(new FastifyAdapter());
  console.log(JSON.stringify({ express, fastify }));
})();`;

test('10 000 refused requests per platform leave the heap as it was (under 8 MB grown)', async () => {
  if (!existsSync(resolve(HERE, 'dist/index.cjs')))
    throw new Error('@sluice/nestjs is not built: run `pnpm build` (pnpm test does)');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--no-warnings', '-e', SCRIPT],
    {
      cwd: HERE,
    },
  );
  const result = JSON.parse(stdout) as Record<string, { statuses: number[]; grownMb: number }>;
  for (const platform of ['express', 'fastify']) {
    const { statuses, grownMb } = result[platform] as { statuses: number[]; grownMb: number };
    expect([platform, statuses]).toEqual([platform, [429]]);
    // A request kept alive costs kilobytes: 10 000 of them would be tens of MB.
    expect(grownMb).toBeLessThan(8);
  }
}, 120_000);
