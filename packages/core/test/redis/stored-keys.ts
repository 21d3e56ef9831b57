import type Redis from 'ioredis';

/** What one Redis key holds: its type, its value (a string's bytes in hex, a sorted set's members and scores) and its TTL. */
export interface StoredKey {
  readonly type: string;
  readonly value: string | readonly string[] | null;
  readonly ttlMs: number;
}

/** What the keys under `prefix` hold, by key without the prefix. */
export async function storedKeys(client: Redis, prefix: string): Promise<Record<string, StoredKey>> {
  const held: Record<string, StoredKey> = {};
  for (const key of await client.keys(`${prefix}:*`)) {
    const type = await client.type(key);
    const value =
      type === 'string'
        ? ((await client.getBuffer(key))?.toString('hex') ?? null)
        : type === 'zset'
          ? await client.zrange(key, 0, -1, 'WITHSCORES')
          : null;
    held[key.slice(prefix.length)] = { type, value, ttlMs: await client.pttl(key) };
  }
  return held;
}

/**
 * The same keys, types and values in both, and TTLs within half a second: each TTL runs from its
 * own write (or its batch's end), and the two runs compared wrote moments apart.
 */
export function expectSameKeys(batched: Record<string, StoredKey>, alone: Record<string, StoredKey>): void {
  expect(Object.keys(batched).sort()).toEqual(Object.keys(alone).sort());
  for (const [key, { type, value, ttlMs }] of Object.entries(alone)) {
    expect([key, batched[key]?.type, batched[key]?.value]).toEqual([key, type, value]);
    expect(Math.abs((batched[key]?.ttlMs ?? Number.NaN) - ttlMs)).toBeLessThan(500);
  }
}
