import { median } from '../measure';
import type { Goal } from '../report/results';
import type { OverloadResult, OverloadRow } from './overload';
import {
  type CandidateId,
  CHECKOUT_SHARE,
  FLOOD_LOAD,
  OBJECTIVE_MS,
  WORKLOADS,
  type Workload,
} from './scenario';

/** The loads at which overload protection is judged, × capacity. */
const OVER = [3, 10] as const;

const x = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** A candidate's row at one load, if it ran. */
export function rowAt(
  overload: OverloadResult | undefined,
  workload: Workload,
  candidate: CandidateId,
  load: number,
): OverloadRow | undefined {
  return overload?.rows.find((r) => r.workload === workload && r.candidate === candidate && r.load === load);
}

/**
 * The p99 of admitted requests unloaded: the median over the candidates of their p99 at 0.5 ×
 * capacity (one run's hiccup on a shared machine moves one candidate's, not the median).
 */
export function unloadedP99(overload: OverloadResult | undefined, workload: Workload): number {
  const p99s = (overload?.rows ?? [])
    .filter((r) => r.workload === workload && r.load === 0.5 && Number.isFinite(r.admittedP99))
    .map((r) => r.admittedP99);
  return median(p99s);
}

/** Candidates whose goodput at 10 × capacity falls under half the capacity. */
export function collapsed(overload: OverloadResult, workload: Workload): OverloadRow[] {
  return overload.rows.filter(
    (r) => r.workload === workload && r.load === 10 && r.goodput < 0.5 * overload.capacity[workload],
  );
}

function notMeasured(overload: OverloadResult | undefined): Pick<Goal, 'measured' | 'met'> {
  return {
    measured:
      overload === undefined
        ? 'not measured (section not run)'
        : 'not measured (adaptiveLimit not in this build)',
    met: null,
  };
}

/**
 * A goal judged at 3 and 10 × capacity: `figure` gives the value at one load (and its words), met
 * when `ok` holds at both.
 */
function atOverload(
  overload: OverloadResult | undefined,
  workload: Workload,
  base: Pick<Goal, 'id' | 'goal' | 'target'>,
  figure: (adaptive: OverloadRow, load: number) => { value: number; words: string } | undefined,
  ok: (value: number) => boolean,
): Goal {
  const figures = OVER.map((load) => {
    const row = rowAt(overload, workload, 'adaptive', load);
    return row === undefined ? undefined : figure(row, load);
  });
  if (figures.some((f) => f === undefined)) return { ...base, ...notMeasured(overload) };
  const present = figures as Array<{ value: number; words: string }>;
  return {
    ...base,
    measured: present.map((f, i) => `${OVER[i]} ×: ${f.words}`).join('; '),
    met: present.every((f) => ok(f.value)),
  };
}

