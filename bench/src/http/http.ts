import { spawnTsChild, type TsChild } from '../child';
import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { SHARED_STORE_TIMEOUT_MS, supportsBlockCache } from '../sluice-limiter';
import {
  CONCURRENCY_LIMITER,
  COUNT_WHEN_LIMITER,
  FLOOR_LIMITER,
  NOOP_LIMITER,
  FRAMEWORKS,
  USUAL_LIMITER,
  VARIANTS,
  variantId,
  type Framework,
  type Variant,
  type VariantId,
} from './apps';

/** One measured load run against one app. */
interface Run {
  readonly id: VariantId;
  readonly rps: number;
  readonly p99: number;
  readonly serverCpu: number;
  readonly loadCpu: number;
  /** Share of responses with the status the path expects (200 admitted, 429 limited). */
  readonly expectedShare: number;
  readonly errors: number;
  readonly withoutStore: number;
  readonly statuses: Record<string, number>;
}

/** A limited app of one framework against the bare one, over every round. */
export interface HttpRow extends Variant {
  readonly framework: Framework;
  readonly id: VariantId;
  /** `sluice` or the usual limiter's name. */
  readonly name: string;
  /** Median of the rounds' ratios limited / bare (each against the bare runs around it). */
  readonly ratio: number;
  /**
   * The same from the server's CPU time per request (bare ÷ limited): steadier than requests/s
   * when other work shares the machine.
   */
  readonly cpuRatio: number;
  /** Server CPU µs per request, the variant's and the bare app's around it (medians of rounds). */
  readonly cpuUs: number;
  readonly bareCpuUs: number;
  readonly ratios: readonly number[];
  readonly rps: number;
  readonly bareRps: number;
  readonly p99Ms: number;
  readonly bareP99Ms: number;
  /** Lowest share of the expected status over the rounds. */
  readonly expectedShare: number;
  /** Requests sluice decided without its store (timeouts, open circuit): must be 0 for the figures to stand. */
  readonly withoutStore: number;
  /** Connection errors seen by the load generator. */
  readonly errors: number;
  /** Replies by status over every round. */
  readonly statuses: Record<string, number>;
  /** When over 1 % of replies had another status than the path's: one reply fetched after the runs, to say why. */
  unexpectedReply?: string;
}

/** The bare app of one framework. */
export interface BareRow {
  readonly framework: Framework;
  readonly rps: number;
  readonly p99Ms: number;
  /** Share of one core the server used: near 1 means the server, not the load generator, was the limit. */
  readonly serverCpu: number;
  readonly loadCpu: number;
}

/** What the HTTP section measured. */
export interface HttpResult {
  readonly connections: number;
  readonly pipelining: number;
  readonly seconds: number;
  readonly rounds: number;
  readonly pinned: boolean;
  readonly blockCache: boolean;
  readonly bare: readonly BareRow[];
  readonly rows: readonly HttpRow[];
  readonly notes: readonly string[];
}

/** The order of one round: B L₁ B L₂ … Lₙ B, so every limited run sits between two bare runs. */
function sequence(limited: readonly VariantId[]): VariantId[] {
  return [...limited.flatMap((id): VariantId[] => ['bare', id]), 'bare'];
}

async function serverStats(
  server: TsChild,
): Promise<{ cpuMicros: number; withoutStore: Record<string, number> }> {
  const stats = await server.request({ type: 'stats' });
  return {
    cpuMicros: Number(stats.cpuMicros),
    withoutStore: stats.withoutStore as Record<string, number>,
  };
}

/** Status and start of the body of one GET, for the report of a variant that answered wrongly. */
async function oneReply(port: number): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    return `${response.status} ${(await response.text()).slice(0, 300).replace(/[\s`]+/g, ' ')}`;
  } catch (error) {
    return String(error);
  }
}

async function load(
  loadgen: TsChild,
  server: TsChild,
  id: VariantId,
  port: number,
  seconds: number,
  settings: Settings,
): Promise<Run> {
  const before = await serverStats(server);
  const result = await loadgen.request({
    type: 'run',
    url: `http://127.0.0.1:${port}/`,
    seconds,
    connections: settings.connections,
    pipelining: settings.pipelining,
  });
  const after = await serverStats(server);
  const statuses = result.statuses as Record<string, number>;
  const total = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const expected = id.endsWith(':429') ? statuses['429'] : statuses['200'];
  return {
    id,
    rps: Number(result.requests) / Number(result.seconds),
    p99: Number(result.p99),
    // Over autocannon's own duration: the stats requests and connection setup around it are idle time.
    serverCpu: (after.cpuMicros - before.cpuMicros) / 1000 / (Number(result.seconds) * 1000),
    loadCpu: Number(result.loadCpu),
    expectedShare: total === 0 ? 0 : (expected ?? 0) / total,
    errors: Number(result.errors),
    withoutStore: (after.withoutStore[id] ?? 0) - (before.withoutStore[id] ?? 0),
    statuses,
  };
}

