export { createConcurrencyLimiter } from './create-concurrency-limiter';
export { CONCURRENCY_OPTION_NAMES, DEFAULT_LEASE_MS, MIN_LEASE_MS } from './resolve-concurrency-options';
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
} from './concurrency-types';