function workloadGoals(overload: OverloadResult | undefined, workload: Workload): Goal[] {
  const capacity = overload?.capacity[workload] ?? Number.NaN;
  const unloaded = unloadedP99(overload, workload);
  const of = (candidate: CandidateId, load: number) =>
    rowAt(overload, workload, candidate, load)?.goodput ?? Number.NaN;
  const light = rowAt(overload, workload, 'adaptive', 0.5);
  const bare = rowAt(overload, workload, 'none', 0.5);
  const name = `overload, ${workload} workload: sluice adaptiveLimit`;
  return [
    atOverload(
      overload,
      workload,
      {
        id: `overload-${workload}-goodput`,
        goal: `${name} goodput at 3 and 10 × capacity`,
        target: '≥ 0.9 × capacity',
      },
      (row) => ({
        value: row.goodput / capacity,
        words: `${x(row.goodput / capacity)} × (${row.goodput} of ${capacity}/s)`,
      }),
      (value) => value >= 0.9,
    ),
    atOverload(
      overload,
      workload,
      {
        id: `overload-${workload}-p99`,
        goal: `${name} p99 of admitted requests at 3 and 10 × capacity vs unloaded (the candidates' median at 0.5 ×)`,
        target: '≤ 2 × unloaded',
      },
      (row) => ({
        value: row.admittedP99 / unloaded,
        words: `${x(row.admittedP99 / unloaded)} × (${x(row.admittedP99, 1)} vs ${x(unloaded, 1)} ms)`,
      }),
      (value) => value <= 2,
    ),
    atOverload(
      overload,
      workload,
      {
        id: `overload-${workload}-refusals`,
        goal: `${name} p99 of refusals at 3 and 10 × capacity`,
        target: '≤ 5 ms',
      },
      (row) => ({ value: row.refusedP99, words: `${x(row.refusedP99, 1)} ms` }),
      (value) => value <= 5,
    ),
    atOverload(
      overload,
      workload,
      {
        id: `overload-${workload}-best`,
        goal: `${name} goodput vs concurrencyLimit with the best max (${overload?.max[workload].best ?? '?'})`,
        target: '≥ 0.95 × best',
      },
      (row, load) => ({
        value: row.goodput / of('concurrency-best', load),
        words: `${x(row.goodput / of('concurrency-best', load))} ×`,
      }),
      (value) => value >= 0.95,
    ),
    atOverload(
      overload,
      workload,
      {
        id: `overload-${workload}-mistuned`,
        goal: `${name} goodput vs concurrencyLimit with max 4 × too high (${overload?.max[workload].high ?? '?'}) and 4 × too low (${overload?.max[workload].low ?? '?'})`,
        target: '≥ 1.5 × each',
      },
      (row, load) => {
        const high = row.goodput / of('concurrency-high', load);
        const low = row.goodput / of('concurrency-low', load);
        return { value: Math.min(high, low), words: `${x(high)} × high, ${x(low)} × low` };
      },
      (value) => value >= 1.5,
    ),
    {
      id: `overload-${workload}-light`,
      goal: `${name} at 0.5 × capacity: refusals, and requests/s served vs no limiter`,
      target: '0 refused, ≥ 0.97 × no limiter',
      ...(light === undefined || bare === undefined
        ? notMeasured(overload)
        : {
            measured: `${light.shed} refused, ${x(light.served / bare.served, 3)} × (${light.served} vs ${bare.served}/s)`,
            met: light.shed === 0 && light.served >= 0.97 * bare.served,
          }),
    },
  ];
}

/** The overload section's goals: protection at 3 and 10 × capacity, settling, priorities. */
export function overloadGoals(overload: OverloadResult | undefined): Goal[] {
  const settle = (index: number, id: string): Goal => {
    const run = overload?.settle?.[index];
    return {
      id,
      goal: `overload: the adaptive limit settles after ${run?.what ?? (index === 0 ? 'offered load 0.5 → 3 × capacity' : 'backend capacity halved')}`,
      target: '≤ 5 s',
      ...(run === undefined
        ? notMeasured(overload)
        : run.seconds === null
          ? { measured: `not settled by the end of the run (${x(run.finalLimit, 0)} at the end)`, met: false }
          : { measured: `${x(run.seconds, 1)} s (to ${x(run.finalLimit, 0)})`, met: run.seconds <= 5 }),
    };
  };
  // Judged where the flood meets an instance serving checkout; the cold start is reported beside it.
  const shares = overload?.priorities.find(
    (p) => p.candidate.includes('adaptiveLimit') && p.start === 'serving',
  );
  const cold = overload?.priorities.find((p) => p.candidate.includes('adaptiveLimit') && p.start === 'cold');
  return [
    ...WORKLOADS.flatMap((workload) => workloadGoals(overload, workload)),
    settle(0, 'overload-settle-load'),
    settle(1, 'overload-settle-capacity'),
    {
      id: 'overload-priorities',
      goal: `overload: checkout (0.5 × capacity, share ${CHECKOUT_SHARE}) served 200 within ${OBJECTIVE_MS} ms under a ${FLOOD_LOAD} × flood of browse (the flood meeting an instance serving checkout; on a fresh instance, beside it)`,
      target: '≥ 0.95',
      ...(shares === undefined
        ? notMeasured(overload)
        : {
            measured: `${x(shares.checkoutGood, 3)} of ${shares.checkoutSent}${cold === undefined ? '' : `; fresh instance: ${x(cold.checkoutGood, 3)}`}`,
            met: shares.checkoutGood >= 0.95,
          }),
    },
  ];
}
