import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { priorities, settleRuns, USUAL_BROWSE, type PriorityRow, type SettleRun } from './changes';
import {
  measure,
  one,
  SAMPLE_MS,
  SKIP_SHARE,
  start,
  startChildren,
  steadyRate,
  stopChildren,
  total,
  type Children,
  type Run,
} from './measure-run';
import {
  BACKEND_CAPACITY,
  CHECKOUT_LOAD,
  CLIENT_TIMEOUT_MS,
  FLOOD_LOAD,
  LOADS,
  OBJECTIVE_MS,
  SERVICE_MS,
  SLOTS,
  UNDER_PRESSURE_OPTIONS,
  BURN_MS,
  WORKLOADS,
  CANDIDATE_NAMES,
  CANDIDATES,
  type CandidateId,
  type CandidateSpec,
  type Workload,
} from './scenario';
import { SETTLE_BAND } from './settle';

/** One candidate at one offered load (medians over the rounds). */
export interface OverloadRow {
  readonly workload: Workload;
  readonly candidate: CandidateId;
  readonly name: string;
  readonly load: number;
  /** Requests/s the generator really sent. */
  readonly offered: number;
  /** 200s within the objective per second. */
  readonly goodput: number;
  /** 200s per second, whatever their latency. */
  readonly served: number;
  /** ms, of the 200s; NaN when none. */
  readonly admittedP50: number;
  readonly admittedP99: number;
  /** ms, of the 429s and 503s; NaN when none. */
  readonly refusedP99: number;
  /** Refusals (429 or 503) over the rounds. */
  readonly shed: number;
  /** Requests given up by their client, over the rounds. */
  readonly timedOut: number;
  readonly errors: number;
  /** The generator's busiest round, share of a core. */
  readonly loadCpu: number;
  /** The adaptive limit over the first round, [ms, limit]. */
  readonly samples?: ReadonlyArray<readonly [number, number]>;
}

export interface OverloadResult {
  readonly rounds: number;
  readonly seconds: number;
  readonly timeoutMs: number;
  /** Requests/s each workload can serve within the objective. */
  readonly capacity: Readonly<Record<Workload, number>>;
  /** `max` of the concurrency candidates, per workload, and the sweep that chose the best. */
  readonly max: Readonly<Record<Workload, { best: number; high: number; low: number }>>;
  readonly sweep: ReadonlyArray<{ workload: Workload; max: number; goodput: number; admittedP99: number }>;
  readonly rows: readonly OverloadRow[];
  readonly settle: readonly SettleRun[];
  readonly priorities: readonly PriorityRow[];
  /** What the generator could offer: the lowest offered ÷ asked of any row, its busiest run (share of a core). */
  readonly generator: { readonly offeredOfAsked: number; readonly maxCpu: number };
  readonly notes: readonly string[];
}

/** The `max` values the sweep tries, per workload. */
const SWEEP: Record<Workload, readonly number[]> = {
  backend: [5, 10, 15, 20, 30, 40, 60, 80],
  cpu: [1, 2, 3, 4, 6, 8, 12, 16],
};

/**
 * The cpu workload's capacity: 1000 ms ÷ the server's CPU per request at a light load (what one
 * core would serve), or what the server really serves saturated (concurrencyLimit max 2 offered
 * twice that) when it is less: on a shared machine the server does not get a whole core.
 */
async function cpuCapacity(children: Children, settings: Settings, timeoutMs: number): Promise<number> {
  const ms = 1000 * settings.overloadSeconds;
  const light = await start(children, 'cpu', { kind: 'none' });
  const run = await measure(children, light, one(100, 2 * ms), { timeoutMs });
  const ofCore = 1000 / (run.serverCpuMs / Math.max(1, total(run).sent));
  const saturated = await start(children, 'cpu', { kind: 'concurrency', max: 2 });
  // The better of two tries: a neighbour's burst lowers one, nothing raises it.
  let served = 0;
  for (let i = 0; i < 2; i++) {
    const run = await measure(children, saturated, one(2 * ofCore, ms), { timeoutMs });
    served = Math.max(served, steadyRate(run, 'servedDone'));
  }
  progress(
    'overload',
    `cpu: ${Math.round(ofCore)} req/s of a core, ${Math.round(served)} req/s served saturated`,
  );
  return Math.max(10, Math.round(Math.min(ofCore, served) / 10) * 10);
}

