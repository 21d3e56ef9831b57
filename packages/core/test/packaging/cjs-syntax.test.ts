import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packed-install';

/**
 * The CommonJS build runs the syntax Node 20 runs natively, as the ESM build does: no helper
 * standing for `?.` (an array per call), `??` (a closure per call) or class fields, as a
 * transpiling pass would write. Needs the packages built (`pnpm test` builds first).
 */
test("@sluice/core's CommonJS files keep ?., ?? and class fields as written", () => {
  const dist = join(ROOT, 'packages', 'core', 'dist');
  const files = readdirSync(dist).filter((file) => file.endsWith('.cjs'));
  expect(files).toEqual(expect.arrayContaining(['index.cjs', 'adapter.cjs']));
  for (const file of files) {
    const code = readFileSync(join(dist, file), 'utf8');
    expect({ file, helpers: code.match(/\b(_optionalChain|_nullishCoalesce|__init\d*)\(/g) }).toEqual({
      file,
      helpers: null,
    });
  }
});
