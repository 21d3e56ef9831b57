import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Packs each package as npm would publish it, installs the tarball into a bare project, and
 * loads it from CommonJS, from ESM and from TypeScript (node16 resolution, no skipLibCheck) —
 * exactly as users will. Needs the packages built (`pnpm test` builds first).
 */
const ROOT = resolve(__dirname, '../../../..');
const PACKAGES: Record<string, { dir: string; names: string[] }> = {
  '@sluice/core': {
    dir: 'packages/core',
    names: ['createLimiter', 'createConcurrencyLimiter', 'MemoryStore', 'RedisStore', 'SluiceConfigError'],
  },
  '@sluice/express': { dir: 'packages/express', names: ['rateLimit', 'RateLimit', 'concurrencyLimit'] },
  '@sluice/koa': { dir: 'packages/koa', names: ['rateLimit', 'RateLimit', 'concurrencyLimit'] },
  '@sluice/fastify': {
    dir: 'packages/fastify',
    names: ['default', 'sluice', 'RateLimit', 'concurrencyLimit'],
  },
  '@sluice/cli': { dir: 'packages/cli', names: ['replay', 'main'] },
  '@sluice/metrics': {
    dir: 'packages/metrics',
    names: ['prometheus', 'dashboard', 'openTelemetry', 'isLoopbackRequest', 'SluiceMetrics'],
  },
};

const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let project: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  for (const [name, { dir }] of Object.entries(PACKAGES)) {
    const packageDir = join(ROOT, dir);
    if (!existsSync(join(packageDir, 'dist')))
      throw new Error(`${name} is not built: run \`pnpm build\` (pnpm test does)`);
    const tarball = run('pnpm', ['pack', '--pack-destination', project], packageDir)
      .trim()
      .split('\n')
      .pop() as string;
    const target = join(project, 'node_modules', name);
    mkdirSync(target, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], project);
    // Dependencies come from the workspace install instead of the registry (tests run offline).
    const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    // Peers (express, koa, fastify, ioredis) as a user would have installed them.
    const needed = { ...manifest.dependencies, ...manifest.peerDependencies };
    for (const dependency of Object.keys(needed).filter((name) => !name.startsWith('@sluice/'))) {
      const link = join(project, 'node_modules', dependency);
      if (!existsSync(link)) {
        mkdirSync(join(link, '..'), { recursive: true });
        symlinkSync(realpathSync(join(packageDir, 'node_modules', dependency)), link, 'dir');
      }
    }
  }
}, 60_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe.each(Object.entries(PACKAGES))('%s as published', (name, { names }) => {
  test('the tarball holds dist and package.json, not sources or tests', () => {
    const files = run('find', ['.', '-type', 'f'], join(project, 'node_modules', name))
      .split('\n')
      .filter(Boolean);
    expect(files).toContain('./package.json');
    expect(files.some((f) => f.endsWith('index.cjs'))).toBe(true);
    expect(files.some((f) => f.endsWith('index.mjs'))).toBe(true);
    expect(files.some((f) => f.includes('/test/') || f.startsWith('./src/'))).toBe(false);
  });

  test('require() gives the public names', () => {
    const out = run(
      'node',
      ['-e', `const m = require(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m)))`],
      project,
    );
    expect(JSON.parse(out)).toEqual(expect.arrayContaining(names));
  });

  test('import gives the same names', () => {
    const out = run(
      'node',
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m)))`,
      ],
      project,
    );
    expect(JSON.parse(out)).toEqual(expect.arrayContaining(names));
  });
});

describe('@sluice/core end to end from the tarball', () => {
  const script = `
    const limiter = createLimiter({ rate: { limit: 30, window: '60s' }, burst: 15 });
    const d = await limiter.consume('user123');
    console.log(JSON.stringify([d.allowed, d.limit, d.remaining, d.resetMs]));`;

  test('ESM and CJS decide the same', () => {
    const esm = run(
      'node',
      ['--input-type=module', '-e', `import { createLimiter } from '@sluice/core';${script}`],
      project,
    );
    const cjs = run(
      'node',
      ['-e', `const { createLimiter } = require('@sluice/core'); (async () => {${script}})()`],
      project,
    );
    expect(JSON.parse(esm)).toEqual([true, 16, 15, 2000]);
    expect(cjs).toBe(esm);
  });

  test.each(['commonjs', 'module'])(
    'TypeScript (%s, node16 resolution, strict, no skipLibCheck) type-checks a user file',
    (type) => {
      const dir = join(project, `ts-${type}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'node16',
            moduleResolution: 'node16',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: [],
          },
          files: ['use.ts'],
        }),
      );
      writeFileSync(
        join(dir, 'use.ts'),
        `import { createConcurrencyLimiter, createLimiter, MemoryStore, SluiceConfigError, type ConcurrencyDecision, type Decision } from '@sluice/core';
       const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 10 }) });
       export const pending: Promise<Decision> = limiter.consume('k', { cost: 2 });
       export const isConfigError = (e: unknown): boolean => e instanceof SluiceConfigError;
       export const permit: Promise<ConcurrencyDecision> = createConcurrencyLimiter({ max: 2, queue: { maxWaitMs: '1s' } }).acquire('k');
       // @ts-expect-error rate is required
       createLimiter({ burst: 1 });
       // @ts-expect-error max is required
       createConcurrencyLimiter({ leaseMs: 1000 });`,
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      expect(() => run('node', [tsc, '-p', dir], dir)).not.toThrow();
    },
  );
});

describe('@sluice/cli: the sluice command from the tarball', () => {
  test('its bin runs as npx would run it, through its hashbang', () => {
    const dir = join(project, 'node_modules', '@sluice/cli');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      version: string;
    };
    const bin = join(dir, manifest.bin.sluice as string);
    const out = run(bin, ['replay', '--pattern', 'steady', '--policy', 'gcra 5r/s', '--json'], project);
    const summary = JSON.parse(out) as { requests: number; policies: Array<{ admitted: number }> };
    expect(summary.requests).toBe(600);
    expect(summary.policies[0]?.admitted).toBe(300);
    expect(run(bin, ['--version'], project).trim()).toBe(manifest.version);
  });
});
