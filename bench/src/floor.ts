/**
 * The floor for an in-process decision: a plain `Map` token bucket, awaited like a store call.
 * No validation, no bounds, no options: what nothing can beat. It reads the clock itself, as
 * every real limiter must (sluice, express-rate-limit and rate-limiter-flexible all do): a floor
 * handed its time for free would measure a limiter that cannot exist.
 */
export function mapTokenBucket(capacity: number, perMs: number) {
  const buckets = new Map<string, { tokens: number; last: number }>();
  return async (key: string): Promise<boolean> => {
    const now = Date.now();
    const bucket = buckets.get(key);
    if (bucket === undefined) {
      buckets.set(key, { tokens: capacity - 1, last: now });
      return true;
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.last) * perMs);
    bucket.last = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
}
