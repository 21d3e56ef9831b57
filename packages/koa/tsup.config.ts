import { defineConfig } from 'tsup';

// One bundle per format: ESM (.mjs) and CJS (.cjs), each with its own declaration file,
// so `import` and `require` both resolve types that match the code they load.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  tsconfig: 'tsconfig.json',
  external: ['@sluice/core', 'koa'],
});
