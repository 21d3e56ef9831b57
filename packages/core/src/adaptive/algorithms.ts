import { aimd, type AimdState } from './aimd';
import { gradient2, type Gradient2State } from './gradient2';
import type { LimitAlgorithm } from './limit-algorithm';
import { vegas, type VegasState } from './vegas';

/** Name of an adaptive limit algorithm (option `algorithm`): Netflix concurrency-limits' Vegas, Gradient2, AIMD. */
export type AdaptiveAlgorithmName = 'vegas' | 'gradient2' | 'aimd';

/** The state of each algorithm. */
interface AlgorithmStates {
  vegas: VegasState;
  gradient2: Gradient2State;
  aimd: AimdState;
}

/**
 * Every adaptive algorithm by name: a closed table, so a name without its step fails the type
 * check.
 */
export const LIMIT_ALGORITHMS: { readonly [N in AdaptiveAlgorithmName]: LimitAlgorithm<AlgorithmStates[N]> } =
  {
    vegas,
    gradient2,
    aimd,
  };

/** The names, in the order error messages list them. */
export const ADAPTIVE_ALGORITHMS = Object.keys(LIMIT_ALGORITHMS) as readonly AdaptiveAlgorithmName[];
