export { createAdaptiveLimiter } from './create-adaptive-limiter';
export { ADAPTIVE_ALGORITHMS } from './algorithms';
export type { AdaptiveAlgorithmName } from './algorithms';
export { ADAPTIVE_OPTION_NAMES, OTHER_PARTITION } from './resolve-adaptive-options';
export type { EventLoopMonitor } from './event-loop-lag';
export type {
  AdaptiveAcquireOptions,
  AdaptiveDecision,
  AdaptiveEventLoopOptions,
  AdaptiveLimiter,
  AdaptiveLimiterOptions,
  AdaptivePartitionStats,
  AdaptivePermit,
  AdaptiveQueueOptions,
  AdaptiveRefusal,
  AdaptiveReleaseOptions,
  AdaptiveStats,
} from './adaptive-types';
