import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installPacked, PUBLISHED, ROOT, run, type PackedProject } from './packed-install';

/**
 * Every published package as users get it: packed (`pnpm pack`), installed with plain `npm
 * install` in a folder outside the repository beside the current majors of the frameworks, then
 * loaded from CommonJS, from ESM and from TypeScript (node16 resolution, no skipLibCheck), and an
 * Express, a Fastify and a Nest app run from the tarballs. Needs the packages built (`pnpm test`
 * builds first) and the npm registry for the frameworks. The older majors: built-packages.test.ts.
 */
const NAMES: Record<string, string[]> = {
  '@sluice/core': [
    'createLimiter',
    'createConcurrencyLimiter',
    'MemoryStore',
    'RedisStore',
    'SluiceConfigError',
  ],
  '@sluice/express': ['rateLimit', 'RateLimit', 'concurrencyLimit'],
  '@sluice/koa': ['rateLimit', 'RateLimit', 'concurrencyLimit'],
  '@sluice/fastify': ['default', 'sluice', 'RateLimit', 'concurrencyLimit'],
  '@sluice/hono': ['rateLimit', 'concurrencyLimit', 'withRateLimit'],
  '@sluice/nestjs': ['SluiceModule', 'SluiceGuard', 'RateLimit', 'SkipRateLimit'],
  '@sluice/cli': ['replay', 'main'],
  '@sluice/metrics': ['prometheus', 'dashboard', 'openTelemetry', 'isLoopbackRequest', 'SluiceMetrics'],
};

/** `@sluice/core/adapter`, the subpath adapters are built from. */
const ADAPTER_FILES = ['cjs', 'mjs', 'd.ts', 'd.mts'].map((ext) => `package/dist/adapter.${ext}`);

let project: PackedProject;
const node = (args: string[]) => run('node', args, project.dir).trim();

beforeAll(() => {
  project = installPacked({
    express: '^5.3.0',
    fastify: '^5.12.8',
    koa: '^3.3.0',
    '@nestjs/common': '^12.5.1',
    '@nestjs/core': '^12.5.1',
    '@nestjs/platform-express': '^12.5.1',
    '@nestjs/platform-fastify': '^12.5.0',
    'reflect-metadata': '^0.2.2',
    rxjs: '^7.8.2',
    'prom-client': '^15.1.3',
    '@types/node': '^20.19.43',
  });
}, 240_000);

afterAll(() => project?.remove());

test('every published package is listed here', () => {
  expect(PUBLISHED.map((p) => p.name).sort()).toEqual(Object.keys(NAMES).sort());
});

describe.each(Object.entries(NAMES))('%s as published', (name, names) => {
  test('the tarball holds dist, README, LICENSE and package.json; no sources, tests or workspace ranges', () => {
    const files = run('tar', ['-tzf', project.tarballs[name] as string], project.dir)
      .split('\n')
      .filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/dist/index.cjs',
        'package/dist/index.mjs',
        'package/dist/index.d.ts',
        'package/dist/index.d.mts',
        ...(name === '@sluice/core' ? ADAPTER_FILES : []),
      ]),
    );
    expect(files.some((f) => f.includes('/test/') || f.startsWith('package/src/'))).toBe(false);
    const manifest = run(
      'tar',
      ['-xzOf', project.tarballs[name] as string, 'package/package.json'],
      project.dir,
    );
    expect(manifest).not.toMatch(/workspace:/);
    expect(JSON.parse(manifest)).toMatchObject({
      license: 'MIT',
      engines: { node: '>=20' },
      publishConfig: { access: 'public' },
      repository: { type: 'git', directory: expect.stringMatching(/^packages\//) },
    });
  });

  test('require() and import give the public names', () => {
    const cjs = node(['-e', `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(name)}))))`]);
    const esm = node([
      '--input-type=module',
      '-e',
      `console.log(JSON.stringify(Object.keys(await import(${JSON.stringify(name)}))))`,
    ]);
    expect(JSON.parse(cjs)).toEqual(expect.arrayContaining(names));
    expect(JSON.parse(esm)).toEqual(expect.arrayContaining(names));
  });
});

