import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, type CodeBlock } from './markdown';

/**
 * Where a documented import is found: `@sluice/*` in the sources (the repository's `paths`), the
 * frameworks and clients in the workspace packages that depend on them, first match wins.
 */
const PACKAGE_DIRS = ['packages/adapter-contract', 'packages/metrics', 'packages/nestjs', 'packages/core'];

/** Compiler options of a user's strict project; Nest's examples with Nest's legacy decorators. */
function optionsFor(legacyDecorators: boolean): ts.CompilerOptions {
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const paths = (config as { compilerOptions: { paths: ts.MapLike<string[]> } }).compilerOptions.paths;
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // Each block is a module of its own (top-level await, no names shared between blocks).
    moduleDetection: ts.ModuleDetectionKind.Force,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    baseUrl: ROOT,
    paths,
    experimentalDecorators: legacyDecorators,
    emitDecoratorMetadata: legacyDecorators,
  };
}

/** A block as the file the compiler reads: its prelude, then its code. */
interface BlockFile {
  readonly block: CodeBlock;
  readonly path: string;
  readonly text: string;
  /** Lines of prelude before the block's first line. */
  readonly preludeLines: number;
}

/** Declarations parsed once for every program of the run (the frameworks', the sources). */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** Nest's decorators are the legacy ones: blocks using Nest are checked with them. */
const usesNest = (file: BlockFile) => /from '@(?:nestjs|sluice\/nestjs)/.test(file.text);

/**
 * Type-checks the blocks as a user's strict project would, each block a module of its own; `ts`
 * blocks marked `docs-test: skip` are left out. Returns one line per error, at its place in the
 * Markdown (`README.md:412:7 TS2304 Cannot find name 'app'.`).
 */
export function typeCheckBlocks(blocks: readonly CodeBlock[]): string[] {
  const files: BlockFile[] = blocks
    .filter((block) => block.directive?.kind !== 'skip')
    .map((block) => {
      const prelude = block.directive?.kind === 'prelude' ? `${block.directive.text}\n` : '';
      return {
        block,
        path: join(ROOT, `${block.file}.${block.line}.docs.ts`),
        text: prelude + block.code,
        preludeLines: prelude === '' ? 0 : prelude.split('\n').length - 1,
      };
    });
  const byPath = new Map(files.map((file) => [file.path, file]));
  const errors: string[] = [];
  for (const legacy of [false, true]) {
    const group = files.filter((file) => usesNest(file) === legacy);
    if (group.length === 0) continue;
    const options = optionsFor(legacy);
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    host.fileExists = (path) => byPath.has(path) || ts.sys.fileExists(path);
    host.readFile = (path) => byPath.get(path)?.text ?? readFile(path);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (path, language) => {
      if (byPath.has(path)) return ts.createSourceFile(path, byPath.get(path)?.text ?? '', language, true);
      if (!parsed.has(path)) parsed.set(path, getSourceFile(path, language));
      return parsed.get(path);
    };
    host.resolveModuleNames = (names, containing) =>
      names.map((name) => resolveModule(name, containing, options, host));
    const program = ts.createProgram({ rootNames: group.map((file) => file.path), options, host });
    // The blocks' own errors: the sources they import are checked by `pnpm typecheck`.
    for (const file of group) {
      const source = program.getSourceFile(file.path) as ts.SourceFile;
      const diagnostics = [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ];
      for (const diagnostic of diagnostics) errors.push(describe(diagnostic, byPath));
    }
    errors.push(...program.getOptionsDiagnostics().map((d) => describe(d, byPath)));
  }
  return errors;
}

/** Resolves as from the block's own place, else from the packages that depend on the module. */
function resolveModule(
  name: string,
  containing: string,
  options: ts.CompilerOptions,
  host: ts.ModuleResolutionHost,
): ts.ResolvedModule | undefined {
  const here = ts.resolveModuleName(name, containing, options, host).resolvedModule;
  if (here !== undefined || name.startsWith('.')) return here;
  for (const dir of PACKAGE_DIRS) {
    const from = join(ROOT, dir, 'docs-block.ts');
    if (!existsSync(join(ROOT, dir))) continue;
    const found = ts.resolveModuleName(name, from, options, host).resolvedModule;
    if (found !== undefined) return found;
  }
  return undefined;
}

function describe(diagnostic: ts.Diagnostic, files: ReadonlyMap<string, BlockFile>): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  const source = diagnostic.file;
  if (source === undefined || diagnostic.start === undefined) return `TS${diagnostic.code} ${message}`;
  const { line, character } = source.getLineAndCharacterOfPosition(diagnostic.start);
  const file = files.get(source.fileName);
  if (file === undefined)
    return `${source.fileName}:${line + 1}:${character + 1} TS${diagnostic.code} ${message}`;
  const { block, preludeLines } = file;
  const where =
    line < preludeLines
      ? `${block.file}:${(block.directive?.line ?? 0) + 1 + line} (prelude)`
      : `${block.file}:${block.line + line - preludeLines}:${character + 1}`;
  return `${where} TS${diagnostic.code} ${message}`;
}
