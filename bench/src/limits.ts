/**
 * The limits every candidate gets, the same for sluice and the peers. sluice's GCRA keeps
 * `(burst + 2) × window × 1000` below 2^53, so 100 M per minute is about the largest limit of a
 * 1-minute window: far more than any run decides on one key, so every decision admits.
 */
export const ADMIT_ALL = 100_000_000;

/** The window of every limit, ms. */
export const WINDOW_MS = 60_000;

/**
 * The sliding log's limits per {@link LOG_WINDOW_MS}: a typical one, which the goals judge, and a
 * wide one reported beside it (past `PACKED_LOG_MAX`, its log is a sorted set on Redis). At the
 * Redis section's rates (10 000 keys in turn, a few hundred thousand decisions/s at most) a key
 * sees far fewer than either per window, so every decision admits.
 */
export const LOG_LIMIT = 100;
export const WIDE_LOG_LIMIT = 1000;
export const LOG_WINDOW_MS = 1000;