/** One run in a line: requests/s, server CPU per request, and how busy each core was. */
function traceOf(run: Run): string {
  const us = (1e6 * run.serverCpu) / run.rps;
  return `${Math.round(run.rps)} req/s, ${us.toFixed(1)} µs/request, server ${run.serverCpu.toFixed(2)}, load ${run.loadCpu.toFixed(2)} cores`;
}

/**
 * Runs the bare app and `variants` of one framework: warm-up, then `settings.httpRounds` rounds
 * of B L₁ B L₂ … B. Without a `redisPort`, only memory variants can run.
 */
export async function runFramework(
  framework: Framework,
  loadgen: TsChild,
  redisPort: number | undefined,
  settings: Settings,
  cpu: number | undefined,
  variants: readonly Variant[] = VARIANTS,
): Promise<{ bare: BareRow; rows: HttpRow[] }> {
  const server = spawnTsChild('http/server-child.ts', {
    cpu,
    // e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: the server writes its profile when stopped.
    nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean),
    env: {
      BENCH_FRAMEWORK: framework,
      BENCH_HTTP_VARIANTS: variants.map(variantId).join(','),
      ...(redisPort === undefined ? {} : { BENCH_REDIS_PORT: String(redisPort) }),
    },
  });
  try {
    const ports = (await server.first('ready')).ports as Record<VariantId, number>;
    const ids: VariantId[] = ['bare', ...variants.map(variantId)];
    progress('http', framework, `warm-up, ${ids.length} apps × ${settings.httpWarmupSeconds} s`);
    for (const id of ids) await load(loadgen, server, id, ports[id], settings.httpWarmupSeconds, settings);

    const runs: Run[][] = [];
    const limited = variants.map(variantId);
    for (let r = 0; r < settings.httpRounds; r++) {
      const rotated = [...limited.slice(r % limited.length), ...limited.slice(0, r % limited.length)];
      const order = sequence(rotated);
      progress(
        'http',
        framework,
        `round ${r + 1}/${settings.httpRounds}`,
        `${order.length} runs × ${settings.httpSeconds} s`,
      );
      const round: Run[] = [];
      for (const id of order) {
        const run = await load(loadgen, server, id, ports[id], settings.httpSeconds, settings);
        // BENCH_HTTP_TRACE=1: every run as measured, in order (what the medians hide).
        if (process.env.BENCH_HTTP_TRACE === '1') progress('http', framework, id, traceOf(run));
        round.push(run);
      }
      runs.push(round);
    }

    const bareRuns = runs.flatMap((round) => round.filter((run) => run.id === 'bare'));
    const bare: BareRow = {
      framework,
      rps: Math.round(median(bareRuns.map((run) => run.rps))),
      p99Ms: median(bareRuns.map((run) => run.p99)),
      serverCpu: round(median(bareRuns.map((run) => run.serverCpu))),
      loadCpu: round(median(bareRuns.map((run) => run.loadCpu))),
    };
    const rows = variants.map((variant): HttpRow => {
      const id = variantId(variant);
      const mine: Array<{ run: Run; bareRps: number; bareP99: number; bareCpu: number }> = [];
      for (const round of runs) {
        round.forEach((run, index) => {
          if (run.id !== id) return;
          const previous = round
            .slice(0, index)
            .reverse()
            .find((r) => r.id === 'bare');
          const next = round.slice(index + 1).find((r) => r.id === 'bare');
          const around = [previous, next].filter((r): r is Run => r !== undefined);
          mine.push({
            run,
            bareRps: around.reduce((sum, r) => sum + r.rps, 0) / around.length,
            bareP99: around.reduce((sum, r) => sum + r.p99, 0) / around.length,
            bareCpu: around.reduce((sum, r) => sum + r.serverCpu / r.rps, 0) / around.length,
          });
        });
      }
      const ratios = mine.map(({ run, bareRps }) => run.rps / bareRps);
      return {
        ...variant,
        framework,
        id,
        name:
          variant.limiter === 'usual'
            ? USUAL_LIMITER[framework][variant.store]
            : variant.limiter === 'concurrency'
              ? CONCURRENCY_LIMITER
              : variant.limiter === 'noop'
                ? NOOP_LIMITER
                : variant.limiter === 'floor-batch'
                  ? FLOOR_LIMITER
                  : variant.limiter === 'sluice-count-when'
                    ? COUNT_WHEN_LIMITER
                    : variant.limiter,
        ratio: round(median(ratios), 3),
        cpuRatio: round(median(mine.map(({ run, bareCpu }) => bareCpu / (run.serverCpu / run.rps))), 3),
        cpuUs: round(median(mine.map(({ run }) => (1e6 * run.serverCpu) / run.rps)), 2),
        bareCpuUs: round(median(mine.map(({ bareCpu }) => 1e6 * bareCpu)), 2),
        ratios: ratios.map((ratio) => round(ratio, 3)),
        rps: Math.round(median(mine.map(({ run }) => run.rps))),
        bareRps: Math.round(median(mine.map(({ bareRps }) => bareRps))),
        p99Ms: median(mine.map(({ run }) => run.p99)),
        bareP99Ms: median(mine.map(({ bareP99 }) => bareP99)),
        expectedShare: round(Math.min(...mine.map(({ run }) => run.expectedShare)), 4),
        withoutStore: mine.reduce((sum, { run }) => sum + run.withoutStore, 0),
        errors: mine.reduce((sum, { run }) => sum + run.errors, 0),
        statuses: mine.reduce<Record<string, number>>((sum, { run }) => {
          for (const [code, count] of Object.entries(run.statuses)) sum[code] = (sum[code] ?? 0) + count;
          return sum;
        }, {}),
      };
    });
    for (const row of rows) {
      if (row.expectedShare < 0.99) row.unexpectedReply = await oneReply(ports[row.id]);
    }
    return { bare, rows };
  } finally {
    await server.stop();
  }
}

