export { SluiceModule } from './sluice-module';
export type { SluiceModuleAsyncOptions } from './sluice-module';
export { SluiceGuard } from './sluice-guard';
export {
  ConcurrencyLimit,
  CONCURRENCY_LIMIT_METADATA,
  RateLimit,
  SkipRateLimit,
  RATE_LIMIT_METADATA,
} from './decorators';
export type { ConcurrencyLimitMetadata, RateLimitMetadata } from './decorators';
export type {
  CompleteRateLimitOptions,
  ConcurrencyLimitOptions,
  NestConcurrencyFallback,
  NestFallback,
  NestHttpRequest,
  RateLimitOptions,
  SluiceModuleOptions,
} from './options';
export type { ConcurrencyDecision, Decision } from '@sluice/core';
export type {
  CallbackErrorEvent,
  CallbackSource,
  CountWhen,
  ConcurrencyLimitEvent,
  HeaderMode,
  JsonValue,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core/adapter';
