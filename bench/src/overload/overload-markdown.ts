import type { OverloadResult } from './overload';
import { collapsed } from './overload-goals';
import { WORKLOADS } from './scenario';

const x = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** The adaptive limit's samples as `min–max (median)` over a run. */
function limitRange(samples: ReadonlyArray<readonly [number, number]> | undefined): string {
  if (samples === undefined || samples.length === 0) return '';
  const limits = samples.map(([, limit]) => limit).sort((a, b) => a - b);
  const mid = limits[limits.length >> 1] as number;
  return `${x(limits[0] as number, 0)}–${x(limits[limits.length - 1] as number, 0)} (${x(mid, 0)})`;
}

/** One table per workload: every candidate at every load. */
export function overloadTables(overload: OverloadResult): string[] {
  const lines: string[] = [];
  for (const workload of WORKLOADS) {
    const capacity = overload.capacity[workload];
    const max = overload.max[workload];
    const down = collapsed(overload, workload).map((row) => row.name);
    lines.push(
      '',
      `### ${workload === 'backend' ? 'A backend of fixed capacity' : 'The event loop saturated'}: capacity ${capacity} requests/s (concurrencyLimit max: best ${max.best}, high ${max.high}, low ${max.low})`,
      '',
      ...table(
        [
          'candidate',
          'load',
          'offered/s',
          'goodput/s',
          '× capacity',
          'p50 ms',
          'p99 ms',
          'refusal p99 ms',
          'shed',
          'gave up',
          'adaptive limit',
        ],
        overload.rows
          .filter((row) => row.workload === workload)
          .map((row) => [
            row.name,
            `${row.load} ×`,
            String(row.offered),
            String(row.goodput),
            x(row.goodput / capacity, 2),
            x(row.admittedP50),
            x(row.admittedP99),
            x(row.refusedP99, 2),
            String(row.shed),
            String(row.timedOut),
            limitRange(row.samples),
          ]),
      ),
      '',
      `Collapsed (goodput at 10 × under half the capacity): ${down.length === 0 ? 'none' : down.join(', ')}.`,
    );
  }
  if (overload.settle !== undefined) {
    lines.push(
      '',
      '### Settling of the adaptive limit (backend workload)',
      '',
      ...table(
        ['change', 'at', 'settled after', 'final limit'],
        overload.settle.map((run) => [
          run.what,
          `${x(run.atMs / 1000)} s`,
          run.seconds === null ? 'not settled' : `${x(run.seconds)} s`,
          x(run.finalLimit, 0),
        ]),
      ),
    );
  }
  lines.push(
    '',
    '### Priorities: checkout under a flood of browse (backend workload)',
    '',
    ...table(
      [
        'candidate',
        'the flood meets',
        'checkout served within the objective',
        'checkout sent',
        'browse goodput/s',
      ],
      overload.priorities.map((row) => [
        row.candidate,
        row.start === 'serving' ? 'an instance serving checkout' : 'a fresh instance',
        x(row.checkoutGood, 3),
        String(row.checkoutSent),
        String(row.browseGoodput),
      ]),
    ),
  );
  const sweep = WORKLOADS.map(
    (workload) =>
      `sweep of max at 3 × capacity, ${workload}: ${overload.sweep
        .filter((s) => s.workload === workload)
        .map((s) => `${s.max} → ${s.goodput}/s (p99 ${x(s.admittedP99)} ms)`)
        .join(', ')}`,
  );
  lines.push('', ...[...overload.notes, ...sweep].map((note) => `- ${note}`));
  return lines;
}
