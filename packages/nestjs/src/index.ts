export { SluiceModule } from './sluice-module';
export type { SluiceModuleAsyncOptions } from './sluice-module';
export { SluiceGuard } from './sluice-guard';
export {
  AdaptiveLimit,
  ADAPTIVE_LIMIT_METADATA,
  ConcurrencyLimit,
  CONCURRENCY_LIMIT_METADATA,
  RateLimit,
  SkipRateLimit,
  RATE_LIMIT_METADATA,
} from './decorators';
export type { AdaptiveLimitMetadata, ConcurrencyLimitMetadata, RateLimitMetadata } from './decorators';
export type {
  AdaptiveLimitOptions,
  CompleteRateLimitOptions,
  ConcurrencyLimitOptions,
  NestAdaptiveFallback,
  NestConcurrencyFallback,
  NestFallback,
  NestHttpRequest,
  RateLimitOptions,
  SluiceModuleOptions,
} from './options';
export type { AdaptiveDecision, ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  AdaptiveLimitEvent,
  CallbackErrorEvent,
  CallbackSource,
  ConcurrencyLimitEvent,
  HeaderMode,
  JsonValue,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';
