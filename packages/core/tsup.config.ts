import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared';

export default defineConfig({
  ...packageBuild(['ioredis']),
  // Two entries, `@sluice/core` and `@sluice/core/adapter`, over one copy of the code: shared
  // modules go to chunks in both formats (tsup splits only ESM by default), so a class or a
  // module's state is the same object whichever entry reached it (`instanceof SluiceConfigError`
  // holds for an error an adapter threw).
  entry: { index: 'src/index.ts', adapter: 'src/adapter.ts' },
  splitting: true,
  // Rollup splits the CommonJS build. Without it tsup converts the ESM chunks with sucrase, which
  // also lowers the syntax Node 20 runs natively: every `?.` an array-allocating helper call,
  // every `??` a closure, every class field an init method (1.3 × the Redis path's decisions/s).
  treeshake: true,
});
