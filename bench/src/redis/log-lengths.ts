import { RedisStore, type Policy } from '@sluice/core';
import { resolvePolicy } from '@sluice/core/adapter';
import type Redis from 'ioredis';

/** One case of the instruction counts (see instructions.ts). */
export interface LogCase {
  readonly name: string;
  readonly decide: (key: string) => Promise<boolean>;
  readonly prepare?: () => Promise<unknown>;
}

/** Keys a round decides on, each holding a log of its own. */
const KEYS = 64;
/**
 * Time between a key's entries, and between rounds, so that each decision sees one entry leave:
 * its window (length steps) at least an hour, or the logs' expiry (on the requests' clock, set in
 * real time) would pass while valgrind's Redis works through the cases.
 */
const stepOf = (length: number): number => Math.ceil(3_600_000 / length);
/** The batch queue's places per slot while not full (`MAX_IN_FLIGHT` of batch-queue.ts). */
const PLACES = 2;
/** The largest limit a sliding log may have: the sorted set's cases use it. */
const MAX_LOG_LIMIT = 100_000;

/**
 * The sliding log's cost by its length, in its two forms on Redis: as one string (a limit up to
 * `PACKED_LOG_MAX` of packed-log.lua.ts) and as a sorted set (a larger limit). For each length,
 * 64 keys each hold a log of `length` live entries a step apart (a window of `length` steps);
 * every decision comes one step later than the key's last, so one entry leaves and one comes: the
 * steady state of a busy key. Lone: one decision a call; batch: 64 a call (one per key), on a
 * caller's clock (the log's expiry is the same either way).
 *
 * `packedMax` is the store's `PACKED_LOG_MAX`, the largest limit kept as a string: a length up to
 * it is counted in both forms (the string's limit is the length, the sorted set's the largest a
 * log may have), a longer one as a sorted set only.
 */
export function logLengthCases(
  client: Redis,
  lengths: readonly number[],
  packedMax: number,
  batch: number | undefined,
): LogCase[] {
  const peekPolicy = resolvePolicy({ rate: '1/1h' });
  const cases: LogCase[] = [];
  if (batch !== undefined) {
    const store = new RedisStore({ client, batch: { maxSize: batch } });
    cases.push({
      name: 'log peeks',
      decide: async () => {
        await Promise.all(
          Array.from({ length: PLACES }, () =>
            store.consume({ prefix: 'peek', key: 'p', policy: peekPolicy, cost: 0 }),
          ),
        );
        return true;
      },
    });
  }
  for (const length of lengths) {
    const forms: Array<['string' | 'zset', number]> = [['zset', MAX_LOG_LIMIT]];
    if (length <= packedMax) forms.unshift(['string', length]);
    for (const [form, limit] of forms) {
      const policy = resolvePolicy({
        algorithm: 'sliding-log',
        rate: { limit, window: length * stepOf(length) },
      });
      cases.push(logCase(client, policy, form, length, batch, peekPolicy));
    }
  }
  return cases;
}

function logCase(
  client: Redis,
  policy: Policy,
  form: 'string' | 'zset',
  length: number,
  batch: number | undefined,
  peekPolicy: Policy,
): LogCase {
  const store = new RedisStore({ client, batch: batch === undefined ? false : { maxSize: batch } });
  const name = `log ${form} ${length}`;
  const prefix = `log-${form}-${length}-${batch ?? 1}`;
  const start = 1_700_000_000_000;
  const STEP_MS = stepOf(length);
  const consume = (k: number, nowMs: number) =>
    store.consume({ prefix, key: `k${k}`, policy, cost: 1, nowMs }).then((v) => v.allowed);
  // Decisions so far: a lone case's are one a call, key by key; a batch case's a round of all keys.
  let decided = 0;
  return {
    name: batch === undefined ? name : `${name} b${batch}`,
    prepare: async () => {
      // One decision makes the key in the store's form; then its entries are written as the form
      // keeps them (a decision each would take minutes under valgrind).
      for (let k = 0; k < KEYS; k++) {
        // Each key's times a ms apart from the next key's: no two logs alike (a batch decides a
        // key whose state is the one it last decided on without its step).
        const times = Array.from({ length }, (_, i) => start + k + i * STEP_MS);
        await consume(k, start + k);
        const key = store.keyOf({ prefix, key: `k${k}`, policy });
        const type = await client.type(key);
        if (type !== (form === 'string' ? 'string' : 'zset'))
          throw new Error(`${name}: the log is a ${type}: is LONE_PACKED_MAX the store's PACKED_LOG_MAX?`);
        await client.del(key);
        if (form === 'string') {
          // A base time (a double), then each time less it (32 bits): see packed-log.lua.ts.
          const bytes = Buffer.alloc(8 + 4 * length);
          bytes.writeDoubleLE(start, 0);
          times.forEach((time, i) => bytes.writeUInt32LE(time - start, 8 + 4 * i));
          await client.set(key, bytes, 'PX', 3_600_000);
        } else {
          await client.zadd(key, ...times.flatMap((time) => [time, `${time}:0`]));
          await client.pexpire(key, 3_600_000);
        }
      }
    },
    decide: async () => {
      if (batch === undefined) {
        const k = decided % KEYS;
        const round = Math.floor(decided / KEYS);
        decided++;
        return consume(k, start + KEYS + (length + round) * STEP_MS);
      }
      // One time for the round, as a batch's requests have: after every key's leaving entry.
      const nowMs = start + KEYS + (length + decided++) * STEP_MS;
      // Peeks that take the slot's places, so that the round's decisions leave as one call.
      const ahead = Array.from({ length: PLACES }, () =>
        store.consume({ prefix: 'peek', key: 'p', policy: peekPolicy, cost: 0 }),
      );
      const all = Array.from({ length: KEYS }, (_, k) => consume(k, nowMs));
      await Promise.all(ahead);
      return (await Promise.all(all)).every(Boolean);
    },
  };
}