describe('@sluice/core end to end from the tarball', () => {
  const script = `
    const limiter = createLimiter({ rate: { limit: 30, window: '60s' }, burst: 15 });
    const d = await limiter.consume('user123');
    console.log(JSON.stringify([d.allowed, d.limit, d.remaining, d.resetMs]));`;

  test('ESM and CJS decide the same', () => {
    const esm = node(['--input-type=module', '-e', `import { createLimiter } from '@sluice/core';${script}`]);
    const cjs = node([
      '-e',
      `const { createLimiter } = require('@sluice/core'); (async () => {${script}})()`,
    ]);
    expect(JSON.parse(esm)).toEqual([true, 16, 15, 2000]);
    expect(cjs).toBe(esm);
  });
});

describe('@sluice/core/adapter from the tarball', () => {
  const namesOf = (specifier: string) => ({
    cjs: JSON.parse(node(['-e', `console.log(JSON.stringify(Object.keys(require('${specifier}'))))`])),
    esm: JSON.parse(
      node([
        '--input-type=module',
        '-e',
        `console.log(JSON.stringify(Object.keys(await import('${specifier}'))))`,
      ]),
    ),
  });
  const PLUMBING = ['createHttpLimiter', 'createHttpConcurrencyLimiter', 'RequestView', 'holdRequest'];

  test('require() and import give the adapter names; the main entry none of them', () => {
    const adapter = namesOf('@sluice/core/adapter');
    const main = namesOf('@sluice/core');
    expect(adapter.cjs).toEqual(expect.arrayContaining(PLUMBING));
    expect(adapter.esm).toEqual(expect.arrayContaining(PLUMBING));
    for (const names of [main.cjs, main.esm]) {
      expect(names).toEqual(expect.arrayContaining(NAMES['@sluice/core'] as string[]));
      expect(names.filter((name: string) => adapter.cjs.includes(name))).toEqual([]);
    }
  });

  // Both entries load one copy of the code: an error the adapter layer throws is the main entry's
  // class, whichever module system loaded them.
  const script = `
    try { createHttpLimiter({ rate: '6r/x' }); } catch (error) { console.log(error instanceof SluiceConfigError); }`;

  test('an error thrown through the adapter entry is the main entry SluiceConfigError (CJS and ESM)', () => {
    const cjs = node([
      '-e',
      `const { SluiceConfigError } = require('@sluice/core');
       const { createHttpLimiter } = require('@sluice/core/adapter');${script}`,
    ]);
    const esm = node([
      '--input-type=module',
      '-e',
      `import { SluiceConfigError } from '@sluice/core';
       import { createHttpLimiter } from '@sluice/core/adapter';${script}`,
    ]);
    expect([cjs, esm]).toEqual(['true', 'true']);
  });
});

/**
 * A user's TypeScript project beside the install: node16 resolution (or node10, which reads no
 * exports map: `typesVersions` must lead it to `@sluice/core/adapter`), strict, no skipLibCheck.
 */
function typeCheck(
  folder: string,
  type: 'commonjs' | 'module',
  source: string,
  decorators = false,
  resolution: 'node16' | 'node10' = 'node16',
): void {
  const dir = join(project.dir, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: resolution === 'node16' ? 'node16' : 'commonjs',
        moduleResolution: resolution,
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        // A Nest app has Node's types (Nest's own declarations need them); core needs none.
        types: decorators ? ['node'] : [],
        ...(decorators ? { experimentalDecorators: true } : {}),
        // A CommonJS project of node10 days, as Fastify's types expect it.
        ...(resolution === 'node10' ? { esModuleInterop: true } : {}),
      },
      files: ['use.ts'],
    }),
  );
  writeFileSync(join(dir, 'use.ts'), source);
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  run('node', [tsc, '-p', dir], dir);
}

