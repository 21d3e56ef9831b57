import type { Policy, PolicyOptions } from '../../src';
import { resolvePolicy } from '../../src/adapter';

/**
 * One policy of every kind of string state, for the batch tests (the sliding log keeps a sorted
 * set, which a batch reads and writes as it goes). Per minute: a key's TTL runs in real time,
 * and a loaded machine must not see one expire between a one-by-one run and the read of its
 * state; tests that step a fake clock step it in seconds.
 */
export const STRING_STATE_OPTIONS: readonly PolicyOptions[] = [
  { algorithm: 'gcra', rate: '10r/m', burst: 4 },
  { algorithm: 'gcra', rate: '5r/m', queue: { maxWaitMs: 60_000 } },
  { algorithm: 'token-bucket', rate: '4r/m', burst: 3, queue: { maxWaitMs: 36_000 } },
  { algorithm: 'token-bucket', rate: '2r/m', warmup: '4m' },
  { algorithm: 'leaky-bucket', rate: '5r/m', burst: 6, delay: 2 },
  { algorithm: 'fixed-window', rate: '12/2m' },
  { algorithm: 'sliding-window', rate: '9/3m' },
];

export const STRING_STATE_POLICIES: readonly Policy[] = STRING_STATE_OPTIONS.map((options) =>
  resolvePolicy(options),
);
