const ROOT = __dirname;

/** What every project shares: Node, sources transpiled by ts-jest, `@sluice/*` mapped to `src`. */
const shared = {
  rootDir: ROOT,
  testEnvironment: 'node',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    // Type checking is done once by `pnpm typecheck`; here ts-jest only transpiles (fast).
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
  moduleNameMapper: {
    '^@sluice/(core|express|koa|fastify|hono|metrics|nestjs)$': '<rootDir>/packages/$1/src/index.ts',
    '^@sluice/core/adapter$': '<rootDir>/packages/core/src/adapter.ts',
  },
};

/** The NestJS tests: their own project per Nest major. */
const NEST_TESTS = [
  '<rootDir>/packages/nestjs/test/**/*.test.ts',
  '<rootDir>/packages/adapter-contract/test/nest-*.test.ts',
];

/**
 * One NestJS major: Nest's packages come from `dir` (Nest 12 from packages/nestjs, Nest 11 from
 * packages/adapter-contract, each installed under its own names so Nest's packages find each
 * other as peers), whoever requires them. The package's tests and the example app are written as
 * Nest users write them, with TypeScript's legacy decorators.
 */
function nestProject(major, dir, { extraTests = [], ignore = [] } = {}) {
  return {
    ...shared,
    displayName: `nestjs ${major}`,
    testMatch: [...NEST_TESTS, ...extraTests],
    testPathIgnorePatterns: [...shared.testPathIgnorePatterns, ...ignore],
    transform: {
      // One ts-jest configuration per project: ts-jest keeps one compiler per jest project, so
      // every TypeScript file here is compiled with legacy decorators (the rest of the repo
      // declares no decorator a Nest test runs; nest-drivers.ts applies Nest's as functions).
      '^.+\\.ts$': [
        'ts-jest',
        { tsconfig: '<rootDir>/packages/nestjs/tsconfig.test.json', diagnostics: false },
      ],
      // Nest 12 is published as ES modules only, which jest cannot require on Node 20: its files
      // (only those) are compiled to CommonJS, unchanged otherwise.
      '^.+\\.js$': [
        'babel-jest',
        {
          babelrc: false,
          configFile: false,
          plugins: [
            'babel-plugin-transform-import-meta',
            '@babel/plugin-transform-dynamic-import',
            '@babel/plugin-transform-modules-commonjs',
          ],
        },
      ],
    },
    transformIgnorePatterns: [
      '^(?!.*/\\.pnpm/@nestjs\\+[a-z-]+@12[^/]*/node_modules/@nestjs/).*/node_modules/',
    ],
    moduleNameMapper: {
      ...shared.moduleNameMapper,
      '^@nestjs/(common|core|platform-express|platform-fastify)(/.*)?$': `<rootDir>/${dir}/node_modules/@nestjs/$1$2`,
    },
  };
}

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/jest.summary-reporter.js'],
  projects: [
    {
      ...shared,
      displayName: 'sluice',
      roots: ['<rootDir>/packages', '<rootDir>/examples', '<rootDir>/bench', '<rootDir>/scripts'],
      testMatch: ['**/test/**/*.test.ts'],
      testPathIgnorePatterns: [
        ...shared.testPathIgnorePatterns,
        '/packages/nestjs/',
        '/examples/nestjs/',
        '/packages/adapter-contract/test/nest-[^/]*\\.test\\.ts$',
      ],
    },
    nestProject(12, 'packages/nestjs', { extraTests: ['<rootDir>/examples/nestjs/test/**/*.test.ts'] }),
    // The built package resolves Nest from packages/nestjs (12): that test is Nest 12's alone.
    nestProject(11, 'packages/adapter-contract', {
      ignore: ['/packages/nestjs/test/refusals-memory\\.test\\.ts$'],
    }),
  ],
};
