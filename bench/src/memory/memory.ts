import { round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { spawnTsChild } from '../child';
import { HEAP_CANDIDATES } from './candidates';

/** One candidate's heap per key. */
export interface MemoryRow {
  readonly id: string;
  readonly candidate: string;
  readonly bytesPerKey: number;
  /** bytesPerKey / the plain Map's. */
  readonly ofMap: number;
  /** Keys the store says it holds (where it says), to show that none was evicted. */
  readonly held: number | null;
}

/** What the memory section measured. */
export interface MemoryResult {
  readonly keys: number;
  readonly rows: readonly MemoryRow[];
  readonly notes: readonly string[];
}

/**
 * Heap bytes per key after `memoryKeys` distinct keys, one child process per candidate
 * (`--expose-gc`, heap settled by repeated full GCs before and after).
 */
export async function runMemory(settings: Settings): Promise<MemoryResult> {
  const measured: Array<Omit<MemoryRow, 'ofMap'>> = [];
  for (const [index, candidate] of HEAP_CANDIDATES.entries()) {
    progress('memory', `${index + 1}/${HEAP_CANDIDATES.length}`, candidate.name);
    const child = spawnTsChild('memory/memory-child.ts', {
      nodeArgs: ['--expose-gc', '--max-old-space-size=4096'],
      env: { BENCH_HEAP_CANDIDATE: candidate.id, BENCH_MEMORY_KEYS: String(settings.memoryKeys) },
    });
    try {
      const result = await child.first('result');
      measured.push({
        id: candidate.id,
        candidate: candidate.name,
        bytesPerKey: Number(result.bytesPerKey),
        held: typeof result.held === 'number' ? result.held : null,
      });
    } finally {
      await child.stop();
    }
  }
  const map = measured.find((row) => row.id === 'map')?.bytesPerKey ?? Number.NaN;
  return {
    keys: settings.memoryKeys,
    rows: measured.map((row) => ({
      ...row,
      bytesPerKey: round(row.bytesPerKey, 1),
      ofMap: round(row.bytesPerKey / map, 3),
    })),
    notes: [
      'key texts are built before the baseline (the caller holds them); a store’s own copies and derived keys count',
      'sluice: MemoryStore({ maxKeys: keys }), limit 100 per minute; peers: limit 100 per minute, their defaults otherwise',
    ],
  };
}
