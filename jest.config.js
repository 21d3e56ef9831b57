/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/examples', '<rootDir>/bench'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    // Type checking is done once by `pnpm typecheck`; here ts-jest only transpiles (fast).
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
  moduleNameMapper: {
    '^@sluice/(core|express|koa|fastify|metrics)$': '<rootDir>/packages/$1/src/index.ts',
  },
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/jest.summary-reporter.js'],
};
