import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * No two source files of a package import each other, directly or round a longer loop (STYLE's
 * "one side of each pair should own the shared type"): a cycle makes the load order decide what
 * an import holds, and the layers stop reading one way. Type-only imports count too.
 */
const PACKAGES = resolve(__dirname, '../../..');

function sourcesOf(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourcesOf(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The package's own files that `file` imports (relative imports only). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => {
      const base = resolve(dirname(file), name);
      return [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
    })
    .filter((path): path is string => path !== undefined);
}

/** Every cycle found by a depth-first walk, each as its files from the package's `src`. */
function cyclesIn(src: string): string[][] {
  const graph = new Map(sourcesOf(src).map((file) => [file, importsOf(file)]));
  const done = new Set<string>();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      cycles.push([...path.slice(at), file].map((f) => relative(src, f)));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return cycles;
}

const packages = readdirSync(PACKAGES).filter((name) => existsSync(join(PACKAGES, name, 'src')));

it('finds the packages and their imports', () => {
  expect(packages).toEqual(expect.arrayContaining(['core', 'express', 'koa', 'fastify', 'nestjs']));
  const src = join(PACKAGES, 'core', 'src');
  expect(importsOf(join(src, 'http', 'http-limiter.ts'))).toContain(join(src, 'http', 'user-callbacks.ts'));
});

it('finds a cycle when there is one', () => {
  // The walk itself, on a loop it must report: a.ts → b.ts → a.ts.
  const fixture = join(__dirname, 'import-cycle-fixture');
  expect(cyclesIn(fixture)).toEqual([['a.ts', 'b.ts', 'a.ts']]);
});

it.each(packages)('%s: no import cycles', (name) => {
  expect(cyclesIn(join(PACKAGES, name, 'src'))).toEqual([]);
});
