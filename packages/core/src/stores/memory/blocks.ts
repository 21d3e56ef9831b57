import { blockTtlMs, liveBlock, type BlockRecord } from '../../algorithms/block';
import type { BlockPolicy } from '../../types';
import type { SlotTable } from './slot-table';

/**
 * The namespace of the memory store's block records: one per prefix and key, whatever the
 * algorithm or scope (as Redis keeps one `…:{<key>}:block@1`). No algorithm is named so.
 */
export const BLOCKS = 'block';

/**
 * The key's block record when it still counts at `now` (see `liveBlock`). A record is two
 * numbers in the slot table beside the states (`a` its end, `b` its length), so blocked keys
 * count toward `maxKeys` as any state does, and expire `maxDurationMs` after their block ends.
 */
export function readBlock(
  table: SlotTable,
  index: Map<string, number>,
  key: string,
  now: number,
  block: BlockPolicy,
): BlockRecord | undefined {
  const slot = table.find(index, key, now);
  if (slot === undefined) return undefined;
  const { a, b } = table.columns;
  return liveBlock({ until: a[slot] as number, lengthMs: b[slot] as number }, block, now);
}

/** Stores the key's block record, to expire `maxDurationMs` after its block ends. */
export function writeBlock(
  table: SlotTable,
  index: Map<string, number>,
  key: string,
  now: number,
  record: BlockRecord,
  block: BlockPolicy,
): void {
  const slot = table.claim(index, key, now, now + blockTtlMs(record, block, now));
  // After claim: growing the table replaces the columns.
  const { a, b, c } = table.columns;
  a[slot] = record.until;
  b[slot] = record.lengthMs;
  c[slot] = 0;
}
