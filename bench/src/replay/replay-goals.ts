import type { Goal } from '../report/results';
import type { ReplayResult } from './replay-bench';

/** Above this, peak memory would be growing with the log rather than with the stores. */
const MEMORY_GROWTH_LIMIT = 1.25;

/** The goals of issue 15 the replay section judges: speed on a million lines, memory bounded by the stores. */
export function replayGoals(replay: ReplayResult | undefined): Goal[] {
  const small = replay?.rows[0];
  const large = replay?.rows[replay.rows.length - 1];
  const notMeasured = { measured: 'not measured (section not run)', met: null } as const;
  const lines = large?.lines.toLocaleString('en') ?? '1,000,000';
  return [
    {
      id: 'replay-speed',
      goal: `sluice replay: a ${lines}-line access log against 3 policies (issue 15)`,
      target: '< 10 s',
      ...(large === undefined
        ? notMeasured
        : {
            measured: `${large.seconds.toFixed(2)} s (${large.linesPerSecond.toLocaleString('en')} lines/s; CPU ${large.cpuSeconds.toFixed(2)} s)`,
            met: large.lines >= 1_000_000 && large.seconds < 10,
          }),
    },
    {
      id: 'replay-memory',
      goal: `sluice replay: peak memory with ${lines} lines vs a fifth of them (bounded by the stores, not the log)`,
      target: `≤ ${MEMORY_GROWTH_LIMIT} ×`,
      ...(small === undefined || large === undefined
        ? notMeasured
        : {
            measured: `${(large.maxRssMb / small.maxRssMb).toFixed(2)} × (${large.maxRssMb} vs ${small.maxRssMb} MB)`,
            met: large.maxRssMb / small.maxRssMb <= MEMORY_GROWTH_LIMIT,
          }),
    },
  ];
}
