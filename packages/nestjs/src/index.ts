export { SluiceModule } from './sluice-module';
export type { SluiceModuleAsyncOptions } from './sluice-module';
export { SluiceGuard } from './sluice-guard';
export { RateLimit, SkipRateLimit, RATE_LIMIT_METADATA } from './decorators';
export type { RateLimitMetadata } from './decorators';
export type {
  CompleteRateLimitOptions,
  NestFallback,
  NestHttpRequest,
  RateLimitOptions,
  SluiceModuleOptions,
} from './options';
export type {
  CallbackErrorEvent,
  Decision,
  HeaderMode,
  LimitEvent,
  MissingKeyMode,
  StaticFallback,
  TrustProxy,
} from '@sluice/core';
