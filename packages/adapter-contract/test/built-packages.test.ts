import { installPacked, run, type PackedProject } from '../../core/test/packaging/packed-install';

/**
 * The packed packages on the frameworks' older majors: installed with plain npm in a folder
 * outside the repository beside Express 4, Koa 2, Fastify 4 and Nest 11 (and Hono 4 on
 * `@hono/node-server`, its one major), loaded by name from `require` and `import` (their exports
 * maps, no jest mapping), each limiting real requests. The current majors:
 * packages/core/test/packaging.
 */
let project: PackedProject;
const node = (args: string[]) => run('node', args, project.dir).trim();

beforeAll(() => {
  project = installPacked({
    express: '^4.22.3',
    koa: '^2.16.4',
    fastify: '^4.29.1',
    '@nestjs/common': '^11.2.10',
    '@nestjs/core': '^11.2.10',
    '@nestjs/platform-express': '^11.2.10',
    'reflect-metadata': '^0.2.2',
    rxjs: '^7.8.2',
    hono: '^4.13.23',
    '@hono/node-server': '^2.1.11',
  });
}, 240_000);

afterAll(() => project?.remove());

test('the frameworks are the older majors', () => {
  const major = (name: string) => node(['-p', `require('${name}/package.json').version.split('.')[0]`]);
  expect(['express', 'koa', 'fastify', '@nestjs/core'].map(major)).toEqual(['4', '2', '4', '11']);
});

/** Two requests through an app on an ephemeral port; prints the two statuses. */
const twoRequests = (listen: string) => `
  const server = await (${listen});
  const url = 'http://127.0.0.1:' + server.address().port;
  const statuses = [];
  for (let i = 0; i < 2; i++) statuses.push((await fetch(url)).status);
  console.log(statuses.join(' '));
  server.close();`;

test('express 4 from require', () => {
  const script = `(async () => {
    const express = require('express'); const { rateLimit } = require('@sluice/express');
    const app = express(); app.use(rateLimit({ rate: '1/1m' })); app.get('/', (req, res) => res.send('ok'));
    ${twoRequests("new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); })")}
  })()`;
  expect(node(['-e', script])).toBe('200 429');
});

test('koa 2 from import', () => {
  const script = `
    import Koa from 'koa'; import { rateLimit } from '@sluice/koa';
    const app = new Koa(); app.use(rateLimit({ rate: '1/1m' })); app.use((ctx) => { ctx.body = 'ok'; });
    ${twoRequests("new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); })")}`;
  expect(node(['--input-type=module', '-e', script])).toBe('200 429');
});

test('fastify 4 registers require(@sluice/fastify) itself, as Fastify plugins are used', () => {
  const script = `(async () => {
    const app = require('fastify')();
    await app.register(require('@sluice/fastify'), { rate: '1/1m' });
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    ${twoRequests('app.server')}
    await app.close();
  })()`;
  expect(node(['-e', script])).toBe('200 429');
});

test('nest 11 from require, the module limiting every route', () => {
  const script = `(async () => {
    require('reflect-metadata');
    const { Controller, Get, Module } = require('@nestjs/common');
    const { NestFactory } = require('@nestjs/core');
    const { SluiceModule } = require('@sluice/nestjs');
    class Home { get() { return 'ok'; } }
    Get()(Home.prototype, 'get', Object.getOwnPropertyDescriptor(Home.prototype, 'get'));
    Controller()(Home);
    class AppModule {}
    Module({ imports: [SluiceModule.forRoot({ rate: '1/1m' })], controllers: [Home] })(AppModule);
    const app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    ${twoRequests('app.getHttpServer()')}
    await app.close();
  })()`;
  expect(node(['-e', script])).toBe('200 429');
});

/** A Hono app on `@hono/node-server`, listening on an ephemeral port: the server, once it listens. */
const honoServer = (app: string) =>
  `new Promise((r) => { const s = serve({ fetch: ${app}.fetch, port: 0, hostname: '127.0.0.1' }, () => r(s)); })`;

test('hono 4 on @hono/node-server from import', () => {
  const script = `
    import { Hono } from 'hono'; import { serve } from '@hono/node-server';
    import { rateLimit } from '@sluice/hono';
    const app = new Hono(); app.use(rateLimit({ rate: '1/1m' })); app.get('/', (c) => c.text('ok'));
    ${twoRequests(honoServer('app'))}`;
  expect(node(['--input-type=module', '-e', script])).toBe('200 429');
});

test('hono 4 from require, and a Fetch handler behind withRateLimit', () => {
  const script = `(async () => {
    const { Hono } = require('hono'); const { serve } = require('@hono/node-server');
    const { rateLimit, withRateLimit } = require('@sluice/hono');
    const app = new Hono();
    app.get('/', rateLimit({ key: '$route', rate: '1/1m' }), (c) => c.text('ok'));
    ${twoRequests(honoServer('app'))}
    const handler = withRateLimit({ key: '$http_user_id', rate: '1/1m' }, async () => new Response('ok'));
    const request = () => new Request('http://shop.test/', { headers: { 'user-id': 'u' } });
    console.log((await handler(request())).status, (await handler(request())).status);
  })()`;
  expect(node(['-e', script]).split('\n')).toEqual(['200 429', '200 429']);
});

test.each([
  ['@sluice/hono', ['concurrencyLimit', 'rateLimit', 'withRateLimit']],
  ['@sluice/express', ['RateLimit', 'concurrencyLimit', 'rateLimit']],
  ['@sluice/koa', ['RateLimit', 'concurrencyLimit', 'rateLimit']],
  ['@sluice/fastify', ['RateLimit', 'concurrencyLimit', 'default', 'sluice']],
])('%s: require and import give the public names', (name, names) => {
  const cjs = JSON.parse(node(['-e', `console.log(JSON.stringify(Object.keys(require('${name}'))))`]));
  const esm = JSON.parse(
    node(['--input-type=module', '-e', `console.log(JSON.stringify(Object.keys(await import('${name}'))))`]),
  );
  expect(cjs).toEqual(expect.arrayContaining(names));
  expect(esm).toEqual(expect.arrayContaining(names));
});
