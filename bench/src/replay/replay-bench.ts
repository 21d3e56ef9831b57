import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTsChild } from '../child';
import { round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { LOG_CLIENTS, writeAccessLog } from './access-log';

/** The three candidates every replay runs, as `sluice replay --policy`. */
export const REPLAY_POLICIES = ['gcra 10r/s burst=20', 'fixed-window 600/1m', 'leaky-bucket 10r/s burst=20'];

/** One log replayed. */
export interface ReplayRow {
  readonly lines: number;
  /** Wall time of the replay in its process: reading, parsing, three policies, summaries. */
  readonly seconds: number;
  /** CPU time of the replaying process (user + system), s: the same figure on a busy machine. */
  readonly cpuSeconds: number;
  readonly linesPerSecond: number;
  /** Peak resident memory of the replaying process, MB. */
  readonly maxRssMb: number;
  /** Requests each policy limited (a check that the replay did real work). */
  readonly limited: readonly number[];
}

/** What the replay section measured: a fifth of the log, then all of it. */
export interface ReplayResult {
  readonly policies: readonly string[];
  readonly rows: readonly ReplayRow[];
  readonly notes: readonly string[];
}

/**
 * `sluice replay` on a generated nginx log of `replayLines` lines (and of a fifth of that, to
 * show memory does not grow with the log), each in its own process through the built
 * `@sluice/cli`.
 */
export async function runReplayBench(settings: Settings): Promise<ReplayResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-replay-'));
  const rows: ReplayRow[] = [];
  try {
    for (const lines of [Math.max(1, Math.round(settings.replayLines / 5)), settings.replayLines]) {
      const path = join(dir, `access-${lines}.log`);
      progress('replay', `writing a ${lines.toLocaleString('en')}-line log`);
      await writeAccessLog(path, lines);
      progress(
        'replay',
        `replaying ${lines.toLocaleString('en')} lines against ${REPLAY_POLICIES.length} policies`,
      );
      const child = spawnTsChild('replay/replay-child.ts', {
        env: { BENCH_REPLAY_LOG: path, BENCH_REPLAY_POLICIES: JSON.stringify(REPLAY_POLICIES) },
      });
      try {
        const result = await child.first('result');
        if (result.requests !== lines || result.unparsed !== 0) {
          throw new Error(
            `replay read ${String(result.requests)} of ${lines} lines (${String(result.unparsed)} unparsed)`,
          );
        }
        const seconds = Number(result.seconds);
        rows.push({
          lines,
          seconds: round(seconds, 2),
          cpuSeconds: round(Number(result.cpuSeconds), 2),
          linesPerSecond: Math.round(lines / seconds),
          maxRssMb: round(Number(result.maxRssMb), 1),
          limited: result.limited as number[],
        });
      } finally {
        await child.stop();
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    policies: REPLAY_POLICIES,
    rows,
    notes: [
      `nginx combined log over one hour, ${LOG_CLIENTS.toLocaleString('en')} clients skewed so a few are limited; keyed by $remote_addr`,
      'each replay in a fresh process (tsx, the built @sluice/cli), file read and parsed included; peak RSS is the whole process',
    ],
  };
}