/**
 * requests/s and p99 of bare Express, Koa and Fastify against the same app with sluice and with
 * the framework's usual limiter, memory and Redis, admitted and 429 paths. The server (core 0)
 * and autocannon (core 1) are pinned apart when `taskset` and two cores allow; bare and limited
 * runs alternate (B L B L … B) and each limited run is divided by the mean of the bare runs around it.
 */
export async function runHttp(settings: Settings, redisPort: number, pinned: boolean): Promise<HttpResult> {
  const loadgen = spawnTsChild('http/loadgen-child.ts', pinned ? { cpu: 1 } : {});
  const bare: BareRow[] = [];
  const rows: HttpRow[] = [];
  try {
    await loadgen.first('ready');
    for (const framework of FRAMEWORKS) {
      const result = await runFramework(framework, loadgen, redisPort, settings, pinned ? 0 : undefined);
      bare.push(result.bare);
      rows.push(...result.rows);
    }
  } finally {
    await loadgen.stop();
  }
  const blockCache = supportsBlockCache();
  return {
    connections: settings.connections,
    pipelining: settings.pipelining,
    seconds: settings.httpSeconds,
    rounds: settings.httpRounds,
    pinned,
    blockCache,
    bare,
    rows,
    notes: [
      `autocannon: ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.httpSeconds} s per run, ${settings.httpRounds} rounds after a ${settings.httpWarmupSeconds} s warm-up of each app; GET / → {"hello":"world"} from 127.0.0.1`,
      pinned
        ? 'server pinned to cpu 0, autocannon and redis-server to cpu 1 (taskset)'
        : 'not pinned (taskset missing or fewer than 2 cores): server and load share the cores',
      'admitted: limit 100 000 000 per minute; 429: 1 per minute (the only client is over it); every limiter keys on the client address with its defaults otherwise',
      `${NOOP_LIMITER}: a middleware (Fastify: an onRequest hook) that only passes the request on, no limiter: what one more layer costs, and how far a ratio that should be 1 strays in this run`,
      `${FLOOR_LIMITER}: the same app making one Redis call per request and no limiter, the calls batched as sluice's store batches (one EVAL for up to 64 requests, two on their way, full ones at once): the floor of any limiter on Redis, which sluice's Redis ratio is judged against, round by round`,
      'the spread after a ratio is its lowest and highest round',
      `${CONCURRENCY_LIMITER}: max 1 000 000 requests in flight per client address (never reached): a permit taken per request and given back when its response closes`,
      `${COUNT_WHEN_LIMITER}: the admitted sluice limit with countWhen: 'failed'; every reply is a 200, so each request's unit is given back when its response closes (the goal compares it with sluice's row round by round)`,
      `sluice: a MemoryStore() or RedisStore on one shared ioredis client${blockCache ? `, blockCache: true and timeoutMs: ${SHARED_STORE_TIMEOUT_MS} with Redis (the peers wait for Redis without a bound)` : ' (this core has no blockCache option yet)'}`,
    ],
  };
}
