// The floor of a Redis round trip per request, without a limiter (issue 11): what any Redis call
// per request costs an app, for the HTTP floor variants (apps.ts) and alloc-probe's PROBE_FLOOR.
import type Redis from 'ioredis';

const SCRIPT = 'local r = {} for i = 1, #KEYS do r[i] = 1 end return r';

/**
 * A function that waits for one Redis round trip per call: `get`, an ioredis GET of `key` each;
 * `batch`, one reply of a batched EVAL (up to 64 calls a batch, two batches on their way, full
 * ones at once up to sixteen), as sluice's store batches, without its limiter.
 */
export function redisRoundTrip(redis: Redis, key: string, kind: 'get' | 'batch'): () => Promise<unknown> {
  if (kind === 'get') return () => redis.get(key);
  let waiting: Array<(value: unknown) => void> = [];
  let flying = 0;
  const room = (): boolean => flying < 2 || (waiting.length >= 64 && flying < 16);
  const send = (): void => {
    const batch = waiting.length > 64 ? waiting.splice(0, 64) : waiting;
    if (batch === waiting) waiting = [];
    flying++;
    void (redis.call('eval', SCRIPT, batch.length, ...batch.map(() => key)) as Promise<number[]>).then(
      (replies) => {
        flying--;
        while (waiting.length > 0 && room()) send();
        for (let i = 0; i < batch.length; i++) (batch[i] as (value: unknown) => void)(replies[i]);
      },
    );
  };
  return () =>
    new Promise((resolve) => {
      waiting.push(resolve);
      if (room()) send();
    });
}