test.each(['commonjs', 'module'] as const)('TypeScript (%s) type-checks a user file of core', (type) => {
  typeCheck(
    `ts-core-${type}`,
    type,
    `import { createConcurrencyLimiter, createLimiter, MemoryStore, SluiceConfigError, type ConcurrencyDecision, type Decision } from '@sluice/core';
     const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 10 }) });
     export const pending: Promise<Decision> = limiter.consume('k', { cost: 2 });
     export const isConfigError = (e: unknown): boolean => e instanceof SluiceConfigError;
     // @ts-expect-error rate is required
     createLimiter({ burst: 1 });
     export const permit: Promise<ConcurrencyDecision> = createConcurrencyLimiter({ max: 2, queue: { maxWaitMs: '1s' } }).acquire('k');
     // @ts-expect-error max is required
     createConcurrencyLimiter({ leaseMs: 1000 });`,
  );
});

test.each(['commonjs', 'module'] as const)(
  'TypeScript (%s) type-checks an adapter of core/adapter',
  (type) => {
    typeCheck(
      `ts-core-adapter-${type}`,
      type,
      `import { SluiceConfigError, type Decision } from '@sluice/core';
     import { createHttpLimiter, RequestView, type HttpOutcome, type HttpRequest } from '@sluice/core/adapter';
     type Fallback = (request: HttpRequest, decision: Decision) => void;
     const limiter = createHttpLimiter<HttpRequest, Fallback>({ rate: '10r/s', key: '$http_x_user' });
     const request: HttpRequest = { remoteAddress: '127.0.0.1', url: '/', headers: { 'x-user': 'a' } };
     export const outcome: Promise<HttpOutcome<Fallback>> = limiter.decide(request, request);
     export const user: string = new RequestView(request).header('x-user');
     export const isConfigError = (e: unknown): boolean => e instanceof SluiceConfigError;
     // @ts-expect-error brust is not an option
     createHttpLimiter<HttpRequest, Fallback>({ rate: '10r/s', brust: 5 });`,
    );
  },
);

test('TypeScript with node10 resolution (no exports map) types an adapter through @sluice/core/adapter', () => {
  typeCheck(
    'ts-node10',
    'commonjs',
    `import { concurrencyLimit, type HeaderMode } from '@sluice/fastify';
     export const headers: HeaderMode = 'draft-8';
     export const limit = concurrencyLimit({ max: 2, status: 503 });
     // @ts-expect-error maxx is not an option
     concurrencyLimit({ maxx: 2 });`,
    false,
    'node10',
  );
});

test('TypeScript type-checks a Nest app with legacy decorators (ESM: Nest 12 is ES modules only)', () => {
  typeCheck(
    'ts-nestjs',
    'module',
    `import { Controller, Get, Module } from '@nestjs/common';
     import { RateLimit, SkipRateLimit, SluiceModule } from '@sluice/nestjs';
     @Controller('shop')
     export class Shop {
       @Get('sku') @RateLimit({ key: '$arg_sku_id', rate: '6r/m', fallback: { body: { cached: true } } }) sku() {}
       @Get('health') @SkipRateLimit() health() {}
       // @ts-expect-error brust is not an option
       @Get('typo') @RateLimit({ rate: '6r/m', brust: 5 }) typo() {}
     }
     @Module({ imports: [SluiceModule.forRoot({ rate: '10r/s', burst: 20 })], controllers: [Shop] })
     export class AppModule {}`,
    true,
  );
});

/** Starts an app (the expression's value: a listening server), sends two requests, prints the statuses. */
const twoRequests = (listen: string) => `
  const server = await (${listen});
  const url = 'http://127.0.0.1:' + server.address().port;
  const statuses = [];
  for (let i = 0; i < 2; i++) statuses.push((await fetch(url + '/sku?sku_id=a')).status);
  console.log(statuses.join(' '));`;

