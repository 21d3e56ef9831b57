export { createHttpLimiter } from './http-limiter';
export { DRY_RUN_HEADER } from './common-outcomes';
export type { HttpLimiter } from './http-limiter';
export { namingAdapterOptions } from './adapter-options';
export { callFallback } from './call-fallback';
export type { CountedResponse, Counts } from './count-when';
export type { CountWhen } from './http-options';
export type { RawResponse } from './call-fallback';
export type {
  CallbackErrorEvent,
  CallbackSource,
  HeaderList,
  HeaderMode,
  HttpHandlerOutcome,
  HttpLimitOptions,
  HttpOutcome,
  HttpOverrides,
  HttpReply,
  JsonValue,
  LimiterOnlyOptions,
  LimiterOptionName,
  LimiterRulesOnlyOptions,
  LimitEvent,
  MaybePromise,
  MissingKeyMode,
  RateLimitOptions,
  StaticFallback,
} from './http-options';
export { DEFAULT_MAX_HELD } from './delay-outcome';
export type { HoldSlots } from './delay-outcome';
export { heldRequestCount, holdRequest } from './hold-request';
export type { ClosableConnection, ClosableResponse } from './hold-request';
export { quotaWindowSeconds, rateLimitHeaders, retryAfterSeconds, toSeconds } from './rate-limit-headers';
export type { RateLimitHeaderContext } from './rate-limit-headers';
export { JSON_TYPE, prefersJson, rejectionBody, TEXT_TYPE } from './reply-body';
export type { ReplyBody } from './reply-body';
export { HTTP_OPTION_NAMES, resolveHttpLimit } from './resolve-http-options';
export type { ResolvedLimit, ResolvedStaticFallback } from './resolve-http-options';
export { checkDefaults, definesLimit, scopedOptions } from './scoped-options';
export { scopeNames } from './scope-names';
export type { PartialRateLimitOptions } from './scoped-options';
export { createHttpConcurrencyLimiter } from './concurrency-limit';
export type { HttpConcurrencyLimiter } from './concurrency-limit';
export { CONCURRENCY_HTTP_OPTION_NAMES } from './concurrency-options';
export type {
  ConcurrencyHandlerOutcome,
  ConcurrencyHttpOptions,
  ConcurrencyLimitEvent,
  ConcurrencyLimitOptions,
  ConcurrencyOutcome,
} from './concurrency-options';
export { limitFetchHandlerAdaptively } from './adaptive-fetch';
export type { FetchAdaptiveLimitOptions } from './adaptive-fetch';
export { createHttpAdaptiveLimiter } from './adaptive-limit';
export type { HttpAdaptiveLimiter } from './adaptive-limit';
export { ADAPTIVE_HTTP_OPTION_NAMES } from './adaptive-options';
export type {
  AdaptiveHandlerOutcome,
  AdaptiveHttpOptions,
  AdaptiveLimitEvent,
  AdaptiveLimitOptions,
  AdaptiveOutcome,
} from './adaptive-options';
export { onResponseClose } from './response-close';
export type { ListenableResponse } from './response-close';
export type { ResolvedFallback } from './resolve-fallback';
export type { UserCallbacks } from './user-callbacks';
export {
  decideAndWrite,
  heldOr,
  setHeaderList,
  writeReplyOutcome,
  writeResponseOutcome,
} from './write-outcome';
export { fromContextLike, writeContextOutcome } from './context-like';
export type { ContextLike, WritableContextLike } from './context-like';
export { fromNodeRequest, fromUnmatchedNodeRequest } from './node-request';
export { notFoundHook, notFoundMiddleware } from './not-found';
export type { PassingCallback } from './not-found';
export type { ExpressAppLike, NodeRequestLike } from './node-request';
export { fromRequestLike } from './request-like';
export type { RequestLike } from './request-like';
export type {
  AnyHttpOutcome,
  DecisionFallback,
  HttpDecider,
  NodeFallback,
  NodeResponse,
  Pass,
  ReplyLike,
} from './write-outcome';
export { takeClientAddress } from './client-address-option';
export type { ClientAddressSplit } from './client-address-option';
export { FetchExchange } from './fetch-exchange';
export type { AbortSignalLike } from './fetch-exchange';
export { CLIENT_CLOSED_STATUS, replyHeaders, replyResponse, withHeaders } from './fetch-outcome';
export type { FetchFallback } from './fetch-outcome';
export { FetchRequest, fromFetchRequest, requestTarget } from './fetch-request';
export type { FetchHeaders, FetchRequestLike } from './fetch-request';
export { enterFetch, nodeBindingsOf } from './fetch-limit';
export type { FetchEntry, FetchPass, NodeBindings } from './fetch-limit';
export type { FetchDecider, FetchFrame, FetchGateSettings, FetchNext } from './fetch-gate';
export { fetchMiddleware } from './fetch-middleware';
export type { FetchMiddleware, FetchMiddlewareFrame } from './fetch-middleware';
export { limitFetchHandler } from './fetch-handler';
export type { FetchHandler, FetchRateLimitOptions, RequestFallback } from './fetch-handler';