function rowOf(workload: Workload, candidate: CandidateId, load: number, runs: readonly Run[]): OverloadRow {
  const figures = runs.map(total);
  const med = (f: (run: Run, i: number) => number) => median(runs.map(f));
  const sum = (f: (i: number) => number) => figures.reduce((s, _, i) => s + f(i), 0);
  return {
    workload,
    candidate,
    name: CANDIDATE_NAMES[candidate],
    load,
    offered: Math.round(med((run, i) => (figures[i]?.sent ?? 0) / run.seconds)),
    goodput: Math.round(med((run) => steadyRate(run, 'goodDone'))),
    served: Math.round(med((run) => steadyRate(run, 'servedDone'))),
    admittedP50: round(median(figures.map((f) => f.admittedP50).filter((v) => !Number.isNaN(v))), 1),
    admittedP99: round(median(figures.map((f) => f.admittedP99).filter((v) => !Number.isNaN(v))), 1),
    refusedP99: round(median(figures.map((f) => f.refusedP99).filter((v) => !Number.isNaN(v))), 2),
    shed: sum((i) => figures[i]?.refused ?? 0),
    timedOut: sum((i) => figures[i]?.timedOut ?? 0),
    errors: sum((i) => figures[i]?.errors ?? 0),
    loadCpu: round(Math.max(...runs.map((run) => run.loadCpu)), 2),
    ...(candidate === 'adaptive' ? { samples: runs[0]?.samples ?? [] } : {}),
  };
}

/** The best `max` by goodput at 3 × capacity; within 2 % of it, the lowest p99. */
async function sweepMax(
  children: Children,
  workload: Workload,
  capacity: number,
  settings: Settings,
  timeoutMs: number,
): Promise<{ best: number; sweep: OverloadResult['sweep'] }> {
  const sweep: Array<OverloadResult['sweep'][number]> = [];
  for (const max of SWEEP[workload]) {
    const port = await start(children, workload, { kind: 'concurrency', max });
    const ms = 1000 * settings.overloadSeconds;
    const run = await measure(children, port, one(capacity * 3, ms), { timeoutMs });
    sweep.push({
      workload,
      max,
      goodput: Math.round(steadyRate(run, 'goodDone')),
      admittedP99: round(total(run).admittedP99, 1),
    });
  }
  const top = Math.max(...sweep.map((s) => s.goodput));
  const near = sweep.filter((s) => s.goodput >= 0.98 * top);
  const best = near.reduce((a, b) => (b.admittedP99 < a.admittedP99 ? b : a));
  progress(
    'overload',
    workload,
    `sweep: best max ${best.max} (${best.goodput} good/s, p99 ${best.admittedP99} ms)`,
  );
  return { best: best.max, sweep };
}

/**
 * The overload section: two workloads (a backend of fixed capacity, the event loop itself), each
 * candidate at 0.5, 1, 3 and 10 × capacity from an open-loop generator, interleaved rounds; then
 * how fast the adaptive limit settles after a change, and priorities under a flood.
 */
