import {
  ALGORITHMS,
  MemoryStore,
  createLimiter,
  type AlgorithmName,
  type LimiterOptions,
} from '@sluice/core';
import { MemoryStore as ErlMemoryStore, type Options as ErlOptions } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { mapTokenBucket } from '../floor';
import { interleaved, median, round, type Contender } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { ADMIT_ALL, WINDOW_MS } from '../limits';

/** sliding-log keeps one entry per admitted request: it gets a limit it can hold (O(limit) by design). */
const SLIDING_LOG_RATE = { limit: 1000, window: '1s' } as const;

/** One candidate's figure in one scenario. */
export interface MicroRow {
  /** Stable id: `floor`, `sluice:<algorithm>`, `sluice:gcra:sync`, `sluice:gcra:store`, `rate-limiter-flexible`, `express-rate-limit`. */
  readonly id: string;
  readonly candidate: string;
  readonly scenario: 'one hot key' | 'many keys';
  readonly perSecond: number;
  /** Median over the rounds of this candidate's rate / the floor's in the same round. */
  readonly ofFloor: number;
  readonly samples: readonly number[];
}

/** What the micro section measured. */
export interface MicroResult {
  readonly keys: number;
  readonly rounds: number;
  readonly ms: number;
  readonly rows: readonly MicroRow[];
  readonly notes: readonly string[];
}

interface Made extends Contender {
  readonly id: string;
  close?(): void;
}

function sluiceOptions(algorithm: AlgorithmName, maxKeys: number): LimiterOptions {
  return {
    algorithm,
    rate: algorithm === 'sliding-log' ? SLIDING_LOG_RATE : { limit: ADMIT_ALL, window: WINDOW_MS },
    store: new MemoryStore({ maxKeys }),
    ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
  };
}

function contenders(maxKeys: number): Made[] {
  const made: Made[] = [
    { id: 'floor', name: 'plain Map token bucket (floor)', decide: mapTokenBucket(ADMIT_ALL, 1000) },
  ];
  for (const algorithm of ALGORITHMS) {
    const limiter = createLimiter(sluiceOptions(algorithm, maxKeys));
    made.push({
      id: `sluice:${algorithm}`,
      name:
        algorithm === 'sliding-log'
          ? `sluice sliding-log (${SLIDING_LOG_RATE.limit}/${SLIDING_LOG_RATE.window}, O(limit))`
          : `sluice ${algorithm}`,
      decide: (key) => limiter.consume(key),
    });
  }
  // Diagnostics for the lead: the promise-free path, and the store without the limiter around it.
  const syncLimiter = createLimiter(sluiceOptions('gcra', maxKeys));
  made.push({
    id: 'sluice:gcra:sync',
    name: 'sluice gcra, limiter.consumeSync (diagnostic)',
    decide: async (key) => syncLimiter.consumeSync(key),
  });
  const store = new MemoryStore({ maxKeys });
  const { policy } = createLimiter({ ...sluiceOptions('gcra', maxKeys), store });
  made.push({
    id: 'sluice:gcra:store',
    name: 'sluice gcra, MemoryStore.consumeSync alone (diagnostic)',
    decide: async (key) => store.consumeSync({ prefix: 'sluice', key, policy, cost: 1 }),
  });
  const rlf = new RateLimiterMemory({ points: ADMIT_ALL, duration: WINDOW_MS / 1000 });
  made.push({
    id: 'rate-limiter-flexible',
    name: 'rate-limiter-flexible RateLimiterMemory',
    decide: (key) => rlf.consume(key),
  });
  const erl = new ErlMemoryStore();
  erl.init({ windowMs: WINDOW_MS } as ErlOptions);
  made.push({
    id: 'express-rate-limit',
    name: 'express-rate-limit MemoryStore',
    // The store counts; the middleware compares with the limit: both are one decision.
    decide: async (key) => (await erl.increment(key)).totalHits <= ADMIT_ALL,
    close: () => erl.shutdown(),
  });
  return made;
}

/** Client addresses as keys, as `$binary_remote_addr` would key them. */
export function addressKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
}

/**
 * decisions/s of `limiter.consume` per algorithm (memory store) beside the plain-Map floor and
 * the peers' memory limiters: all in this process, interleaved, medians of `microRounds` rounds.
 */
export async function runMicro(settings: Settings): Promise<MicroResult> {
  const scenarios: Array<[MicroRow['scenario'], string[]]> = [
    ['one hot key', ['203.0.113.7']],
    ['many keys', addressKeys(settings.microKeys)],
  ];
  const maxKeys = 2 * settings.microKeys;
  const rows: MicroRow[] = [];
  for (const [scenario, keys] of scenarios) {
    const made = contenders(maxKeys);
    progress(
      'micro',
      `${scenario} (${keys.length.toLocaleString('en')} keys)`,
      `${made.length} candidates`,
      `${settings.microRounds} rounds × ${settings.microMs} ms`,
    );
    const medians = await interleaved(made, keys, {
      rounds: settings.microRounds,
      ms: settings.microMs,
      onRound: (r) => progress('micro', scenario, `round ${r + 1}/${settings.microRounds}`),
    });
    for (const m of made) m.close?.();
    const floor = medians.get(made[0]?.name ?? '')?.samples ?? [];
    for (const { id, name } of made) {
      const samples = medians.get(name);
      if (samples === undefined) continue;
      rows.push({
        id,
        candidate: name,
        scenario,
        perSecond: Math.round(samples.median),
        ofFloor: round(median(samples.samples.map((value, r) => value / (floor[r] ?? Number.NaN))), 3),
        samples: samples.samples.map(Math.round),
      });
    }
  }
  return {
    keys: settings.microKeys,
    rounds: settings.microRounds,
    ms: settings.microMs,
    rows,
    notes: [
      `every decision is awaited and reads the clock itself (Date.now()); the limit of every candidate is ${ADMIT_ALL.toLocaleString('en')} per minute, so all are admissions (sliding-log: 1000/s)`,
      `sluice's MemoryStore holds maxKeys ${maxKeys.toLocaleString('en')} (twice the keys, so none is evicted); peers are unbounded`,
      'rate-limiter-flexible and express-rate-limit are fixed windows of 1 minute',
    ],
  };
}
