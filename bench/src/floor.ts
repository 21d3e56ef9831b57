/**
 * The floor for an in-process decision: a plain `Map` token bucket, awaited like a store call.
 * No validation, no bounds, no options: what nothing can beat.
 */
export function mapTokenBucket(capacity: number, perMs: number) {
  const buckets = new Map<string, { tokens: number; last: number }>();
  return async (key: string, now: number): Promise<boolean> => {
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
