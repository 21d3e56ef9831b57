import type { Algorithm, AlgorithmStates } from '../../algorithms';
import { fixedWindow } from '../../algorithms/fixed-window';
import { gcra } from '../../algorithms/gcra';
import { leakyBucket } from '../../algorithms/leaky-bucket';
import { slidingLog } from '../../algorithms/sliding-log';
import { slidingWindow } from '../../algorithms/sliding-window';
import { verdictOf, type Frame, type NumericAlgorithm } from '../../algorithms/step';
import { tokenBucket } from '../../algorithms/token-bucket';
import { warmUp, type WarmUpState } from '../../algorithms/warm-up';
import type { AlgorithmName, Policy, Verdict } from '../../types';
import type { SlotTable, StateColumns } from './slot-table';

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

/** Decides one request of one kind of state against the slot table, with the store's frame. */
export type Decide = (
  table: SlotTable,
  index: Map<string, number>,
  key: string,
  policy: Policy,
  now: number,
  cost: number,
  frame: Frame,
) => Verdict;

/**
 * An algorithm whose state is numbers decides on the columns themselves, through the store's
 * frame: no object for the state read, the state written, or the step. Its call is the one call
 * site that sees several algorithms; everything around it sees the same hidden classes whatever
 * the algorithm.
 */
function numericDecide<S>(algorithm: NumericAlgorithm<S>): Decide {
  const { decide } = algorithm;
  return function decideInColumns(table, index, key, policy, now, cost, frame) {
    const found = table.slotOf(index, key);
    frame.nowMs = now;
    frame.live = found >= 0 && table.isLive(found, now);
    if (frame.live) {
      const { a, b, c } = table.columns;
      frame.s0 = a[found] as number;
      frame.s1 = b[found] as number;
      frame.s2 = c[found] as number;
    }
    decide(frame, policy, cost);
    if (frame.write) {
      const slot = table.keep(index, key, found, now, now + frame.ttlMs);
      // After keep: growing the table replaces the columns.
      const { a, b, c } = table.columns;
      a[slot] = frame.s0;
      b[slot] = frame.s1;
      c[slot] = frame.s2;
    }
    return verdictOf(frame);
  };
}

/** An algorithm whose state is an object (sliding-log's list, warm-up) decides through its codec. */
function objectDecide<S>(algorithm: Algorithm<S>, codec: StateCodec<S>): Decide {
  return function decideWithObjects(table, index, key, policy, now, cost) {
    const slot = table.find(index, key, now);
    const step = algorithm.step(
      slot === undefined ? undefined : codec.decode(table.columns, slot),
      policy,
      now,
      cost,
    );
    if (step.state !== undefined)
      codec.encode(step.state, table.columns, table.claim(index, key, now, now + step.ttlMs));
    return step.verdict;
  };
}

const DECIDE: { readonly [K in AlgorithmName]: Decide } = {
  gcra: numericDecide(gcra),
  'token-bucket': numericDecide(tokenBucket),
  'leaky-bucket': numericDecide(leakyBucket),
  'fixed-window': numericDecide(fixedWindow),
  'sliding-window': numericDecide(slidingWindow),
  'sliding-log': objectDecide(slidingLog, CODECS['sliding-log']),
};
const DECIDE_WARM_UP = objectDecide(warmUp, WARM_UP);

/** The decide function of a policy's kind of state. */
export function decideOf(policy: Policy): Decide {
  return policy.warmupMs > 0 ? DECIDE_WARM_UP : DECIDE[policy.algorithm];
}
