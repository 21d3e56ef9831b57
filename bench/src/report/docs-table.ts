import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpRow } from '../http/http';
import { machineLine } from '../machine';
import { sectionTables } from './markdown';
import { overloadRegions } from './overload-regions';
import type { OverloadResults, Results } from './results';

/**
 * The documents whose figures come from `bench/results/latest.json`, relative to the repository
 * root. Each holds regions `<!-- bench:<name> -->` … `<!-- /bench:<name> -->` that
 * `pnpm docs:bench` rewrites and a test keeps in step with the results: a figure in the docs is
 * always the latest full run's, never typed by hand.
 */
export const DOC_FILES = [
  'README.md',
  'docs/benchmarks.md',
  'docs/redis-and-scaling.md',
  'docs/overload.md',
] as const;

const n = (value: number): string => Math.round(value).toLocaleString('en').replace(/,/g, ' ');
const x = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const times = (value: number): string => `${x(value)} ×`;

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** Looks a figure up, or says which one the results lack (a partial run cannot feed the docs). */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`bench results lack ${what}: the docs need a full run`);
  return value;
}

function httpRow(results: Results, framework: string, store: string, path: string, limiter: string): HttpRow {
  const rows = need(results.http, 'the http section').rows;
  return need(
    rows.find(
      (r) => r.framework === framework && r.store === store && r.path === path && r.limiter === limiter,
    ),
    `the http row ${framework} ${store} ${path} ${limiter}`,
  );
}

/** sluice beside one peer on one HTTP path: both as × bare (interleaved), and their quotient. */
function httpPair(results: Results, framework: string, store: string, path: string) {
  const sluice = httpRow(results, framework, store, path, 'sluice');
  const peer = httpRow(results, framework, store, path, 'usual');
  return { sluice: sluice.ratio, peer: peer.ratio, name: peer.name, of: sluice.ratio / peer.ratio };
}

function microRow(results: Results, id: string, scenario: 'one hot key' | 'many keys') {
  const rows = need(results.micro, 'the micro section').rows;
  return need(
    rows.find((r) => r.id === id && r.scenario === scenario),
    `the micro row ${id} (${scenario})`,
  );
}

function redisRow(results: Results, id: string, inFlight: number) {
  const rows = need(results.redis, 'the redis section').rows;
  return need(
    rows.find((r) => r.id === id && r.inFlight === inFlight),
    `the redis row ${id} at ${inFlight} in flight`,
  );
}

function memoryRow(results: Results, id: string) {
  const rows = need(results.memory, 'the memory section').rows;
  return need(
    rows.find((r) => r.id === id),
    `the memory row ${id}`,
  );
}

/** Where and when the run was taken. */
function runLine(results: Results): string[] {
  const minutes = Math.floor(results.durationSeconds / 60);
  const seconds = Math.round(results.durationSeconds % 60);
  return [
    `Latest full run: ${machineLine(results.machine)}; ${results.date.slice(0, 10)}, ${minutes} min ${seconds} s.`,
  ];
}

/** The short comparison the README shows: sluice ÷ each peer, on the paths users meet first. */
function peersShort(results: Results): string[] {
  const erl = httpPair(results, 'express', 'memory', 'admitted');
  const erlRedis = httpPair(results, 'express', 'redis', 'admitted');
  const fastify = httpPair(results, 'fastify', 'memory', 'admitted');
  const fastifyRedis = httpPair(results, 'fastify', 'redis', 'admitted');
  const hot = microRow(results, 'sluice:gcra', 'one hot key');
  const rlfHot = microRow(results, 'rate-limiter-flexible', 'one hot key');
  const at256 = redisRow(results, 'sluice:gcra', 256);
  const at1 = redisRow(results, 'sluice:gcra', 1);
  return table(
    ['sluice against', 'measured', 'sluice ÷ peer'],
    [
      [
        'express-rate-limit',
        'Express requests/s: in memory; with Redis',
        `${times(erl.of)}; ${times(erlRedis.of)}`,
      ],
      [
        '@fastify/rate-limit',
        'Fastify requests/s: in memory; with Redis',
        `${times(fastify.of)}; ${times(fastifyRedis.of)}`,
      ],
      [
        'rate-limiter-flexible',
        'decisions/s: in memory; Redis at 256 and at 1 in flight',
        `${times(hot.ofFloor / rlfHot.ofFloor)}; ${times(at256.ofRlf)} and ${times(at1.ofRlf)}`,
      ],
    ],
  );
}

