/**
 * The limits every candidate gets, the same for sluice and the peers. sluice's GCRA keeps
 * `(burst + 2) × window × 1000` below 2^53, so 100 M per minute is about the largest limit of a
 * 1-minute window: far more than any run decides on one key, so every decision admits.
 */
export const ADMIT_ALL = 100_000_000;

/** The window of every limit, ms. */
export const WINDOW_MS = 60_000;
