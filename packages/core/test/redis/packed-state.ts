import type { StateKind } from '../../src/stores/redis/scripts';
import { FIELD_BYTES } from '../../src/stores/redis/scripts/state-bytes.lua';

/**
 * The field a bucket's state keeps on Redis only: the expiry its key was given (see
 * `expiry.lua.ts`), which the reference's state has no use for.
 */
export const EXPIRES = 'expires';

/**
 * The fields of each algorithm's state as its Lua script packs them into one string (doubles,
 * little-endian, see `state-bytes.lua.ts`), in the order and with the names of the TypeScript
 * state, so a packed value read back (less {@link EXPIRES}) compares equal to the reference's
 * state object.
 */
export const PACKED_FIELDS: Readonly<
  Record<Exclude<StateKind, 'sliding-log' | 'packed-log'>, readonly string[]>
> = {
  gcra: ['last', 'debt', EXPIRES],
  'token-bucket': ['tokens', 'last', EXPIRES],
  'leaky-bucket': ['excess', 'last', EXPIRES],
  'fixed-window': ['start', 'count'],
  'sliding-window': ['start', 'previous', 'current'],
  'warm-up': ['stored', 'next'],
};

/** A state's bytes as the scripts store it: `numbers` as little-endian doubles. */
export function packState(numbers: readonly number[]): Buffer {
  const bytes = Buffer.alloc(numbers.length * FIELD_BYTES);
  numbers.forEach((n, i) => bytes.writeDoubleLE(n, i * FIELD_BYTES));
  return bytes;
}

/** The numbers of a stored state's bytes (`undefined` when their length is not whole doubles). */
export function unpackState(bytes: Buffer): number[] | undefined {
  if (bytes.length % FIELD_BYTES !== 0) return undefined;
  // `+ 0`: a -0 reads as the 0 the reference keeps (Lua compares them equal).
  return Array.from(
    { length: bytes.length / FIELD_BYTES },
    (_, i) => bytes.readDoubleLE(i * FIELD_BYTES) + 0,
  );
}

/**
 * The state a Redis key holds, in the reference's shape: `raw` is the reply of `GET` as bytes
 * (`getBuffer`: a packed state, the packed log's times, or null) or, for the sliding log's
 * sorted set, of `ZRANGE key 0 -1 WITHSCORES`.
 */
export function storedState(algorithm: StateKind, raw: unknown): unknown {
  if (algorithm === 'packed-log') {
    if (raw === null) return undefined;
    const times = Buffer.isBuffer(raw) ? unpackLog(raw) : undefined;
    return times === undefined ? { malformed: String(raw) } : { times };
  }
  if (algorithm === 'sliding-log') {
    const flat = raw as string[];
    if (flat.length === 0) return undefined;
    const times: number[] = [];
    for (let i = 1; i < flat.length; i += 2) times.push(Number(flat[i]));
    return { times };
  }
  if (raw === null) return undefined;
  const fields = PACKED_FIELDS[algorithm];
  const values = Buffer.isBuffer(raw) ? unpackState(raw) : undefined;
  if (values === undefined || values.length !== fields.length) return { malformed: String(raw) };
  return Object.fromEntries(
    fields.flatMap((field, i) => (field === EXPIRES ? [] : [[field, values[i]] as const])),
  );
}

/** The numbers a key's state holds (see {@link unpackState}), `undefined` when it holds none. */
export async function storedNumbers(
  client: { getBuffer(key: string): Promise<Buffer | null> },
  key: string,
): Promise<number[] | undefined> {
  const bytes = await client.getBuffer(key);
  return bytes === null ? undefined : unpackState(bytes);
}

/**
 * A sliding log's entries that can still count (see `sliding-log.lua.ts`): after its newest
 * entry's time minus the window. The log on Redis keeps the others until a span's first
 * admission trims them; the reference trims at every admission.
 */
export function liveLog(state: unknown, windowMs: number): unknown {
  if (state === undefined) return undefined;
  const { times } = state as { times: number[] };
  const newest = times[times.length - 1] as number;
  return { times: times.filter((time) => time > newest - windowMs) };
}

/**
 * What a differential test compares with the reference's state: {@link storedState}, and of a
 * sliding log only its {@link liveLog}.
 */
export function comparableState(algorithm: StateKind, raw: unknown, windowMs: number): unknown {
  const state = storedState(algorithm, raw);
  return algorithm === 'sliding-log' || algorithm === 'packed-log' ? liveLog(state, windowMs) : state;
}

/** Whether a kind of state is a sliding log's: a sorted set, or its packed string. */
export function isLog(kind: StateKind): boolean {
  return kind === 'sliding-log' || kind === 'packed-log';
}

/**
 * A packed sliding log's times (see `packed-log.lua.ts`): a base time (a double), then each
 * entry's time less the base as a little-endian 32-bit integer; `undefined` for another shape.
 */
export function unpackLog(bytes: Buffer): number[] | undefined {
  if (bytes.length < 12 || (bytes.length - 8) % 4 !== 0) return undefined;
  const base = bytes.readDoubleLE(0);
  return Array.from({ length: (bytes.length - 8) / 4 }, (_, i) => base + bytes.readUInt32LE(8 + 4 * i));
}

/** A packed sliding log's bytes for `times` (ascending), based on the first. */
export function packLog(times: readonly number[], base = times[0] ?? 0): Buffer {
  const bytes = Buffer.alloc(8 + 4 * times.length);
  bytes.writeDoubleLE(base, 0);
  times.forEach((time, i) => bytes.writeUInt32LE(time - base, 8 + 4 * i));
  return bytes;
}
