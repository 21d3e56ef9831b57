import { FRAMEWORKS, METRICS_FRAMEWORKS, type Framework, type Variant } from '../http/apps';
import type { HttpResult, HttpRow } from '../http/http';
import { median } from '../measure';
import type { MemoryResult } from '../memory/memory';
import type { MetricsResult } from '../metrics/metrics';
import type { MicroResult } from '../micro/micro';
import { COUNT_WHEN_ID } from '../redis/count-when';
import type { OverloadResult } from '../overload/overload';
import { overloadGoals } from '../overload/overload-goals';
import type { RedisResult } from '../redis/redis';
import type { ReplayResult } from '../replay/replay-bench';
import { replayGoals } from '../replay/replay-goals';
import { batchingGoals } from './batching-goals';
import type { Goal } from './results';

type Sections = {
  micro?: MicroResult;
  memory?: MemoryResult;
  http?: HttpResult;
  redis?: RedisResult;
  replay?: ReplayResult;
  metrics?: MetricsResult;
  overload?: OverloadResult;
};

const NOT_MEASURED = { measured: 'not measured (section not run)', met: null } as const;

function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);
}

/** Median over the rounds of a / b, from two candidates' per-round samples. */
function roundRatio(a: readonly number[] | undefined, b: readonly number[] | undefined): number {
  if (a === undefined || b === undefined) return Number.NaN;
  return median(a.map((value, r) => value / (b[r] ?? Number.NaN)));
}

function microGoals(micro: MicroResult | undefined): Goal[] {
  const row = (id: string, scenario: string) =>
    micro?.rows.find((r) => r.id === id && r.scenario === scenario);
  const hot = row('sluice:gcra', 'one hot key');
  const many = row('sluice:gcra', 'many keys');
  const rlf = row('rate-limiter-flexible', 'one hot key');
  const vsRlf = roundRatio(hot?.samples, rlf?.samples);
  const keys = micro?.keys.toLocaleString('en') ?? '100 000';
  return [
    {
      id: 'micro-hot-floor',
      goal: 'memory consume, one hot key (gcra, the default) vs the plain-Map floor',
      target: '≥ 0.6 × floor',
      ...(hot === undefined
        ? NOT_MEASURED
        : { measured: `${fmt(hot.ofFloor)} × floor`, met: hot.ofFloor >= 0.6 }),
    },
    {
      id: 'micro-hot-rlf',
      goal: 'memory consume, one hot key (gcra) vs rate-limiter-flexible RateLimiterMemory',
      target: '≥ 2 × rate-limiter-flexible',
      ...(hot === undefined || rlf === undefined
        ? NOT_MEASURED
        : { measured: `${fmt(vsRlf)} × rate-limiter-flexible`, met: vsRlf >= 2 }),
    },
    {
      id: 'micro-many-floor',
      goal: `memory consume over ${keys} keys (gcra) vs the plain-Map floor`,
      target: '≥ 0.5 × floor',
      ...(many === undefined
        ? NOT_MEASURED
        : { measured: `${fmt(many.ofFloor)} × floor`, met: many.ofFloor >= 0.5 }),
    },
  ];
}

