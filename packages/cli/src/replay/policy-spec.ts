import {
  ALGORITHMS,
  createLimiter,
  MemoryStore,
  SluiceConfigError,
  type AlgorithmName,
  type Limiter,
  type LimiterOptions,
} from '@sluice/core';
import { ReplayInputError } from '../errors';

const SETTINGS = ['rate', 'burst', 'delay', 'nodelay', 'queue', 'warmup'] as const;
const FORMS = `an algorithm (${ALGORITHMS.join(', ')}), one or more rates (10r/s, 600/1m) and settings burst=N, nodelay, delay=N, queue=DURATION, warmup=DURATION`;

/**
 * Reads a policy written as on the command line — the algorithm, the rate and nginx-style
 * settings, in any order: `'gcra 10r/s burst=20'`, `'leaky-bucket rate=10r/s burst=20 nodelay'`,
 * `'fixed-window 600/1m'`, `'token-bucket 5r/s 1000/1h burst=10'` (two rates: both must admit).
 * Without an algorithm it is `gcra`, as in `createLimiter`. Values are checked by the core when
 * the limiter is made ({@link createCandidate}).
 *
 * @param spec - the text of one `--policy`
 * @throws {@link ReplayInputError} for a word that is none of these, or no rate
 * @example
 * ```ts
 * policyOptions('leaky-bucket 10r/s burst=20 delay=5'); // { algorithm: 'leaky-bucket', rate: '10r/s', burst: 20, delay: 5 }
 * ```
 */
export function policyOptions(spec: string): LimiterOptions {
  const options: Record<string, unknown> = {};
  const rates: string[] = [];
  for (const word of spec.trim().split(/\s+/)) {
    if (word === '') continue;
    if ((ALGORITHMS as readonly string[]).includes(word)) {
      if (options.algorithm !== undefined)
        throw specError(spec, `two algorithms ("${String(options.algorithm)}", "${word}")`);
      options.algorithm = word as AlgorithmName;
      continue;
    }
    const eq = word.indexOf('=');
    const name = eq < 0 ? word : word.slice(0, eq);
    const value = eq < 0 ? undefined : word.slice(eq + 1);
    if (name === 'nodelay' && (value === undefined || value === 'true' || value === 'false')) {
      options.nodelay = value !== 'false';
    } else if (name === 'rate' && value !== undefined) {
      rates.push(value);
    } else if ((SETTINGS as readonly string[]).includes(name) && value !== undefined) {
      options[name] =
        name === 'queue'
          ? { maxWaitMs: durationValue(value) }
          : name === 'warmup'
            ? durationValue(value)
            : numberValue(value);
    } else if (eq < 0 && word.includes('/')) {
      rates.push(word);
    } else {
      throw specError(spec, `unknown word "${word}"; expected ${FORMS}`);
    }
  }
  if (rates.length === 0) throw specError(spec, `no rate; expected ${FORMS}`);
  return { ...options, rate: rates.length === 1 ? (rates[0] as string) : rates } as LimiterOptions;
}

/** A candidate policy ready to replay: the limiter (memory store, replay clock) and its label. */
export interface Candidate {
  /** The `--policy` text, spaces normalized. */
  readonly label: string;
  readonly limiter: Limiter;
  readonly store: MemoryStore;
}

/**
 * Makes the limiter of one `--policy` with the real core: `createLimiter` with a bounded
 * `MemoryStore` and the replay's clock, so it decides exactly as it would in a server.
 *
 * @param spec - the policy text
 * @param options.maxKeys - the store's bound (`MemoryStore` `maxKeys`)
 * @param options.clock - the replay's current time, epoch ms
 * @throws {@link ReplayInputError} carrying the core's `SluiceConfigError` message for an invalid value
 */
export function createCandidate(
  spec: string,
  { maxKeys, clock }: { maxKeys: number; clock: () => number },
): Candidate {
  const options = policyOptions(spec);
  try {
    const store = new MemoryStore({ maxKeys });
    return {
      label: spec.trim().split(/\s+/).join(' '),
      limiter: createLimiter({ ...options, store, clock }),
      store,
    };
  } catch (error) {
    if (error instanceof SluiceConfigError) throw specError(spec, error.message);
    throw error;
  }
}

function specError(spec: string, why: string): ReplayInputError {
  return new ReplayInputError(`--policy ${JSON.stringify(spec)}: ${why}`);
}

/** `burst=20` → 20; text that is not a plain number stays text, so the core names it as written. */
function numberValue(text: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** `queue=500` is ms, `queue=500ms` / `queue=2s` a duration for the core to read. */
function durationValue(text: string): number | string {
  return /^\d+$/.test(text) ? Number(text) : text;
}
