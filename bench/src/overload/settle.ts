import { median } from '../measure';

/** The band around its final value the limit must stay in to count as settled (±). */
export const SETTLE_BAND = 0.25;

/**
 * How long after a change at `atMs` the sampled limit took to settle: the first sample time from
 * which every later sample stays within ±{@link SETTLE_BAND} of the final limit (the median over
 * the last three eighths of the `afterMs` that followed the change).
 *
 * @param samples - [ms from the start, limit]
 * @returns seconds (0 when it never left the band; Infinity when its last sample is out of it)
 */
export function settleSeconds(
  samples: ReadonlyArray<readonly [number, number]>,
  atMs: number,
  afterMs: number,
): { seconds: number; final: number } {
  const tailFrom = atMs + afterMs * (5 / 8);
  const final = median(samples.filter(([t]) => t >= tailFrom).map(([, limit]) => limit));
  const inBand = (limit: number) => Math.abs(limit - final) <= SETTLE_BAND * final;
  const after = samples.filter(([t]) => t >= atMs);
  if (after.length === 0 || Number.isNaN(final)) return { seconds: Number.NaN, final };
  let settledAt = atMs;
  for (const [t, limit] of after) if (!inBand(limit)) settledAt = t;
  if (!inBand((after[after.length - 1] as readonly [number, number])[1])) return { seconds: Infinity, final };
  // Settled at the first in-band sample after the last one out of the band.
  const firstIn = after.find(([t, limit]) => t > settledAt && inBand(limit));
  return { seconds: settledAt === atMs ? 0 : ((firstIn?.[0] ?? settledAt) - atMs) / 1000, final };
}