function memoryGoals(memory: MemoryResult | undefined): Goal[] {
  const row = memory?.rows.find((r) => r.id === 'sluice:gcra');
  const map = memory?.rows.find((r) => r.id === 'map');
  return [
    {
      id: 'heap-per-key',
      goal: `heap per key in MemoryStore (gcra) after ${memory?.keys.toLocaleString('en') ?? '1 000 000'} keys vs a plain Map of objects`,
      target: '≤ 0.9 × plain Map',
      ...(row === undefined || map === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(row.ofMap)} × plain Map (${fmt(row.bytesPerKey, 1)} vs ${fmt(map.bytesPerKey, 1)} B)`,
            met: row.ofMap <= 0.9,
          }),
    },
  ];
}

/** Why an HTTP row's figure cannot be trusted, if it cannot. */
function flaw(row: HttpRow): string | undefined {
  if (row.withoutStore > 0) return `${row.withoutStore} decisions made without the store`;
  if (row.expectedShare < 0.99) {
    const statuses = Object.entries(row.statuses)
      .map(([code, count]) => `${count} × ${code}`)
      .join(', ');
    return `only ${(row.expectedShare * 100).toFixed(1)} % of replies had the path's status (${statuses})`;
  }
  if (row.errors > 0) return `${row.errors} connection errors`;
  return undefined;
}

function httpGoals(http: HttpResult | undefined): Goal[] {
  const goals: Goal[] = [];
  const find = (framework: Framework, variant: Variant) =>
    http?.rows.find(
      (r) =>
        r.framework === framework &&
        r.limiter === variant.limiter &&
        r.store === variant.store &&
        r.path === variant.path,
    );
  const ratioGoal = (
    framework: Framework,
    store: Variant['store'],
    path: Variant['path'],
    min: number,
  ): Goal => {
    const row = find(framework, { limiter: 'sluice', store, path });
    const problem = row === undefined ? undefined : flaw(row);
    return {
      id: `http-${store}-${path}-${framework}`,
      goal: `HTTP ${framework}, sluice ${store} store, ${path} path: requests/s vs bare`,
      target: `≥ ${min} × bare`,
      ...(row === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(row.ratio, 3)} × bare${problem === undefined ? '' : ` (invalid: ${problem})`}`,
            met: problem === undefined && row.ratio >= min,
          }),
    };
  };
  // Issue 17: a permit per request costs the memory path at most 5 %.
  const concurrencyGoal = (framework: Framework): Goal => {
    const row = find(framework, { limiter: 'concurrency', store: 'memory', path: 'admitted' });
    const problem = row === undefined ? undefined : flaw(row);
    return {
      id: `http-concurrency-memory-admitted-${framework}`,
      goal: `HTTP ${framework}, sluice concurrencyLimit, memory store, admitted path: requests/s vs bare`,
      target: '≥ 0.95 × bare',
      ...(row === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(row.ratio, 3)} × bare${problem === undefined ? '' : ` (invalid: ${problem})`}`,
            met: problem === undefined && row.ratio >= 0.95,
          }),
    };
  };
  // countWhen on the admitted path (every unit given back) costs at most 5 % of the same limit without it.
  const countWhenGoal = (framework: Framework): Goal => {
    const without = find(framework, { limiter: 'sluice', store: 'memory', path: 'admitted' });
    const row = find(framework, { limiter: 'sluice-count-when', store: 'memory', path: 'admitted' });
    const problem = row === undefined ? undefined : flaw(row);
    const ratio = roundRatio(row?.ratios, without?.ratios);
    return {
      id: `http-count-when-memory-admitted-${framework}`,
      goal: `HTTP ${framework}, sluice memory admitted path with countWhen: 'failed' (each unit given back) vs without`,
      target: '≥ 0.95 × without',
      ...(row === undefined || without === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(ratio, 3)} × without${problem === undefined ? '' : ` (invalid: ${problem})`}`,
            met: problem === undefined && ratio >= 0.95,
          }),
    };
  };
  const peerGoal = (framework: Framework, store: Variant['store'], path: Variant['path']): Goal => {
    const mine = find(framework, { limiter: 'sluice', store, path });
    const usual = find(framework, { limiter: 'usual', store, path });
    const problem = mine === undefined ? undefined : flaw(mine);
    return {
      id: `http-${store}-${path}-${framework}-vs-usual`,
      goal: `HTTP ${framework}, ${store} store, ${path} path: sluice's ratio vs ${usual?.name ?? 'the usual limiter'}'s`,
      target: 'above the usual limiter',
      ...(mine === undefined || usual === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(mine.ratio, 3)} vs ${fmt(usual.ratio, 3)}${problem === undefined ? '' : ` (invalid: ${problem})`}`,
            met: problem === undefined && mine.ratio > usual.ratio,
          }),
    };
  };
  for (const framework of FRAMEWORKS)
    goals.push(ratioGoal(framework, 'memory', 'admitted', framework === 'express' ? 0.97 : 0.95));
  for (const framework of FRAMEWORKS) goals.push(ratioGoal(framework, 'memory', '429', 0.95));
  for (const framework of FRAMEWORKS) goals.push(concurrencyGoal(framework));
  for (const framework of FRAMEWORKS) goals.push(countWhenGoal(framework));
  for (const path of ['admitted', '429'] as const)
    for (const framework of FRAMEWORKS) goals.push(peerGoal(framework, 'memory', path));
  goals.push(ratioGoal('fastify', 'redis', 'admitted', 0.85));
  for (const framework of FRAMEWORKS) goals.push(peerGoal(framework, 'redis', 'admitted'));
  return goals;
}

