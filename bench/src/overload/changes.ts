import { round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { measure, one, start, type Children } from './measure-run';
import type { Phase } from './open-loop';
import {
  BACKEND_CAPACITY,
  CHECKOUT_LOAD,
  CHECKOUT_SHARE,
  FLOOD_LOAD,
  CANDIDATE_NAMES,
  SLOTS,
  type CandidateSpec,
} from './scenario';
import { settleSeconds } from './settle';

/** The limit's settling after a change, on the backend workload. */
export interface SettleRun {
  readonly what: string;
  /** When the change happened, ms from the start. */
  readonly atMs: number;
  /**
   * Seconds from the change until the limit stayed in its band; `null` when it had not by the
   * end of the run (JSON has no Infinity) or there were no samples.
   */
  readonly seconds: number | null;
  readonly finalLimit: number;
  readonly samples: ReadonlyArray<readonly [number, number]>;
  /** 200s within the objective per second, by 100 ms of answer time. */
  readonly goodput: readonly number[];
}

/**
 * How the flood begins: on an instance already serving checkout (and browse at its usual rate)
 * for a second, as at a sale's opening; or on a fresh instance, everything at once (a new
 * instance joining under the flood: its partitions have not been seen, so browse borrows the
 * whole limit until checkout's first requests are refused and its permits come back).
 */
export const PRIORITY_STARTS = ['serving', 'cold'] as const;
export type PriorityStart = (typeof PRIORITY_STARTS)[number];

/** Browse's usual rate before the flood, × capacity. */
export const USUAL_BROWSE = 0.3;

export interface PriorityRow {
  readonly candidate: string;
  readonly start: PriorityStart;
  /** Share of checkout requests (sent during the flood) answered 200 within the objective. */
  readonly checkoutGood: number;
  readonly checkoutSent: number;
  /** Browse goodput during the flood, requests/s. */
  readonly browseGoodput: number;
}

/** The adaptive limit after a change: offered load 0.5 → 3 × capacity, then the backend halving. */
export async function settleRuns(
  children: Children,
  settings: Settings,
  timeoutMs: number,
): Promise<SettleRun[]> {
  const before = 3000 * settings.overloadSeconds;
  const after = 8000 * settings.overloadSeconds;
  const runs: SettleRun[] = [];
  for (const what of [
    'offered load 0.5 → 3 × capacity',
    'backend capacity halved at 3 × capacity',
  ] as const) {
    const port = await start(children, 'backend', { kind: 'adaptive' });
    const halving = what.startsWith('backend');
    progress('overload', 'settle', what);
    const phases = halving
      ? one(3 * BACKEND_CAPACITY, before + after)
      : [...one(0.5 * BACKEND_CAPACITY, before), ...one(3 * BACKEND_CAPACITY, after)];
    const run = await measure(children, port, phases, {
      timeoutMs,
      sample: true,
      onStart: halving
        ? () => {
            const timer = setTimeout(
              () => void children.byPort.get(port)?.request({ type: 'resize', port, slots: SLOTS / 2 }),
              before,
            );
            timer.unref();
          }
        : undefined,
    });
    const settled = settleSeconds(run.samples, before, after);
    runs.push({
      what,
      atMs: before,
      seconds: Number.isFinite(settled.seconds) ? round(settled.seconds, 2) : null,
      finalLimit: round(settled.final, 1),
      samples: run.samples,
      goodput: run.buckets.goodDone.map((count) => count * 10),
    });
  }
  return runs;
}

export async function priorities(
  children: Children,
  best: number,
  settings: Settings,
  timeoutMs: number,
): Promise<PriorityRow[]> {
  const rows: PriorityRow[] = [];
  const specs: Array<[string, CandidateSpec]> = [
    [`${CANDIDATE_NAMES.adaptive}, shares checkout ${CHECKOUT_SHARE}`, { kind: 'adaptive-shares' }],
    [`${CANDIDATE_NAMES['concurrency-best']} (${best}, no priorities)`, { kind: 'concurrency', max: best }],
  ];
  const flood = { '/browse': FLOOD_LOAD * BACKEND_CAPACITY, '/checkout': CHECKOUT_LOAD * BACKEND_CAPACITY };
  // Before the flood, on paths of their own (a query the routes ignore), so that only the
  // requests sent during the flood are counted.
  const before = {
    '/browse?before': USUAL_BROWSE * BACKEND_CAPACITY,
    '/checkout?before': CHECKOUT_LOAD * BACKEND_CAPACITY,
  };
  for (const begin of PRIORITY_STARTS) {
    for (const [candidate, spec] of specs) {
      const port = await start(children, 'backend', spec);
      const seconds = 2 * settings.overloadSeconds;
      const phases: Phase[] = [{ ms: 1000 * seconds, rates: flood }];
      if (begin === 'serving') phases.unshift({ ms: 500 * seconds, rates: before });
      const run = await measure(children, port, phases, { timeoutMs });
      const checkout = run.paths['/checkout'];
      rows.push({
        candidate,
        start: begin,
        checkoutGood: round((checkout?.good ?? 0) / Math.max(1, checkout?.sent ?? 0), 3),
        checkoutSent: checkout?.sent ?? 0,
        browseGoodput: Math.round((run.paths['/browse']?.good ?? 0) / seconds),
      });
    }
  }
  return rows;
}
