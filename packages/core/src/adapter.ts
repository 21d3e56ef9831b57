/**
 * `@sluice/core/adapter`: what a framework adapter is built from, for adapter authors. An adapter
 * only translates its framework's request and response to these neutral shapes: it views a request
 * as an {@link HttpRequest}, asks {@link createHttpLimiter} or {@link createHttpConcurrencyLimiter}
 * for an outcome, and writes it (`writeResponseOutcome`, `writeReplyOutcome`, `decideAndWrite`).
 * Applications import limiters, stores and errors from `@sluice/core`, and adapters from their own
 * packages.
 *
 * @packageDocumentation
 */
export * from './keys';
export * from './http';
export { CONCURRENCY_OPTION_NAMES, DEFAULT_LEASE_MS, MIN_LEASE_MS } from './concurrency';
export { ADAPTIVE_OPTION_NAMES } from './adaptive';
export { checkOptionNames } from './policy/option-checks';
export { capacityOf, resolvePolicy } from './policy/resolve-policy';
export { algorithms, runStep } from './algorithms';
export type { Algorithm, AlgorithmStates, Step } from './algorithms';
export type { FixedWindowState } from './algorithms/fixed-window';
export type { GcraState } from './algorithms/gcra';
export type { LeakyBucketState } from './algorithms/leaky-bucket';
export type { SlidingLogState } from './algorithms/sliding-log';
export type { SlidingWindowState } from './algorithms/sliding-window';
export type { TokenBucketState } from './algorithms/token-bucket';
export { storeErrorScope } from './resilience/store-errors';