/** Every comparison with a peer the run measured, each figure beside what it was divided by. */
function peers(results: Results): string[] {
  const rows: string[][] = [];
  for (const [framework, label] of [
    ['express', 'Express'],
    ['koa', 'Koa'],
    ['fastify', 'Fastify'],
  ] as const) {
    for (const [store, path, what] of [
      ['memory', 'admitted', 'in memory, admitted'],
      ['memory', '429', 'in memory, 429'],
      ['redis', 'admitted', 'Redis, admitted'],
    ] as const) {
      const pair = httpPair(results, framework, store, path);
      rows.push([
        pair.name,
        `${label} requests/s × bare, ${what}`,
        x(pair.sluice, 3),
        x(pair.peer, 3),
        times(pair.of),
      ]);
    }
  }
  const hot = microRow(results, 'sluice:gcra', 'one hot key');
  const many = microRow(results, 'sluice:gcra', 'many keys');
  for (const [id, name] of [
    ['rate-limiter-flexible', 'rate-limiter-flexible RateLimiterMemory'],
    ['express-rate-limit', 'express-rate-limit MemoryStore'],
  ] as const) {
    const peerHot = microRow(results, id, 'one hot key');
    const peerMany = microRow(results, id, 'many keys');
    rows.push([
      name,
      '`consume` × plain `Map`, one hot key',
      x(hot.ofFloor),
      x(peerHot.ofFloor),
      times(hot.ofFloor / peerHot.ofFloor),
    ]);
    rows.push([
      name,
      `\`consume\` × plain \`Map\`, ${n(need(results.micro, 'micro').keys)} keys`,
      x(many.ofFloor),
      x(peerMany.ofFloor),
      times(many.ofFloor / peerMany.ofFloor),
    ]);
  }
  const own = memoryRow(results, 'sluice:gcra');
  for (const id of ['rate-limiter-flexible', 'express-rate-limit', '@fastify/rate-limit', 'koa-ratelimit']) {
    const peer = memoryRow(results, id);
    rows.push([
      peer.candidate,
      'heap bytes per key (fewer is better)',
      x(own.bytesPerKey, 1),
      x(peer.bytesPerKey, 1),
      times(own.bytesPerKey / peer.bytesPerKey),
    ]);
  }
  for (const inFlight of [1, 256]) {
    const sluice = redisRow(results, 'sluice:gcra', inFlight);
    const rlf = redisRow(results, 'rate-limiter-flexible', inFlight);
    rows.push([
      rlf.candidate,
      `Redis decisions/s, ${inFlight} in flight`,
      n(sluice.perSecond),
      n(rlf.perSecond),
      times(sluice.ofRlf),
    ]);
    const rlr = redisRow(results, 'rate-limit-redis', inFlight);
    rows.push([
      rlr.candidate,
      `Redis decisions/s, ${inFlight} in flight`,
      n(sluice.perSecond),
      n(rlr.perSecond),
      times(sluice.ofRlf / rlr.ofRlf),
    ]);
  }
  return table(['peer', 'measured', 'sluice', 'peer', 'sluice ÷ peer'], rows);
}

/** What batching buys on Redis: gcra at 256 in flight with and without, and per decision in Redis. */
function batching(results: Results): string[] {
  const redis = need(results.redis, 'the redis section');
  const on = redisRow(results, 'sluice:gcra', 256);
  const off = redisRow(results, 'sluice:gcra:unbatched', 256);
  const rlf = redisRow(results, 'rate-limiter-flexible', 256);
  const incr = redisRow(results, 'incr', 256);
  const sent = need(
    redis.counts.find((c) => c.id === 'sluice:gcra' && c.scenario === 'admitted'),
    'the command count of sluice gcra',
  );
  const size = (maxSize: number) =>
    need(
      redis.batching.sizes.find((s) => s.algorithm === 'gcra' && s.maxSize === maxSize),
      `the gcra batch of ${maxSize}`,
    );
  const instructions = (name: string) =>
    redis.batching.instructions?.find((i) => i.name === name)?.perDecision;
  const alone = instructions('gcra admitted');
  const batched = instructions('gcra b64 state');
  return [
    ...table(
      ['at 256 decisions in flight', 'decisions/s', '× batch: false'],
      [
        ['batching on (the default)', n(on.perSecond), times(on.perSecond / off.perSecond)],
        ['`batch: false`', n(off.perSecond), times(1)],
        [rlf.candidate, n(rlf.perSecond), times(rlf.perSecond / off.perSecond)],
        [
          'one bare `INCR` per request (no limiter)',
          n(incr.perSecond),
          times(incr.perSecond / off.perSecond),
        ],
      ],
    ),
    '',
    `With batching, gcra sent ${x(sent.sentPerDecision, 3)} script calls per decision (one per ${x(1 / sent.sentPerDecision, 0)} decisions); ` +
      `Redis spent ${x(size(64).usecPerDecision)} µs per decision in batches of up to 64 against ${x(size(1).usecPerDecision)} µs alone` +
      (alone !== undefined && batched !== undefined
        ? ` (${x(batched / 1000, 1)} k instructions against ${x(alone / 1000, 1)} k).`
        : '.'),
  ];
}

