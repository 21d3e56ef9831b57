import { machineLine } from '../machine';
import type { ClientsResult } from '../redis/clients';
import type { RedisRow } from '../redis/redis';
import { overloadTables } from '../overload/overload-markdown';
import type { Results } from './results';

const n = (value: number): string => Math.round(value).toLocaleString('en');
const x = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** How the instructions table names the cases of `redis/instructions.ts`. */
const INSTRUCTION_CASES: Readonly<Record<string, string>> = {
  'gcra admitted': 'sluice gcra, one decision alone (batch: false or 1 in flight)',
  'rlf admitted': 'rate-limiter-flexible RateLimiterRedis, one decision',
  'gcra b64 fresh': 'sluice gcra, batch of 64, keys never seen',
  'gcra b64 state': 'sluice gcra, batch of 64, keys each holding a state of its own',
  'gcra b64 shared': 'sluice gcra, batch of 64, keys holding one same state',
  'gcra b64 hot': 'sluice gcra, batch of 64, one hot key',
};

function table(
  head: readonly string[],
  align: readonly ('l' | 'r')[],
  rows: ReadonlyArray<readonly string[]>,
): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${align.map((a) => (a === 'r' ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

function notes(list: readonly string[]): string[] {
  return list.length === 0 ? [] : ['', ...list.map((note) => `- ${note}`)];
}

function microSection(results: Results): string[] {
  const micro = results.micro;
  if (micro === undefined) return [];
  const candidates = [...new Set(micro.rows.map((row) => row.id))];
  const cell = (id: string, scenario: string) =>
    micro.rows.find((r) => r.id === id && r.scenario === scenario);
  return [
    '',
    `## Micro: decisions/s of \`consume\`, in-process (median of ${micro.rounds} rounds × ${micro.ms} ms, interleaved)`,
    '',
    ...table(
      ['candidate', 'one hot key', '× floor', `${n(micro.keys)} keys`, '× floor'],
      ['l', 'r', 'r', 'r', 'r'],
      candidates.map((id) => {
        const hot = cell(id, 'one hot key');
        const many = cell(id, 'many keys');
        return [
          hot?.candidate ?? many?.candidate ?? id,
          hot === undefined ? '' : n(hot.perSecond),
          hot === undefined ? '' : x(hot.ofFloor),
          many === undefined ? '' : n(many.perSecond),
          many === undefined ? '' : x(many.ofFloor),
        ];
      }),
    ),
    ...notes(micro.notes),
  ];
}

function memorySection(results: Results): string[] {
  const memory = results.memory;
  if (memory === undefined) return [];
  return [
    '',
    `## Memory: heap per key after ${n(memory.keys)} distinct keys (one process each, --expose-gc)`,
    '',
    ...table(
      ['candidate', 'bytes/key', '× plain Map', 'keys held'],
      ['l', 'r', 'r', 'r'],
      memory.rows.map((row) => [
        row.candidate,
        x(row.bytesPerKey, 1),
        x(row.ofMap),
        row.held === null ? '' : n(row.held),
      ]),
    ),
    ...notes(memory.notes),
  ];
}

function httpSection(results: Results): string[] {
  const http = results.http;
  if (http === undefined) return [];
  return [
    '',
    `## HTTP: requests/s and p99, limited ÷ bare (median of ${http.rounds} rounds, B L B L … interleaved)`,
    '',
    ...table(
      ['framework', 'bare req/s', 'bare p99 ms', 'server CPU', 'load-generator CPU'],
      ['l', 'r', 'r', 'r', 'r'],
      http.bare.map((b) => [b.framework, n(b.rps), x(b.p99Ms, 0), x(b.serverCpu), x(b.loadCpu)]),
    ),
    '',
    ...table(
      [
        'framework',
        'store',
        'path',
        'limiter',
        'req/s',
        '× bare',
        'p99 ms (bare)',
        'right status',
        'without store',
      ],
      ['l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r'],
      http.rows.map((row) => [
        row.framework,
        row.store,
        row.path,
        row.limiter === 'usual' || row.limiter === 'noop' || row.limiter === 'floor-batch'
          ? row.name
          : `**${row.name}**`,
        n(row.rps),
        `${row.limiter === 'usual' || row.limiter === 'noop' || row.limiter === 'floor-batch' ? x(row.ratio, 3) : `**${x(row.ratio, 3)}**`} (${x(Math.min(...row.ratios), 3)}–${x(Math.max(...row.ratios), 3)})`,
        `${x(row.p99Ms, 0)} (${x(row.bareP99Ms, 0)})`,
        `${(row.expectedShare * 100).toFixed(1)} %`,
        String(row.withoutStore),
      ]),
    ),
    ...notes([
      ...http.notes,
      'server CPU near 1.00 means the server, not autocannon, was the limit; "right status" is the share of 200s (admitted) or 429s',
      ...http.rows
        .filter((row) => row.unexpectedReply !== undefined)
        .map(
          (row) =>
            `${row.framework} ${row.id} answered a GET after its runs with: \`${row.unexpectedReply}\``,
        ),
    ]),
  ];
}

function metricsSection(results: Results): string[] {
  const metrics = results.metrics;
  if (metrics === undefined) return [];
  const { scrape, hotKeys } = metrics;
  return [
    '',
    '## Metrics (`@sluice/metrics`): the cost of counting',
    '',
    ...table(
      [
        'framework',
        'with metrics ÷ without (req/s)',
        'per round',
        'cpu ratio',
        'req/s with',
        'req/s without',
      ],
      ['l', 'r', 'l', 'r', 'r', 'r'],
      metrics.http.map((row) => [
        row.framework,
        `**${x(row.ratio, 3)}**`,
        row.ratios.map((r) => x(r, 3)).join(', '),
        x(row.cpuRatio, 3),
        String(row.rps),
        String(row.rpsWithout),
      ]),
    ),
    '',
    `In process, ns per admission (createHttpLimiter().decideSync): ${Object.entries(metrics.decideNs)
      .map(([name, ns]) => `${name} ${ns}`)
      .join(', ')}.`,
    '',
    `registry.metrics() with ${scrape.limiters} limiters: median ${x(scrape.medianMs)} ms, p99 ${x(scrape.p99Ms)} ms (${scrape.bytes} bytes).`,
    `Hot keys of one limiter: ${x(hotKeys.fewBytes / 1024, 1)} kB of heap after ${hotKeys.fewKeys.toLocaleString('en')} distinct keys, ` +
      `${x(hotKeys.manyBytes / 1024, 1)} kB after ${hotKeys.manyKeys.toLocaleString('en')}, ` +
      `${x(hotKeys.slicedBytes / 1024, 1)} kB after ${hotKeys.fewKeys.toLocaleString('en')} keys each sliced from a 4 kB line.`,
    '',
    ...metrics.notes.map((note) => `- ${note}`),
  ];
}

/** × rate-limiter-flexible and its rounds' spread (results recorded before it have none). */
function withSpread(row: RedisRow): string {
  const spread = row.ofRlfSpread as RedisRow['ofRlfSpread'] | undefined;
  return spread === undefined ? x(row.ofRlf) : `${x(row.ofRlf)} (${x(spread[0])}–${x(spread[1])})`;
}

function redisSection(results: Results): string[] {
  const redis = results.redis;
  if (redis === undefined) return [];
  const ids = [...new Set(redis.rows.map((row) => row.id))];
  const at = (id: string, inFlight: number) => redis.rows.find((r) => r.id === id && r.inFlight === inFlight);
  const count = (id: string, scenario: string) =>
    redis.counts.find((c) => c.id === id && c.scenario === scenario);
  return [
    '',
    `## Redis: decisions/s (median of ${redis.rounds} rounds × ${redis.ms} ms, interleaved) and commands per decision`,
    '',
    ...table(
      [
        'candidate',
        '1 in flight',
        '× rlf',
        '256 in flight',
        '× rlf',
        '× INCR',
        'sent/decision',
        'executed/decision',
        'flood: sent/request',
        'without store',
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ids.map((id) => {
        const one = at(id, 1);
        const many = at(id, 256);
        const admitted = count(id, 'admitted');
        const flood = count(id, 'flood');
        return [
          one?.candidate ?? many?.candidate ?? id,
          one === undefined ? '' : n(one.perSecond),
          one === undefined ? '' : withSpread(one),
          many === undefined ? '' : n(many.perSecond),
          many === undefined ? '' : withSpread(many),
          many === undefined ? '' : x(many.ofIncr),
          admitted === undefined ? '' : x(admitted.sentPerDecision, 3),
          admitted === undefined ? '' : x(admitted.executedPerDecision, 2),
          flood === undefined ? '' : x(flood.sentPerDecision, 3),
          String([one, many, admitted, flood].reduce((sum, row) => sum + (row?.withoutStore ?? 0), 0)),
        ];
      }),
    ),
    ...notes(redis.notes),
    '',
    '### Redis time per decision by batch size (INFO commandstats)',
    '',
    ...table(
      ['algorithm', 'maxSize', 'decisions per call', 'µs per decision', 'without store'],
      ['l', 'r', 'r', 'r', 'r'],
      redis.batching.sizes.map((s) => [
        s.algorithm,
        s.maxSize === 1 ? '1 (batch: false)' : String(s.maxSize),
        x(s.perCall, 1),
        x(s.usecPerDecision),
        String(s.withoutStore),
      ]),
    ),
    ...(redis.batching.instructions === undefined
      ? []
      : [
          '',
          '### Redis instructions per decision (gcra, callgrind)',
          '',
          ...table(
            ['case', 'instructions per decision', 'admitted'],
            ['l', 'r', 'r'],
            redis.batching.instructions.map((row) => [
              INSTRUCTION_CASES[row.name] ?? row.name,
              `${x(row.perDecision / 1000, 1)} k`,
              `${row.admitted} of ${row.decisions}${row.name.includes(' b64 ') ? ' batches' : ''}`,
            ]),
          ),
        ]),
    '',
    '### Latency of one decision at 1 in flight (gcra)',
    '',
    ...table(
      ['batching', 'p50 µs', 'p99 µs', 'p99 × batch: false', 'without store'],
      ['l', 'r', 'r', 'r', 'r'],
      redis.batching.latency.map((l) => [
        l.batch ? 'on (default)' : 'batch: false',
        x(l.p50Us, 0),
        x(l.p99Us, 0),
        x(l.p99OfUnbatched, 3),
        String(l.withoutStore),
      ]),
    ),
    ...notes(redis.batching.notes),
    ...(redis.clients === undefined ? [] : clientsTable(redis.clients)),
  ];
}

/** The "node-redis vs ioredis decisions/s" rows (issue 14: within 10 %). */
export function clientsTable(clients: ClientsResult): string[] {
  const at = (client: string, inFlight: number) =>
    clients.rows.find((r) => r.client === client && r.inFlight === inFlight);
  return [
    '',
    '### node-redis vs ioredis decisions/s (sluice gcra, batching on)',
    '',
    ...table(
      ['client', '1 in flight', '× ioredis', '256 in flight', '× ioredis', 'without store'],
      ['l', 'r', 'r', 'r', 'r', 'r'],
      ['ioredis', 'node-redis'].map((client) => {
        const one = at(client, 1);
        const many = at(client, 256);
        return [
          client,
          one === undefined ? '' : n(one.perSecond),
          one === undefined ? '' : x(one.ofIoredis, 3),
          many === undefined ? '' : n(many.perSecond),
          many === undefined ? '' : x(many.ofIoredis, 3),
          String((one?.withoutStore ?? 0) + (many?.withoutStore ?? 0)),
        ];
      }),
    ),
    ...notes(clients.notes),
  ];
}

function replaySection(results: Results): string[] {
  const replay = results.replay;
  if (replay === undefined) return [];
  return [
    '',
    `## Replay: \`sluice replay\` on an access log against ${replay.policies.map((p) => `\`${p}\``).join(', ')}`,
    '',
    ...table(
      ['lines', 'seconds', 'CPU seconds', 'lines/s', 'peak RSS MB', 'limited (per policy)'],
      ['r', 'r', 'r', 'r', 'r', 'l'],
      replay.rows.map((row) => [
        n(row.lines),
        x(row.seconds),
        x(row.cpuSeconds),
        n(row.linesPerSecond),
        x(row.maxRssMb, 1),
        row.limited.map(n).join(' / '),
      ]),
    ),
    ...notes(replay.notes),
  ];
}

/** The Markdown report: machine, goals (met / not met), then one table per section. */
export function markdown(results: Results): string {
  const minutes = Math.floor(results.durationSeconds / 60);
  const seconds = Math.round(results.durationSeconds % 60);
  const met = results.goals.filter((g) => g.met === true).length;
  const judged = results.goals.filter((g) => g.met !== null).length;
  const lines = [
    '# sluice benchmark',
    '',
    `Machine: ${machineLine(results.machine)}. Run ${results.date}, ${minutes} min ${seconds} s.`,
    '',
    `## Goals (issues 6, 11, 13, 15 and 38): ${met} of ${judged} met`,
    '',
    ...table(
      ['goal', 'measured', 'target', ''],
      ['l', 'l', 'l', 'l'],
      results.goals.map((g) => [
        g.goal,
        g.measured,
        g.target,
        g.met === null ? 'not measured' : g.met ? '**met**' : '**not met**',
      ]),
    ),
    ...sectionTables(results),
  ];
  return `${lines.join('\n')}\n`;
}

/** One table per section that ran (each under a `##` heading, with its notes): the report without its goals. */
export function sectionTables(results: Results): string[] {
  return [
    ...microSection(results),
    ...memorySection(results),
    ...httpSection(results),
    ...redisSection(results),
    ...replaySection(results),
    ...metricsSection(results),
    ...(results.overload === undefined
      ? []
      : [
          '',
          `## Overload: goodput under 0.5 to 10 × capacity (${results.overload.rounds} rounds × ${results.overload.seconds} s, interleaved)`,
          ...overloadTables(results.overload),
        ]),
  ];
}
