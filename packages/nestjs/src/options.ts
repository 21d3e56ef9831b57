import type { IncomingHttpHeaders } from 'node:http';
import type { AdaptiveDecision, ConcurrencyDecision, Decision } from '@sluice/core';
import type {
  AdaptiveLimitOptions as CoreAdaptiveOptions,
  ConcurrencyLimitOptions as CoreConcurrencyOptions,
  PartialRateLimitOptions,
  RateLimitOptions as CoreOptions,
} from '@sluice/core/adapter';

/**
 * The request your callbacks receive: the platform's own (Express `Request`, Fastify
 * `FastifyRequest`); name that type as the type argument (`@RateLimit<Request>({ … })`) to read it typed.
 */
export interface NestHttpRequest {
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly method: string;
  readonly [property: string]: unknown;
}

/** A fallback handler: replies in place of the rejection on the platform's own request and response (Express `req`, `res`). */
export type NestFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: Decision,
) => unknown;

/**
 * One limit of `@RateLimit` (or the module's defaults; see core's `PartialRateLimitOptions`), with
 * the platform's request in callbacks, merged over the module's options when those are one object.
 * `countWhen` gets the platform's request and response once the response is done, after Nest's
 * exception filters (a thrown `UnauthorizedException` is a 401, which `'failed'` counts).
 *
 * @example
 * ```ts
 * @Post('login') @RateLimit({ key: '$remote_addr', rate: '5/15m', countWhen: 'failed' }) login() {}
 * ```
 */
export type RateLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = PartialRateLimitOptions<
  TRequest,
  NestFallback<TRequest, TResponse>,
  TResponse
>;

/** One complete limit: with its `rate`, `rules` or `limiter`. */
export type CompleteRateLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreOptions<
  TRequest,
  NestFallback<TRequest, TResponse>,
  TResponse
>;

/**
 * Options of `SluiceModule.forRoot`: one object (defaults for every `@RateLimit`, a limit on every
 * route when it has a `rate`, `rules` or `limiter`, and `adaptive`), or several complete limits.
 */
export type SluiceModuleOptions<TRequest = NestHttpRequest, TResponse = unknown> =
  | (RateLimitOptions<TRequest, TResponse> & {
      /** An adaptive limit on every route, after the rate limits; `@AdaptiveLimit` replaces it. @defaultValue none */
      adaptive?: AdaptiveLimitOptions<TRequest, TResponse>;
    })
  | ReadonlyArray<CompleteRateLimitOptions<TRequest, TResponse>>;

/** A fallback handler of `@ConcurrencyLimit`: replies in place of the refusal, with the decision at hand. */
export type NestConcurrencyFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: ConcurrencyDecision,
) => unknown;

/** Options of `@ConcurrencyLimit` (see core's `ConcurrencyLimitOptions`), with the platform's request in callbacks; used as they are. */
export type ConcurrencyLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreConcurrencyOptions<
  TRequest,
  NestConcurrencyFallback<TRequest, TResponse>
>;

/** A fallback handler of `@AdaptiveLimit`: replies in place of the 503, with the decision at hand. */
export type NestAdaptiveFallback<TRequest = NestHttpRequest, TResponse = unknown> = (
  request: TRequest,
  response: TResponse,
  decision: AdaptiveDecision,
) => unknown;

/** Options of `@AdaptiveLimit` and the module's `adaptive` (see core's `AdaptiveLimitOptions`), with the platform's request in callbacks. */
export type AdaptiveLimitOptions<TRequest = NestHttpRequest, TResponse = unknown> = CoreAdaptiveOptions<
  TRequest,
  NestAdaptiveFallback<TRequest, TResponse>
>;

/** Where the module's options are provided, for the guard to inject. */
export const SLUICE_OPTIONS = Symbol('sluice:options');
