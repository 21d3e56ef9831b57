import type { AlgorithmStates } from '../../algorithms';
import type { WarmUpState } from '../../algorithms/warm-up';
import type { AlgorithmName, Policy } from '../../types';

/**
 * Every key's state as numbers in typed arrays, one column per field, indexed by slot: no
 * object per key (a plain object costs a header and a boxed number per field). Three columns
 * fit every algorithm; the sliding log's timestamps live beside them, per slot.
 */
export interface StateColumns {
  a: Float64Array;
  b: Float64Array;
  c: Float64Array;
  /** sliding-log only: the admitted units' times, by slot. */
  readonly logs: Map<number, readonly number[]>;
}

/** Reads an algorithm's state from a slot and writes it back. */
export interface StateCodec<S> {
  decode(columns: StateColumns, slot: number): S;
  encode(state: S, columns: StateColumns, slot: number): void;
}

/** One codec per algorithm; a missing one fails the type check. */
export const CODECS: { readonly [K in AlgorithmName]: StateCodec<AlgorithmStates[K]> } = {
  gcra: {
    decode: (c, slot) => ({ last: c.a[slot] as number, debt: c.b[slot] as number }),
    encode: (s, c, slot) => {
      c.a[slot] = s.last;
      c.b[slot] = s.debt;
    },
  },
  'token-bucket': {
    decode: (c, slot) => ({ tokens: c.a[slot] as number, last: c.b[slot] as number }),
    encode: (s, c, slot) => {
      c.a[slot] = s.tokens;
      c.b[slot] = s.last;
    },
  },
  'leaky-bucket': {
    decode: (c, slot) => ({ excess: c.a[slot] as number, last: c.b[slot] as number }),
    encode: (s, c, slot) => {
      c.a[slot] = s.excess;
      c.b[slot] = s.last;
    },
  },
  'fixed-window': {
    decode: (c, slot) => ({ start: c.a[slot] as number, count: c.b[slot] as number }),
    encode: (s, c, slot) => {
      c.a[slot] = s.start;
      c.b[slot] = s.count;
    },
  },
  'sliding-window': {
    decode: (c, slot) => ({
      start: c.a[slot] as number,
      previous: c.b[slot] as number,
      current: c.c[slot] as number,
    }),
    encode: (s, c, slot) => {
      c.a[slot] = s.start;
      c.b[slot] = s.previous;
      c.c[slot] = s.current;
    },
  },
  'sliding-log': {
    decode: (c, slot) => ({ times: c.logs.get(slot) ?? [] }),
    encode: (s, c, slot) => {
      c.logs.set(slot, s.times);
    },
  },
};

/** Guava warm-up's state: stored permits and the next free time. */
const WARM_UP: StateCodec<WarmUpState> = {
  decode: (c, slot) => ({ stored: c.a[slot] as number, next: c.b[slot] as number }),
  encode: (s, c, slot) => {
    c.a[slot] = s.stored;
    c.b[slot] = s.next;
  },
};

/** The codec of the state a policy's step keeps (a warming policy keeps Guava's). */
export function codecOf(policy: Policy): StateCodec<unknown> {
  return (policy.warmupMs > 0 ? WARM_UP : CODECS[policy.algorithm]) as StateCodec<unknown>;
}

/** The namespace of a policy's state: its algorithm, or `warm-up`, whose state differs. */
export function namespaceOf(policy: Policy): string {
  return policy.warmupMs > 0 ? 'warm-up' : policy.algorithm;
}