function redisGoals(redis: RedisResult | undefined): Goal[] {
  const goals: Goal[] = [];
  for (const inFlight of [1, 256]) {
    const row = redis?.rows.find((r) => r.id === 'sluice:gcra' && r.inFlight === inFlight);
    goals.push({
      id: `redis-rlf-${inFlight}`,
      goal: `Redis decisions/s at ${inFlight} in flight (gcra) vs rate-limiter-flexible RateLimiterRedis`,
      target: '≥ 1.2 × rate-limiter-flexible',
      ...(row === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(row.ofRlf)} × rate-limiter-flexible${row.withoutStore > 0 ? ` (invalid: ${row.withoutStore} without store)` : ''}`,
            met: row.withoutStore === 0 && row.ofRlf >= 1.2,
          }),
    });
  }
  const sluice = (scenario: 'admitted' | 'flood') =>
    redis?.counts.filter((c) => c.id.startsWith('sluice:') && c.scenario === scenario) ?? [];
  const admitted = sluice('admitted');
  const gcra = admitted.find((c) => c.id === 'sluice:gcra');
  const sentRange = admitted.map((c) => c.sentPerDecision);
  const errors = (rows: ReadonlyArray<{ withoutStore: number }>) =>
    rows.reduce((sum, c) => sum + c.withoutStore, 0);
  const invalid = (rows: ReadonlyArray<{ withoutStore: number }>) =>
    errors(rows) > 0 ? ` (invalid: ${errors(rows)} decisions made without the store)` : '';
  goals.push({
    id: 'redis-commands-admitted',
    goal: 'Redis commands sent per admitted decision (every algorithm; batching sends fewer)',
    target: 'at most 1',
    ...(gcra === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(Math.min(...sentRange), 3)}–${fmt(Math.max(...sentRange), 3)} sent (${Object.keys(gcra.sent).join(', ')}); ${fmt(gcra.executedPerDecision)} executed with the script's own calls (gcra)${invalid(admitted)}`,
          met: errors(admitted) === 0 && sentRange.every((sent) => sent <= 1),
        }),
  });
  const countWhen = redis?.counts.find((c) => c.id === COUNT_WHEN_ID && c.scenario === 'admitted');
  goals.push({
    id: 'redis-count-when-calls',
    goal: "Redis script calls per request with countWhen: 'failed' on successful traffic (each unit given back), 256 in flight",
    target: '≤ 0.1',
    ...(countWhen === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(countWhen.sentPerDecision, 3)} sent (${Object.keys(countWhen.sent).join(', ')})${invalid([countWhen])}`,
          met: countWhen.withoutStore === 0 && countWhen.sentPerDecision <= 0.1,
        }),
  });
  const flood = sluice('flood');
  const worst = Math.max(...flood.map((c) => c.sentPerDecision));
  const floodGcra = flood.find((c) => c.id === 'sluice:gcra');
  goals.push({
    id: 'redis-commands-flood',
    goal: 'Redis commands per request, flood on one already-limited key (every algorithm)',
    target: '< 0.05',
    ...(floodGcra === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(floodGcra.sentPerDecision, 3)} (gcra), worst ${fmt(worst, 3)}${redis?.blockCache ? '' : '; core has no blockCache option'}${invalid(flood)}`,
          met: errors(flood) === 0 && worst < 0.05,
        }),
  });
  return goals;
}

/** Every goal of issues 6 and 11, judged on this run's figures. */
export function judgeGoals(sections: Sections): Goal[] {
  return [
    ...microGoals(sections.micro),
    ...memoryGoals(sections.memory),
    ...httpGoals(sections.http),
    ...redisGoals(sections.redis),
    ...batchingGoals(sections.redis, sections.http),
    ...replayGoals(sections.replay),
    ...metricsGoals(sections.metrics),
    ...overloadGoals(sections.overload),
  ];
}

/** Issue 13's goals for `@sluice/metrics`. */
function metricsGoals(metrics: MetricsResult | undefined): Goal[] {
  const http = METRICS_FRAMEWORKS.map((framework): Goal => {
    const row = metrics?.http.find((r) => r.framework === framework);
    return {
      id: `metrics-http-${framework}`,
      goal: `issue 13: ${framework}, in-memory admitted path with metrics: prometheus() vs without`,
      target: '≥ 0.97 × without',
      ...(row === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(row.ratio, 3)} × without (cpu ${fmt(row.cpuRatio, 3)})`,
            met: row.ratio >= 0.97,
          }),
    };
  });
  const scrape = metrics?.scrape;
  const hot = metrics?.hotKeys;
  return [
    ...http,
    {
      id: 'metrics-scrape',
      goal: `issue 13: registry.metrics() with ${scrape?.limiters ?? 50} limiters`,
      target: '< 5 ms',
      ...(scrape === undefined
        ? NOT_MEASURED
        : { measured: `${fmt(scrape.medianMs)} ms (p99 ${fmt(scrape.p99Ms)} ms)`, met: scrape.medianMs < 5 }),
    },
    {
      id: 'metrics-hot-keys-flat',
      goal: `issue 13: hot-key heap after ${hot?.manyKeys.toLocaleString('en') ?? '1 000 000'} distinct keys vs 10 000`,
      target: 'flat: ≤ 10 000 keys’ + 64 kB',
      ...(hot === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(hot.manyBytes / 1024, 1)} kB vs ${fmt(hot.fewBytes / 1024, 1)} kB (sliced keys: ${fmt(hot.slicedBytes / 1024, 1)} kB)`,
            met: hot.manyBytes <= hot.fewBytes + 64 * 1024 && hot.slicedBytes <= hot.fewBytes + 64 * 1024,
          }),
    },
  ];
}
