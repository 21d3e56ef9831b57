import type { TsChild } from '../child';
import { BUCKET_MS, type Buckets, type Phase } from './open-loop';
import { OBJECTIVE_MS, type CandidateSpec, type Workload } from './scenario';

/** What one open-loop run of one path measured. */
export interface PathFigures {
  readonly sent: number;
  readonly good: number;
  readonly late: number;
  readonly refused: number;
  readonly timedOut: number;
  readonly errors: number;
  /** ms; NaN when none. */
  readonly admittedP50: number;
  readonly admittedP99: number;
  readonly refusedP99: number;
}

/** One run as measured, before rounds are combined. */
export interface Run {
  readonly paths: Readonly<Record<string, PathFigures>>;
  readonly buckets: Buckets;
  readonly seconds: number;
  /** Share of a core the generator used. */
  readonly loadCpu: number;
  /** The longest gap between two ticks of the generator, ms (how late a burst could leave). */
  readonly lateTicksMs: number;
  /** Server CPU over the run and its drain, ms. */
  readonly serverCpuMs: number;
  /** The adaptive limit every {@link SAMPLE_MS} as [ms from the start, limit]. */
  readonly samples: ReadonlyArray<readonly [number, number]>;
}

export const SAMPLE_MS = 100;

/** The share of a run left out at its start when throughput is counted (the limit finding its level). */
export const SKIP_SHARE = 0.2;

/**
 * Answers per second by the time they were answered, over the run after its first
 * {@link SKIP_SHARE} and before its end: the steady rate, without the backlog a run leaves to
 * drain after it (which counting by send time would add) nor the start's transient. Runs shorter
 * than a few buckets count everything answered over the whole run.
 */
export function steadyRate(run: Run, series: 'goodDone' | 'servedDone'): number {
  const buckets = run.buckets[series];
  const end = Math.floor((run.seconds * 1000) / BUCKET_MS);
  const from = Math.ceil(end * SKIP_SHARE);
  if (end - from < 2) return buckets.reduce((sum, n) => sum + n, 0) / run.seconds;
  let sum = 0;
  for (let i = from; i < end; i++) sum += buckets[i] ?? 0;
  return sum / (((end - from) * BUCKET_MS) / 1000);
}

/** The bench's two children: the servers and the load generator. */
export interface Children {
  readonly server: TsChild;
  readonly loadgen: TsChild;
}

/**
 * One open-loop run of `phases` against the app on `port`: the limit sampled meanwhile when
 * `sample`, `onStart` called as the load starts (to change the backend mid-run), then waits until
 * the app holds no request.
 */
export async function measure(
  { server, loadgen }: Children,
  port: number,
  phases: readonly Phase[],
  { timeoutMs, sample = false, onStart }: { timeoutMs: number; sample?: boolean; onStart?: () => void },
): Promise<Run> {
  const cpuBefore = Number((await server.request({ type: 'cpu' })).micros);
  if (sample) await server.request({ type: 'sample', port, everyMs: SAMPLE_MS });
  const running = loadgen.request({ type: 'run', port, phases, objectiveMs: OBJECTIVE_MS, timeoutMs });
  onStart?.();
  const result = await running;
  const samples = sample
    ? ((await server.request({ type: 'samples', port })).samples as Array<[number, number]>)
    : [];
  const cpuAfter = Number((await server.request({ type: 'cpu' })).micros);
  await server.request({ type: 'idle', port, maxMs: 5000 });
  return {
    paths: result.paths as Record<string, PathFigures>,
    buckets: result.buckets as Buckets,
    seconds: Number(result.seconds),
    loadCpu: Number(result.loadCpu),
    lateTicksMs: Number(result.lateTicksMs),
    serverCpuMs: (cpuAfter - cpuBefore) / 1000,
    samples,
  };
}

/** Every path of a run summed (the main grid requests one path only). */
export function total(run: Run): PathFigures {
  const all = Object.values(run.paths);
  const sum = (field: keyof PathFigures) => all.reduce((s, p) => s + (p[field] as number), 0);
  const first = all[0];
  return {
    sent: sum('sent'),
    good: sum('good'),
    late: sum('late'),
    refused: sum('refused'),
    timedOut: sum('timedOut'),
    errors: sum('errors'),
    admittedP50: first?.admittedP50 ?? Number.NaN,
    admittedP99: first?.admittedP99 ?? Number.NaN,
    refusedP99: first?.refusedP99 ?? Number.NaN,
  };
}

export const one = (rate: number, ms: number) => [{ ms, rates: { '/browse': rate } }];

/** Starts an app for a candidate in the server; its port. */
export async function start(children: Children, workload: Workload, spec: CandidateSpec): Promise<number> {
  return Number((await children.server.request({ type: 'start', workload, spec })).port);
}
