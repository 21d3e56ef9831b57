import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The adapters as built (`pnpm test` builds first): loaded by package name from `require` and from
 * `import`, through their exports maps, in a plain Node process (no jest module mapping), each
 * limiting a real request on the framework's other major too.
 */
const run = promisify(execFile);
const HERE = resolve(__dirname, '..');
const node = async (args: string[]): Promise<string> =>
  (await run('node', args, { cwd: HERE })).stdout.trim();

beforeAll(() => {
  for (const name of ['core', 'express', 'koa', 'fastify']) {
    if (!existsSync(resolve(HERE, `../${name}/dist/index.cjs`))) {
      throw new Error(`@sluice/${name} is not built: run \`pnpm build\` (pnpm test does)`);
    }
  }
});

test.each([
  ['@sluice/express', ['RateLimit', 'concurrencyLimit', 'rateLimit']],
  ['@sluice/koa', ['RateLimit', 'concurrencyLimit', 'rateLimit']],
  ['@sluice/fastify', ['RateLimit', 'concurrencyLimit', 'default', 'sluice']],
])('%s: require and import give the public names', async (name, names) => {
  const cjs = JSON.parse(await node(['-e', `console.log(JSON.stringify(Object.keys(require('${name}'))))`]));
  const esm = JSON.parse(
    await node([
      '--input-type=module',
      '-e',
      `console.log(JSON.stringify(Object.keys(await import('${name}'))))`,
    ]),
  );
  expect(cjs).toEqual(expect.arrayContaining(names));
  expect(esm).toEqual(expect.arrayContaining(names));
});

/** Two requests through an app on an ephemeral port; prints the two statuses. */
const twoRequests = (listen: string) => `
  const server = await (${listen});
  const url = 'http://127.0.0.1:' + server.address().port;
  const statuses = [];
  for (let i = 0; i < 2; i++) statuses.push((await fetch(url)).status);
  console.log(statuses.join(' '));
  server.close();`;

test('express 4 from require', async () => {
  const script = `(async () => {
    const express = require('express4'); const { rateLimit } = require('@sluice/express');
    const app = express(); app.use(rateLimit({ rate: '1/1m' })); app.get('/', (req, res) => res.send('ok'));
    ${twoRequests("new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); })")}
  })()`;
  expect(await node(['-e', script])).toBe('200 429');
});

test('koa 2 from import', async () => {
  const script = `
    import Koa from 'koa2'; import { rateLimit } from '@sluice/koa';
    const app = new Koa(); app.use(rateLimit({ rate: '1/1m' })); app.use((ctx) => { ctx.body = 'ok'; });
    ${twoRequests("new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); })")}`;
  expect(await node(['--input-type=module', '-e', script])).toBe('200 429');
});

test('fastify 4 registers require(@sluice/fastify) itself, as Fastify plugins are used', async () => {
  const script = `(async () => {
    const app = require('fastify4')();
    await app.register(require('@sluice/fastify'), { rate: '1/1m' });
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    ${twoRequests('app.server')}
    await app.close();
  })()`;
  expect(await node(['-e', script])).toBe('200 429');
});
