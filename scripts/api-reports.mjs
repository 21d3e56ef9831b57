// The API report of every published entry point (@microsoft/api-extractor): `etc/<name>.api.md`
// in each package, committed, so a change of a public name shows up in review.
//
//   node scripts/api-reports.mjs            checks: fails when a report is stale (`pnpm test`)
//   node scripts/api-reports.mjs --update   rewrites the reports (`pnpm api:update` builds first)
//   --only <package name>                   one package's entry points
//   --reports <dir>                         the reports of package folder <f> in <dir>/<f>, not
//                                           packages/<f>/etc (the test of a stale report uses it)
//
// It reads the built declarations (dist/*.d.ts, what users get), so the packages must be built.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import apiExtractor from '@microsoft/api-extractor';

const { CompilerState, Extractor, ExtractorConfig } = apiExtractor;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const UPDATE_COMMAND = 'pnpm api:update';

/**
 * Every entry point of every published package, each package's main entry first: its
 * declarations (the `require` types of each `exports` key) and its report's name (`core`,
 * `core-adapter`, `express`, …).
 */
function entryPoints() {
  const entries = [];
  for (const folder of readdirSync(join(ROOT, 'packages')).sort()) {
    const dir = join(ROOT, 'packages', folder);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (manifest.private) continue;
    const unscoped = manifest.name.replace(/^@[^/]+\//, '');
    const subpaths = Object.entries(manifest.exports ?? { '.': { require: { types: manifest.types } } })
      .filter(([subpath, target]) => subpath !== './package.json' && target?.require?.types !== undefined)
      .sort(([a], [b]) => (a === '.' ? -1 : b === '.' ? 1 : a.localeCompare(b)));
    for (const [subpath, target] of subpaths) {
      const rest = subpath.slice(2);
      entries.push({
        packageName: manifest.name,
        name: rest === '' ? manifest.name : `${manifest.name}/${rest}`,
        dir,
        declarations: join(dir, target.require.types),
        report: rest === '' ? unscoped : `${unscoped}-${rest.replaceAll('/', '-')}`,
      });
    }
  }
  return entries;
}

/** The newest modification time of the files under a folder (ms). */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** API Extractor's configuration for one entry point. */
function configOf(entry, reportFolder, temp) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: entry.dir,
      mainEntryPointFilePath: entry.declarations,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'es2022',
            lib: ['es2022'],
            module: 'node16',
            moduleResolution: 'node16',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: [entry.declarations],
        },
      },
      apiReport: { enabled: true, reportFileName: entry.report, reportFolder, reportTempFolder: temp },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // sluice marks no release stages (@public, @beta): everything exported is public.
          'ae-missing-release-tag': { logLevel: 'none' },
          // Fields documented by their interface's comment, and {@link}s to names that are not
          // exported (an internal helper, a subpath's name): editors resolve those in scope,
          // and the reports carry no comments.
          'ae-undocumented': { logLevel: 'none' },
          'ae-unresolved-link': { logLevel: 'none' },
        },
        // The comments are Markdown as editors render it (code spans across lines, a bare `>=`),
        // which TSDoc's stricter grammar flags; the reports carry no comments.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(entry.dir, 'package.json'),
  });
}

/** The symbol a message is about (`ae-forgotten-export`: 'The symbol "Decision" needs …'). */
const symbolOf = (message) => /The symbol "([^"]+)"/.exec(message.text)?.[1];

/** The names a report declares as exported (`export function createLimiter…`, `export { … }`). */
function exportedNames(reportFile) {
  const text = readFileSync(reportFile, 'utf8');
  const names = new Set();
  const declaration =
    /^export (?:declare )?(?:abstract )?(?:class|const|function|interface|type|enum|namespace|let|var) (\w+)/gm;
  for (const [, name] of text.matchAll(declaration)) names.add(name);
  for (const [, list] of text.matchAll(/^export \{([^}]*)\}/gm))
    for (const part of list.split(','))
      names.add(
        part
          .trim()
          .split(/\s+as\s+/)
          .pop(),
      );
  return names;
}

/**
 * Runs API Extractor on one entry point: writes its report into `temp`, or over the committed one
 * when `update`. Returns whether the report changed, and the messages worth failing for. A
 * subpath's API may use what its package's main entry exports (`@sluice/core/adapter`'s functions
 * take `Decision`s): those names are public, not forgotten (`publicElsewhere`).
 */
