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
  treeshake: true,
});
