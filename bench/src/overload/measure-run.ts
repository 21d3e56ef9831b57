import { spawnTsChild, type TsChild } from '../child';
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

/** The bench's children: the load generator, the shared server process, one per adaptive limit. */
export interface Children {
  readonly loadgen: TsChild;
  readonly shared: TsChild;
  /** Every server process started, the shared one included (stopped by PID at the end). */
  readonly servers: TsChild[];
  /** The server process of each app, by its port. */
  readonly byPort: Map<number, TsChild>;
}

/** Starts the load generator and the shared server process. */
export async function startChildren(): Promise<Children> {
  const loadgen = spawnTsChild('overload/loadgen-child.ts');
  const shared = spawnTsChild('overload/server-child.ts');
  const children: Children = { loadgen, shared, servers: [shared], byPort: new Map() };
  try {
    await Promise.all([loadgen.first('ready'), shared.first('ready')]);
  } catch (error) {
    await stopChildren(children);
    throw error;
  }
  return children;
}

/** Stops every child by its PID. */
export async function stopChildren(children: Children): Promise<void> {
  await Promise.all([children.loadgen.stop(), ...children.servers.map((server) => server.stop())]);
}

/**
 * One open-loop run of `phases` against the app on `port`: the limit sampled meanwhile when
 * `sample`, `onStart` called as the load starts (to change the backend mid-run), then waits until
 * the app holds no request.
 */
export async function measure(
  children: Children,
  port: number,
  phases: readonly Phase[],
  { timeoutMs, sample = false, onStart }: { timeoutMs: number; sample?: boolean; onStart?: () => void },
): Promise<Run> {
  const { loadgen } = children;
  const server = children.byPort.get(port);
  if (server === undefined) throw new Error(`no server process for port ${port}`);
  const cpuBefore = Number((await server.request({ type: 'cpu' })).micros);
  if (sample) await server.request({ type: 'sample', port, everyMs: SAMPLE_MS });
  const running = loadgen.request({
    type: 'run',
    port,
    phases,
    objectiveMs: OBJECTIVE_MS,
    timeoutMs,
    measureFromMs: SKIP_SHARE * phases.reduce((sum, phase) => sum + phase.ms, 0),
  });
  onStart?.();
  const result = await running;
  const samples = sample
    ? ((await server.request({ type: 'samples', port })).samples as Array<[number, number]>)
    : [];
  const cpuAfter = Number((await server.request({ type: 'cpu' })).micros);
  // Quiet over 50 ms (10 ms for the smoke test's tiny runs).
  const runMs = phases.reduce((sum, phase) => sum + phase.ms, 0);
  await server.request({ type: 'idle', port, maxMs: 5000, quietMs: Math.max(10, Math.min(50, runMs / 5)) });
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

/**
 * Starts an app for a candidate, its port: an adaptive limit in a server process of its own (it
 * watches its process's event loop, and keeps what it learnt: another candidate's load there
 * would lower it), every other candidate in the shared process (a limit without memory, or none;
 * each run starts once the process is quiet).
 */
export async function start(children: Children, workload: Workload, spec: CandidateSpec): Promise<number> {
  let server = children.shared;
  if (spec.kind === 'adaptive' || spec.kind === 'adaptive-shares') {
    server = spawnTsChild('overload/server-child.ts');
    children.servers.push(server);
    await server.first('ready');
  }
  const port = Number((await server.request({ type: 'start', workload, spec })).port);
  children.byPort.set(port, server);
  return port;
}
