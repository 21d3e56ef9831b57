/**
 * Rate and concurrency limits for Node.js applications: limiters, stores, errors and the parsers of
 * rates and durations. What framework adapters need (the HTTP-neutral request views, reply
 * writers, held requests, option-name lists) is on the subpath `@sluice/core/adapter`.
 *
 * @packageDocumentation
 */
export { createLimiter } from './limiter/create-limiter';
export type {
  ConsumeOptions,
  Limiter,
  LimiterOptions,
  LimiterRulesOptions,
  PeekOptions,
} from './limiter/create-limiter';
export { consumeAll } from './limiter/consume-all';
export type { LimitRequest } from './limiter/consume-all';
export type { RuleOptions } from './limiter/rules';
export type { LimiterInfo, LimiterMetrics, MetricsSink } from './limiter/metrics-sink';
export type { OverrideRate, Overrides } from './limiter/overrides';
export { SluiceConfigError } from './policy/config-error';
export type { SluiceConfigErrorCode } from './policy/config-error';
export { parseDuration } from './policy/duration';
export { parseRate } from './policy/rate';
export type { ParsedRate, RateInput, RateObject } from './policy/rate';
export type { PolicyOptions } from './policy/resolve-policy';
export { MemoryStore } from './stores/memory-store';
export type { MemoryStoreOptions } from './stores/memory-store';
export { RedisStore, type RedisStoreClient, type RedisStoreOptions } from './stores/redis/redis-store';
export type { IoredisLikeClient, NodeRedisLikeClient } from './stores/redis/redis-client';
export type { BatchOption } from './stores/redis/batch-option';
export type { RedisPermits } from './stores/redis/redis-permits';
export type {
  JointPart,
  JointVerdicts,
  PreparedJoint,
  RulesRequest,
  Store,
  StoreRequest,
} from './stores/store';
export { ALGORITHMS } from './types';
export type { AlgorithmName, Decision, DecisionLimit, Policy, Receipt, RejectReason, Verdict } from './types';
export type {
  DegradedMode,
  LimiterEventName,
  LimiterEvents,
  LimiterListener,
  StoreErrorEvent,
} from './resilience/events';
export type { InsuranceOption, OnStoreError } from './resilience/on-store-error';
export type { LeaseOption } from './resilience/token-lease';
export { StoreKeyError, StoreTimeoutError } from './resilience/store-errors';
export type { StoreErrorScope } from './resilience/store-errors';
export { createConcurrencyLimiter } from './concurrency';
export type {
  AcquireOptions,
  ConcurrencyDecision,
  ConcurrencyEventName,
  ConcurrencyEvents,
  ConcurrencyLimiter,
  ConcurrencyLimiterOptions,
  ConcurrencyQueueOptions,
  ConcurrencyRefusal,
  ConcurrencyStats,
  Permit,
} from './concurrency';
export type {
  PermitAcquireReply,
  PermitAcquireRequest,
  PermitKey,
  PermitReleaseRequest,
  PermitRenewReply,
  PermitRenewRequest,
  PermitStore,
} from './stores/permit-store';
export { createAdaptiveLimiter } from './adaptive';
export type {
  AdaptiveAcquireOptions,
  AdaptiveAlgorithmName,
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
  EventLoopMonitor,
} from './adaptive';
