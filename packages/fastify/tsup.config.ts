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
  external: ['@sluice/core', 'fastify'],
  // As Fastify plugins do: `require('@sluice/fastify')` is the plugin itself (with `.default`,
  // `.sluice` and `.RateLimit`), so `fastify.register(require('@sluice/fastify'))` keeps the
  // fastify-plugin marks that let its hooks reach the routes of the instance it is registered on.
  footer: ({ format }) =>
    format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.default, module.exports);' } : {},
});
