import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared';

// The library as every package builds it, plus the `sluice` command (`src/bin.ts`): tsup keeps
// its hashbang and marks the output executable, so `npx sluice` runs `dist/bin.cjs` on Node 20.
export default defineConfig({
  ...packageBuild(['@sluice/core']),
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  // `--version` reads ../package.json through __dirname, which the ESM build needs shimmed.
  shims: true,
});
