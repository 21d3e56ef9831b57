import type { IncomingHttpHeaders } from 'node:http';
import type { AdaptiveDecision, ConcurrencyDecision, Decision } from '@sluice/core';
import type {
  AdaptiveLimitOptions as CoreAdaptiveOptions,
  ConcurrencyLimitOptions as CoreConcurrencyOptions,
  PartialRateLimitOptions,
  RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';

/**
 * The request your `key`, `cost`, `skip` and `overrides` functions and `onLimit` receive: the
 * platform's own (Express `Request`, Fastify `FastifyRequest`). Name that type on a function's
 * parameter, or as the type argument (`@RateLimit<Request>({ … })`), to read it typed.
 */
export interface NestHttpRequest {
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly method: string;
  readonly [property: string]: unknown;
}

/**
 * A fallback handler: replies in place of the rejection, with the decision at hand, on the
 * platform's own request and response (Express `req`, `res`; Fastify `request`, `reply`).
 */
export type NestFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: Decision,
) => unknown;

/**
 * One limit of `@RateLimit` (or the module's defaults): the shared sluice options (`key`, `rate`
 * or `rules`, `burst`, `status`, `fallback`, `headers`, `dryRun`, `trustProxy`, …) with the
 * platform's request in callbacks. A route's options are merged over the module's when those are
 * one object, so `rate` may come from the module; together they need a `rate`, `rules` or a `limiter`.
 */
export type RateLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = PartialRateLimitOptions<
  TRequest,
  NestFallback<TRequest, TResponse>
>;

/** One complete limit: with its `rate`, `rules` or `limiter`. */
export type CompleteRateLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreOptions<
  TRequest,
  NestFallback<TRequest, TResponse>
>;

/**
 * Options of `SluiceModule.forRoot`: one object — defaults for every `@RateLimit`, and a limit on
 * every route when it carries a `rate` (or `rules`, or a `limiter`), and `adaptive`, an
 * instance-wide adaptive limit — or several complete limits applied to every route in order
 * (then `@RateLimit` options are used as they are).
 */
export type SluiceModuleOptions<TRequest = NestHttpRequest, TResponse = unknown> =
  | (RateLimitOptions<TRequest, TResponse> & {
      /**
       * An adaptive limit on every route (overload protection for the instance), after the rate
       * limits; a route's or controller's `@AdaptiveLimit` replaces it there.
       * @defaultValue none
       */
      adaptive?: AdaptiveLimitOptions<TRequest, TResponse>;
    })
  | ReadonlyArray<CompleteRateLimitOptions<TRequest, TResponse>>;

/**
 * A fallback handler of `@ConcurrencyLimit`: replies in place of the refusal, with the
 * concurrency decision at hand, on the platform's own request and response.
 */
export type NestConcurrencyFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: ConcurrencyDecision,
) => unknown;

/**
 * Options of `@ConcurrencyLimit`: `max` (required), `key`, `store`, `queue`, `leaseMs`, `status`,
 * `fallback`, `skip`, `onMissingKey`, `trustProxy`, `dryRun`, `name`, `prefix`, … — those of every
 * adapter's `concurrencyLimit` — with the platform's request in callbacks. Used as they are: the
 * module's (rate limit) options are not merged in.
 */
export type ConcurrencyLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreConcurrencyOptions<
  TRequest,
  NestConcurrencyFallback<TRequest, TResponse>
>;

/**
 * A fallback handler of `@AdaptiveLimit`: replies in place of the 503, with the adaptive
 * decision at hand, on the platform's own request and response.
 */
export type NestAdaptiveFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: AdaptiveDecision,
) => unknown;

/**
 * Options of `@AdaptiveLimit` and of the module's `adaptive`: `priority`, `shares`, `status`,
 * `fallback`, `skip`, `dryRun`, `name`, `metrics`, the limiter's `algorithm`, `min`, `max`,
 * `queue`, `eventLoop`, … or a ready `limiter` — those of every adapter's `adaptiveLimit` — with
 * the platform's request in callbacks.
 */
export type AdaptiveLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreAdaptiveOptions<
  TRequest,
  NestAdaptiveFallback<TRequest, TResponse>
>;

/** Where the module's options are provided, for the guard to inject. */
export const SLUICE_OPTIONS = Symbol('sluice:options');
