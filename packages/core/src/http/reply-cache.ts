import type { Decision, Policy } from '../types';
import type { HeaderList, HeaderMode, HttpReply } from './http-options';
import {
  quotaWindowSeconds,
  rateLimitHeaders,
  retryAfterSeconds,
  sfString,
  toSeconds,
} from './rate-limit-headers';
import { prefersJson, rejectionBody } from './reply-body';

type Header = readonly [name: string, value: string];

/** The numbers a one-rule header list is made of: equal numbers, equal headers. */
interface HeaderKey {
  policy: Policy | undefined;
  limit: number;
  remaining: number;
  /** Seconds until full (`t`, `reset`). */
  reset: number;
  /** `'legacy'`: the epoch second of the reset; else 0. */
  resetAt: number;
}

/**
 * What one limit answers, remembered between requests, so the HTTP layer builds each distinct
 * answer once: every refusal of a flood within one second gets the same header list and reply
 * object, and the parts that depend on the policy alone (the draft-8 name, `RateLimit-Policy`) are
 * built once per policy. Lists and replies handed out are shared: they must not be changed (the
 * adapters only read them). One limit, one instance; not for decisions with several rules
 * (`decision.limits`), whose headers are built each time.
 */
export class ReplyCache {
  readonly #mode: HeaderMode;
  readonly #policyName: string | undefined;
  readonly #now: () => number;
  /** draft-8: the policy the name and `RateLimit-Policy` below were built for. */
  #policy: Policy | undefined;
  #policyLimit = -1;
  #name = '';
  #policyHeader: Header = ['RateLimit-Policy', ''];
  readonly #key: HeaderKey = { policy: undefined, limit: -1, remaining: -1, reset: -1, resetAt: 0 };
  #headers: HeaderList = [];
  // The same list as #headers: with headers off, every admitted request shares this outcome.
  #next: { readonly kind: 'next'; readonly headers: HeaderList } = { kind: 'next', headers: this.#headers };
  #accept = '';
  #json = false;
  #reply: HttpReply | undefined;
  #replyHeaders: HeaderList = [];
  #replyStatus = 0;
  #replyJson = false;
  #replyRetryAfter: number | undefined;

  /**
   * @param mode - the limit's `headers` option
   * @param policyName - the limit's `policyName` option
   * @param now - epoch ms, for `'legacy'`'s absolute reset
   */
  constructor(mode: HeaderMode, policyName: string | undefined, now: () => number) {
    this.#mode = mode;
    this.#policyName = policyName;
    this.#now = now;
  }

  /** The rate-limit headers of `decision`: as `rateLimitHeaders` gives them, shared while they repeat. */
  headers(decision: Decision): HeaderList {
    const mode = this.#mode;
    if (mode === false) return this.#headers;
    const { limits } = decision;
    if (limits !== undefined && limits.length > 1) {
      return rateLimitHeaders(mode, decision, { policyName: this.#policyName, nowMs: this.#now() });
    }
    const { policy, limit, remaining } = decision;
    const reset = toSeconds(decision.resetMs);
    const nowMs = mode === 'legacy' ? this.#now() : 0;
    const resetAt = mode === 'legacy' ? toSeconds(nowMs + decision.resetMs) : 0;
    const key = this.#key;
    if (
      key.policy === policy &&
      key.limit === limit &&
      key.remaining === remaining &&
      key.reset === reset &&
      key.resetAt === resetAt
    ) {
      return this.#headers;
    }
    key.policy = policy;
    key.limit = limit;
    key.remaining = remaining;
    key.reset = reset;
    key.resetAt = resetAt;
    this.#headers =
      mode === 'draft-8'
        ? this.#draft8(policy, limit, remaining, reset)
        : rateLimitHeaders(mode, decision, { policyName: this.#policyName, nowMs });
    this.#next = { kind: 'next', headers: this.#headers };
    return this.#headers;
  }

  /** The `next` outcome of an admitted decision (no dry-run report, no delay). */
  next(decision: Decision): { readonly kind: 'next'; readonly headers: HeaderList } {
    const headers = this.headers(decision);
    return headers === this.#next.headers ? this.#next : { kind: 'next', headers };
  }

  /**
   * The default rejection of `decision`: `status`, the rate-limit `headers` with `Retry-After` (a
   * refusal, RFC 9110 §10.2.3), and the short body in the form the `Accept` header prefers.
   */
  rejection(decision: Decision, headers: HeaderList, status: number, accept: string): HttpReply {
    if (accept !== this.#accept) {
      this.#accept = accept;
      this.#json = prefersJson(accept);
    }
    const json = this.#json;
    const retryAfter = retryAfterSeconds(decision);
    const reply = this.#reply;
    // A plain refusal's reply is made of its headers, status, seconds to wait and body form.
    if (
      reply !== undefined &&
      decision.reason === 'limited' &&
      headers === this.#replyHeaders &&
      status === this.#replyStatus &&
      retryAfter === this.#replyRetryAfter &&
      json === this.#replyJson
    ) {
      return reply;
    }
    const made: HttpReply = {
      kind: 'reply',
      headers: withRetryAfter(headers, retryAfter),
      status,
      ...rejectionBody(decision, json ? 'application/json' : ''),
    };
    if (decision.reason === 'limited') {
      this.#reply = made;
      this.#replyHeaders = headers;
      this.#replyStatus = status;
      this.#replyJson = json;
      this.#replyRetryAfter = retryAfter;
    }
    return made;
  }

  #draft8(policy: Policy, limit: number, remaining: number, reset: number): HeaderList {
    if (policy !== this.#policy || limit !== this.#policyLimit) {
      this.#policy = policy;
      this.#policyLimit = limit;
      this.#name = sfString(this.#policyName ?? policy.source);
      this.#policyHeader = [
        'RateLimit-Policy',
        `${this.#name};q=${limit};w=${quotaWindowSeconds(policy, limit)}`,
      ];
    }
    return [this.#policyHeader, ['RateLimit', `${this.#name};r=${remaining};t=${reset}`]];
  }
}

/**
 * `headers` with `Retry-After` when there is a wait to tell. One rule for every reply to a refused
 * request, whatever its status: the default rejection, a static `fallback` (a cached 200 too) and
 * the headers set before a fallback handler runs (which cannot know the status it will choose).
 * A degraded reply thus still says when the live one is back; a fallback may override or remove it.
 */
export function withRetryAfter(headers: HeaderList, retryAfter: number | undefined): HeaderList {
  return retryAfter !== undefined ? [...headers, ['Retry-After', String(retryAfter)]] : headers;
}
