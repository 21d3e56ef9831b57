import type { BlockPolicy, Verdict } from '../types';
import { verdict } from './step';

/**
 * A key's block: when its last block ends (epoch ms) and how long it lasted. Kept, after the
 * block ends, for the block policy's `maxDurationMs`: a key refused again meanwhile is blocked
 * for `backoff` times as long. The reference the Redis scripts match (`scripts/block.lua.ts`).
 */
export interface BlockRecord {
  readonly until: number;
  readonly lengthMs: number;
}

/**
 * Whether a stored record still counts at `nowMs`: until `maxDurationMs` after its block ends.
 * Decided from the record's own times, not the store's expiry, so that a caller's clock and the
 * store's agree (the store forgets the record at that time, or later).
 */
export function liveBlock(
  record: BlockRecord | undefined,
  block: BlockPolicy,
  nowMs: number,
): BlockRecord | undefined {
  return record !== undefined && nowMs < record.until + block.maxDurationMs ? record : undefined;
}

/**
 * The refusal of a request during a block: nothing of the limit is touched or reported but its
 * capacity; `retryAfterMs` (and `resetMs`) the block's remaining time.
 */
export function blockedVerdict(limit: number, record: BlockRecord, nowMs: number): Verdict {
  const left = record.until - nowMs;
  return verdict(false, limit, 0, left, left, 0, 'blocked');
}

/** Whether a verdict starts a block: a refusal as `'limited'` of a request that takes units. */
export function startsBlock(v: Verdict, cost: number): boolean {
  return !v.allowed && v.reason === 'limited' && cost > 0;
}

/**
 * The block a refusal starts at `nowMs`: `durationMs`, or — the key's last block still
 * remembered (`live`) — `backoff` times the last one's length, at most `maxDurationMs`.
 */
export function nextBlock(live: BlockRecord | undefined, block: BlockPolicy, nowMs: number): BlockRecord {
  const lengthMs =
    live === undefined
      ? block.durationMs
      : Math.min(block.maxDurationMs, Math.floor(live.lengthMs * block.backoff));
  return { until: nowMs + lengthMs, lengthMs };
}

/** How long a store keeps a record written at `nowMs`: until `maxDurationMs` after its block ends. */
export function blockTtlMs(record: BlockRecord, block: BlockPolicy, nowMs: number): number {
  return record.until + block.maxDurationMs - nowMs;
}

/**
 * The refusal that started a block, its retry no sooner than the block's end: the key cannot
 * pass before. Other refusals are as they are.
 */
export function refusalOfBlock(v: Verdict, record: BlockRecord, nowMs: number): Verdict {
  if (v.allowed || v.reason !== 'limited') return v;
  const retryAfterMs = Math.max(v.retryAfterMs, record.until - nowMs);
  return verdict(false, v.limit, v.remaining, v.resetMs, retryAfterMs, 0, 'limited');
}
