import type { StateKind } from '../../src/stores/redis/scripts';

/**
 * The fields of each algorithm's state as its Lua script packs them into one string
 * (`"<a> <b> [<c>]"`), in the order and with the names of the TypeScript state, so a packed
 * value read back compares equal to the reference's state object.
 */
export const PACKED_FIELDS: Readonly<Record<Exclude<StateKind, 'sliding-log'>, readonly string[]>> = {
  gcra: ['last', 'debt'],
  'token-bucket': ['tokens', 'last'],
  'leaky-bucket': ['excess', 'last'],
  'fixed-window': ['start', 'count'],
  'sliding-window': ['start', 'previous', 'current'],
  'warm-up': ['stored', 'next'],
};

/**
 * The state a Redis key holds, in the reference's shape: `raw` is the reply of `GET` (a packed
 * string, or null) or, for the sliding log, of `ZRANGE key 0 -1 WITHSCORES`.
 */
export function storedState(algorithm: StateKind, raw: unknown): unknown {
  if (algorithm === 'sliding-log') {
    const flat = raw as string[];
    if (flat.length === 0) return undefined;
    const times: number[] = [];
    for (let i = 1; i < flat.length; i += 2) times.push(Number(flat[i]));
    return { times };
  }
  if (raw === null) return undefined;
  const values = String(raw).split(' ');
  const fields = PACKED_FIELDS[algorithm];
  if (values.length !== fields.length) return { malformed: raw };
  return Object.fromEntries(fields.map((field, i) => [field, Number(values[i])]));
}