export async function runOverload(settings: Settings): Promise<OverloadResult> {
  const timeoutMs = Math.min(CLIENT_TIMEOUT_MS, Math.max(50, 1000 * settings.overloadSeconds));
  // Not pinned to cores: on a machine shared with other work, a server pinned to one core cannot
  // leave it when another process keeps it busy, and the generator needs a fifth of a core at most.
  const children = await startChildren();
  try {
    const capacity: Record<Workload, number> = {
      backend: BACKEND_CAPACITY,
      cpu: await cpuCapacity(children, settings, timeoutMs),
    };
    progress('overload', `capacity: backend ${capacity.backend} req/s, cpu ${capacity.cpu} req/s`);
    const sweep: Array<OverloadResult['sweep'][number]> = [];
    const max = {} as Record<Workload, { best: number; high: number; low: number }>;
    const ports = new Map<string, number>();
    for (const workload of WORKLOADS) {
      const swept = await sweepMax(children, workload, capacity[workload], settings, timeoutMs);
      sweep.push(...swept.sweep);
      const best = swept.best;
      max[workload] = { best, high: best * 4, low: Math.max(1, Math.round(best / 4)) };
      const specs: Record<CandidateId, CandidateSpec> = {
        none: { kind: 'none' },
        'concurrency-best': { kind: 'concurrency', max: best },
        'concurrency-high': { kind: 'concurrency', max: max[workload].high },
        'concurrency-low': { kind: 'concurrency', max: max[workload].low },
        'under-pressure': { kind: 'under-pressure' },
        adaptive: { kind: 'adaptive' },
      };
      const started = await Promise.all(CANDIDATES.map((id) => start(children, workload, specs[id])));
      CANDIDATES.forEach((id, i) => ports.set(`${workload}:${id}`, started[i] as number));
    }
    const candidates = CANDIDATES;
    const ms = 1000 * settings.overloadSeconds;
    for (const workload of WORKLOADS) {
      progress('overload', workload, `warm-up, ${candidates.length} apps`);
      for (const id of candidates)
        await measure(
          children,
          ports.get(`${workload}:${id}`) as number,
          one(capacity[workload] * 0.5, ms / 2),
          { timeoutMs },
        );
    }
    const runs = new Map<string, Run[]>();
    for (let r = 0; r < settings.overloadRounds; r++) {
      progress(
        'overload',
        `round ${r + 1}/${settings.overloadRounds}`,
        `${WORKLOADS.length * LOADS.length * candidates.length} runs × ${settings.overloadSeconds} s`,
      );
      for (const workload of WORKLOADS) {
        for (const load of LOADS) {
          const shift = (r + LOADS.indexOf(load)) % candidates.length;
          for (const id of [...candidates.slice(shift), ...candidates.slice(0, shift)]) {
            const run = await measure(
              children,
              ports.get(`${workload}:${id}`) as number,
              one(capacity[workload] * load, ms),
              {
                timeoutMs,
                sample: id === 'adaptive',
              },
            );
            const key = `${workload}:${id}:${load}`;
            runs.set(key, [...(runs.get(key) ?? []), run]);
          }
        }
      }
    }
    const rows = WORKLOADS.flatMap((workload) =>
      candidates.flatMap((id) =>
        LOADS.map((load) => rowOf(workload, id, load, runs.get(`${workload}:${id}:${load}`) ?? [])),
      ),
    );
    const generator = {
      offeredOfAsked: round(Math.min(...rows.map((r) => r.offered / (r.load * capacity[r.workload]))), 3),
      maxCpu: round(Math.max(...rows.map((r) => r.loadCpu)), 2),
    };
    const settle = await settleRuns(children, settings, timeoutMs);
    progress('overload', 'priorities');
    const priorityRows = await priorities(children, max.backend.best, settings, timeoutMs);
    return {
      rounds: settings.overloadRounds,
      seconds: settings.overloadSeconds,
      timeoutMs,
      capacity,
      max,
      sweep,
      rows,
      settle,
      priorities: priorityRows,
      generator,
      notes: [
        `the generator offered at least ${(generator.offeredOfAsked * 100).toFixed(1)} % of the rate asked in every row (the offered column), and used at most ${generator.maxCpu.toFixed(2)} of its core`,
        `backend: the handler waits for one of ${SLOTS} slots held ${SERVICE_MS} ms each (FIFO), ${BACKEND_CAPACITY} requests/s; cpu: the handler burns ${BURN_MS} ms of CPU in two halves with a turn of the event loop between, its capacity 1000 ms ÷ the server's CPU per request at 100 requests/s, or what the server served saturated (concurrencyLimit max 2 offered twice that, the better of two tries) when less`,
        `open loop: requests leave at a fixed rate on keep-alive connections (a new one when none is idle), each client gives up after ${timeoutMs} ms; goodput is the 200s within ${OBJECTIVE_MS} ms per second; ${settings.overloadSeconds} s per run, ${settings.overloadRounds} rounds in rotating order after a warm-up, medians`,
        'the candidates in one server process, each adaptive limit in one of its own (it watches its own event loop, and would learn from another candidate’s load), the generator in another, none pinned to a core: the machine is shared with other work, and a server pinned to a core another process keeps busy could not leave it; before the next run, the server holds no request nor connection and uses under a tenth of a core',
        'an adaptive candidate waits idle in its process while the others run: its limit keeps what it learnt (sluice’s default eventLoop watch cuts it only while at least half of it is in flight, so the others’ load on a shared machine leaves an idle limit alone)',
        `latencies (p50, p99, refusals) of the requests sent after the first ${SKIP_SHARE * 100} % of a run (the settling runs show the transient), goodput by the time of the answer over the same part`,
        `concurrencyLimit: one count for the instance, no queue, 503; best max by a sweep at 3 × capacity (${SWEEP.backend.join(', ')} on backend; ${SWEEP.cpu.join(', ')} on cpu): the highest goodput, and within 2 % of it the lowest p99`,
        `@fastify/under-pressure: sampleInterval ${UNDER_PRESSURE_OPTIONS.sampleInterval} ms, maxEventLoopDelay ${UNDER_PRESSURE_OPTIONS.maxEventLoopDelay} ms, maxEventLoopUtilization ${UNDER_PRESSURE_OPTIONS.maxEventLoopUtilization}`,
        `settling: the first time after the change from which every sample of the limit (each ${SAMPLE_MS} ms) stays within ±${SETTLE_BAND * 100} % of its median over the last 3 s after it`,
        `priorities: each candidate a fresh app (its own limiter); the flood (browse at ${FLOOD_LOAD} × capacity, checkout at ${CHECKOUT_LOAD} ×) for ${2 * settings.overloadSeconds} s, either after ${settings.overloadSeconds} s of checkout at its rate and browse at ${USUAL_BROWSE} × (an instance serving checkout when the sale opens), or from the first request (a fresh instance: browse, twenty times as frequent, borrows the whole limit before checkout's first request, and checkout is refused until permits come back); only the requests sent during the flood counted`,
      ],
    };
  } finally {
    await stopChildren(children);
  }
}