function extract(config, update, publicElsewhere, compilerState) {
  const problems = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    messageCallback(message) {
      message.handled = true;
      if (['none', 'verbose', 'info'].includes(message.logLevel)) return;
      // The report's own state is told once, below, with the command that mends it.
      if (message.messageId.startsWith('console-api-report-')) return;
      if (message.messageId === 'ae-forgotten-export' && publicElsewhere.has(symbolOf(message))) return;
      const where = message.sourceFilePath
        ? ` (${relative(ROOT, message.sourceFilePath)}:${message.sourceFileLine})`
        : '';
      problems.push(`${message.messageId}: ${message.text}${where}`);
    },
  });
  // (Its warning count includes the forgotten exports let through above: errors only.)
  if (problems.length === 0 && result.errorCount > 0)
    problems.push(`API Extractor failed (${result.errorCount} errors)`);
  return { changed: result.apiReportChanged, problems };
}

/** What changed, as `diff -u` shows it (the committed report first). */
function diff(committed, written) {
  if (!existsSync(committed)) return `(no committed report: ${relative(ROOT, committed)} is missing)`;
  try {
    execFileSync('diff', ['-u', committed, written], { encoding: 'utf8' });
    return '';
  } catch (error) {
    return error.stdout || String(error);
  }
}

function option(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

function main() {
  const update = process.argv.includes('--update');
  const only = option('--only');
  const reports = option('--reports');
  const entries = entryPoints().filter((e) => only === undefined || e.packageName === only);
  if (entries.length === 0) throw new Error(`no published package named ${only}`);
  const unbuilt = entries.filter(
    (e) => !existsSync(e.declarations) || statSync(e.declarations).mtimeMs < newest(join(e.dir, 'src')),
  );
  if (unbuilt.length > 0) {
    console.error(
      `not built, or built before the last change of its sources: ${unbuilt.map((e) => e.name).join(', ')}\n` +
        'run `pnpm build` first (`pnpm test` and `pnpm api:update` do)',
    );
    process.exit(1);
  }
  const temp = mkdtempSync(join(tmpdir(), 'sluice-api-reports-'));
  const stale = [];
  const problems = [];
  try {
    const folderOf = (entry) => (reports ? join(reports, basename(entry.dir)) : join(entry.dir, 'etc'));
    // One TypeScript program over every entry point's declarations, shared by all runs.
    const compilerState = CompilerState.create(configOf(entries[0], folderOf(entries[0]), temp), {
      additionalEntryPoints: entries.map((e) => e.declarations),
    });
    const mainNames = new Map();
    for (const entry of entries) {
      const folder = folderOf(entry);
      if (update) mkdirSync(folder, { recursive: true });
      const known = mainNames.get(entry.packageName) ?? new Set();
      const config = configOf(entry, folder, temp);
      const result = extract(config, update, known, compilerState);
      const committed = join(folder, `${entry.report}.api.md`);
      const written = update || !result.changed ? committed : join(temp, `${entry.report}.api.md`);
      if (!mainNames.has(entry.packageName)) mainNames.set(entry.packageName, exportedNames(written));
      if (update) console.log(`${result.changed ? 'updated' : 'unchanged'} ${relative(ROOT, committed)}`);
      else if (result.changed)
        stale.push(`${relative(ROOT, committed)} is stale:\n${diff(committed, written)}`);
      if (result.problems.length > 0)
        problems.push(`${entry.name}: API Extractor reports\n  ${result.problems.join('\n  ')}`);
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  if (stale.length > 0)
    console.error(
      `${stale.join('\n')}\nThe public API changed. If that is intended, run \`${UPDATE_COMMAND}\` ` +
        'and commit the etc/*.api.md files it rewrites.\n',
    );
  if (problems.length > 0)
    console.error(
      `${problems.join('\n\n')}\nAn exported API names a type its package does not export: export it ` +
        '(or keep the API from naming it), then run `' +
        UPDATE_COMMAND +
        '`.',
    );
  if (stale.length > 0 || problems.length > 0) process.exit(1);
  if (!update) console.log(`${entries.length} API reports up to date`);
}

main();