/**
 * The markdown of every region, by name; the overload section's from its own results file
 * (`bench/results/overload.json`), when given.
 */
export function docRegions(
  results: Results,
  overload?: OverloadResults,
): Readonly<Record<string, readonly string[]>> {
  return {
    ...(overload === undefined ? {} : overloadRegions(overload)),
    run: runLine(results),
    'peers-short': peersShort(results),
    peers: peers(results),
    batching: batching(results),
    // The overload section has regions of its own (`overload-tables`, from overload.json).
    tables: sectionTables({ ...results, overload: undefined }).map((line) => line.replace(/^## /, '### ')),
  };
}

/**
 * Replaces each region of `text` with its markdown.
 * @throws when a region is unknown or not closed, so a typo in a marker never goes stale silently
 */
export function fillRegions(
  text: string,
  regions: Readonly<Record<string, readonly string[]>>,
  file: string,
): string {
  let filled = 0;
  const result = text.replace(
    /^<!-- bench:([a-z-]+) -->\n[\s\S]*?^<!-- \/bench:([a-z-]+) -->$/gm,
    (_match, open: string, close: string) => {
      if (open !== close) throw new Error(`${file}: region bench:${open} is closed by /bench:${close}`);
      const lines = regions[open];
      if (lines === undefined) throw new Error(`${file}: unknown region bench:${open}`);
      filled++;
      return [`<!-- bench:${open} -->`, '', ...lines, '', `<!-- /bench:${open} -->`].join('\n');
    },
  );
  const opened = text.match(/^<!-- bench:[a-z-]+ -->$/gm)?.length ?? 0;
  if (opened !== filled) throw new Error(`${file}: ${opened - filled} bench region(s) not closed`);
  return result;
}

/**
 * A region's markdown with the layout Prettier chooses taken out (the padding of table cells and
 * of their separator rows, blank lines), so what it says can be compared with what the results
 * say, however it was formatted.
 */
export function normalized(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) =>
      line.startsWith('|')
        ? line
            .split('|')
            .map((cell) => cell.trim().replace(/^(:?)-+(:?)$/, '$1---$2'))
            .join('|')
        : line,
    )
    .join('\n');
}

/** The regions of a document whose text says something else than `results`: none when it is up to date. */
export function staleRegions(
  text: string,
  results: Results,
  file: string,
  overload?: OverloadResults,
): string[] {
  const regions = docRegions(results, overload);
  const stale: string[] = [];
  let seen = 0;
  for (const match of text.matchAll(/^<!-- bench:([a-z-]+) -->\n([\s\S]*?)^<!-- \/bench:\1 -->$/gm)) {
    seen++;
    const name = match[1] ?? '';
    const lines = regions[name];
    if (lines === undefined) throw new Error(`${file}: unknown region bench:${name}`);
    if (normalized(match[2] ?? '') !== normalized(lines.join('\n'))) stale.push(name);
  }
  const opened = text.match(/^<!-- bench:[a-z-]+ -->$/gm)?.length ?? 0;
  if (opened !== seen) throw new Error(`${file}: ${opened - seen} bench region(s) not closed`);
  return stale;
}

/** Reads `bench/results/overload.json`, the overload section's latest full-size run. */
export async function latestOverload(root: string): Promise<OverloadResults> {
  return JSON.parse(await readFile(join(root, 'bench/results/overload.json'), 'utf8')) as OverloadResults;
}

/** Reads `bench/results/latest.json`. */
export async function latestResults(root: string): Promise<Results> {
  return JSON.parse(await readFile(join(root, 'bench/results/latest.json'), 'utf8')) as Results;
}