describe('apps run from the tarballs', () => {
  test('Express 5 from import', () => {
    const script = `
      import express from 'express'; import { rateLimit } from '@sluice/express';
      const app = express(); app.get('/sku', rateLimit({ key: '$arg_sku_id', rate: '1/1m' }), (req, res) => res.send('ok'));
      ${twoRequests("new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); })")}
      server.close();`;
    expect(node(['--input-type=module', '-e', script])).toBe('200 429');
  });

  test('Fastify 5 from require', () => {
    const script = `(async () => {
      const app = require('fastify')();
      await app.register(require('@sluice/fastify'));
      app.get('/sku', { config: { rateLimit: { key: '$arg_sku_id', rate: '1/1m' } } }, async () => 'ok');
      await app.listen({ port: 0, host: '127.0.0.1' });
      ${twoRequests('app.server')}
      await app.close();
    })()`;
    expect(node(['-e', script])).toBe('200 429');
  });

  /** A Nest app in plain JavaScript: Nest's decorators applied as the functions they are. */
  const nestApp = (imports: string, platform: string) => `
    ${imports}
    class Shop { sku() { return 'ok'; } }
    const sku = Object.getOwnPropertyDescriptor(Shop.prototype, 'sku');
    Get('sku')(Shop.prototype, 'sku', sku);
    RateLimit({ key: '$arg_sku_id', rate: '1/1m' })(Shop.prototype, 'sku', sku);
    Controller()(Shop);
    class AppModule {}
    Module({ imports: [SluiceModule.forRoot()], controllers: [Shop] })(AppModule);
    const app = await NestFactory.create(AppModule, new ${platform}(), { logger: false });
    await app.listen(0, '127.0.0.1');
    ${twoRequests('app.getHttpServer()')}
    await app.close();`;

  test('Nest 12 on Express from import', () => {
    const script = nestApp(
      `import 'reflect-metadata';
       import { Controller, Get, Module } from '@nestjs/common';
       import { NestFactory } from '@nestjs/core';
       import { ExpressAdapter } from '@nestjs/platform-express';
       import { RateLimit, SluiceModule } from '@sluice/nestjs';`,
      'ExpressAdapter',
    );
    expect(node(['--input-type=module', '-e', script])).toBe('200 429');
  });

  test('Nest 12 on Fastify from require (Node 20.19+: require of ES modules)', () => {
    const script = `(async () => {${nestApp(
      `require('reflect-metadata');
       const { Controller, Get, Module } = require('@nestjs/common');
       const { NestFactory } = require('@nestjs/core');
       const { FastifyAdapter } = require('@nestjs/platform-fastify');
       const { RateLimit, SluiceModule } = require('@sluice/nestjs');`,
      'FastifyAdapter',
    )}})()`;
    expect(node(['--no-warnings', '-e', script])).toBe('200 429');
  });
});

describe('@sluice/cli: the sluice command from the tarball', () => {
  test('its bin runs as npx would run it, through its hashbang', () => {
    const manifest = JSON.parse(
      run('tar', ['-xzOf', project.tarballs['@sluice/cli'] as string, 'package/package.json'], project.dir),
    ) as { bin: Record<string, string>; version: string };
    const bin = join(project.dir, 'node_modules', '.bin', 'sluice');
    const out = run(bin, ['replay', '--pattern', 'steady', '--policy', 'gcra 5r/s', '--json'], project.dir);
    const summary = JSON.parse(out) as { requests: number; policies: Array<{ admitted: number }> };
    expect(summary.requests).toBe(600);
    expect(summary.policies[0]?.admitted).toBe(300);
    expect(run(bin, ['--version'], project.dir).trim()).toBe(manifest.version);
    expect(Object.keys(manifest.bin)).toEqual(['sluice']);
  });
});
