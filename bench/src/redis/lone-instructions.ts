/**
 * Instructions of redis-server per decision (see instructions.ts), printed:
 *
 *   npx tsx bench/src/redis/lone-instructions.ts              (env LONE_N: decisions per case)
 *   LONE_ONLY=gcra,rlf npx tsx ...     (the dumps stay in a temporary folder, for callgrind_annotate)
 *   LONE_BATCH=64 npx tsx ...          (per decision in batches of 64 instead: distinct keys
 *                                      without state, distinct keys each with a state of its own,
 *                                      distinct keys sharing one state text, one hot key)
 *   LONE_LOG=64,256,1024 LONE_PACKED_MAX=<the store's PACKED_LOG_MAX> npx tsx ...
 *                                      (the sliding log's two forms by the length of its logs,
 *                                      alone or with LONE_BATCH: see log-lengths.ts)
 *
 * Writes nothing to bench/results (`pnpm bench` counts a few of these cases in its Redis section).
 */
import { countInstructions } from './instructions';

void countInstructions(
  {
    batch: process.env.LONE_BATCH === undefined ? undefined : Number(process.env.LONE_BATCH),
    only: process.env.LONE_ONLY?.split(','),
    n: Number(process.env.LONE_N ?? 400),
    logLengths: process.env.LONE_LOG?.split(',').map(Number),
    packedMax: Number(process.env.LONE_PACKED_MAX ?? 0),
  },
  (row) =>
    console.log(
      `${row.name.padEnd(26)} ${(row.perDecision / 1000).toFixed(1).padStart(7)} k  admitted ${row.admitted}/${row.decisions}  ${row.file}`,
    ),
);
