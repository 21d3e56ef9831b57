import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Adapters, the metrics and the CLI talk to core only through its published entry points
    // (`@sluice/core` and `@sluice/core/adapter`), never its internals.
    files: [
      'packages/express/**/*.ts',
      'packages/koa/**/*.ts',
      'packages/fastify/**/*.ts',
      'packages/hono/**/*.ts',
      'packages/cli/**/*.ts',
      'packages/nestjs/**/*.ts',
      'packages/metrics/src/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@sluice/core/*', '!@sluice/core/adapter', '../../core/*', '../core/*'],
              message: 'Import from @sluice/core or @sluice/core/adapter only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
