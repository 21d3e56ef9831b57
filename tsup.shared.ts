import type { Options } from 'tsup';

/**
 * The build every package shares: one bundle per format, ESM (.mjs) and CJS (.cjs), each with
 * its own declaration file, so `import` and `require` both resolve types that match the code.
 *
 * @param external - packages left as imports (peers and the core)
 */
export function packageBuild(external: string[]): Options {
  return {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
    // `@internal` members (symbol-keyed fast paths, constructors users never call) stay out of
    // the published declarations, so no public type names a module-private one.
    dts: { compilerOptions: { stripInternal: true } },
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    tsconfig: 'tsconfig.json',
    external,
  };
}
