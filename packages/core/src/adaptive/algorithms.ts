import { aimd, type AimdState } from './aimd';
import { gradient2, type Gradient2State } from './gradient2';
import type { LimitAlgorithm } from './limit-algorithm';
import { vegas, type VegasState } from './vegas';

/**
 * Every adaptive algorithm by name: a closed table, so a name without its step fails the type
 * check.
 */
export const LIMIT_ALGORITHMS: {
  readonly gradient2: LimitAlgorithm<Gradient2State>;
  readonly vegas: LimitAlgorithm<VegasState>;
  readonly aimd: LimitAlgorithm<AimdState>;
} = { gradient2, vegas, aimd };

/** Name of an adaptive limit algorithm (option `algorithm`). */
export type AdaptiveAlgorithmName = keyof typeof LIMIT_ALGORITHMS;

/** The names, in the order error messages list them. */
export const ADAPTIVE_ALGORITHMS = Object.keys(LIMIT_ALGORITHMS) as readonly AdaptiveAlgorithmName[];
