import type { Decision, DecisionLimit, Policy } from '../types';
import type { HeaderList, HeaderMode } from './http-options';

/** Inputs of {@link rateLimitHeaders} besides the decision. */
export interface RateLimitHeaderContext {
  /**
   * draft-8 policy name; default: the rate as written. With several rules each is named
   * `<policyName>:<rate>` (or its rate alone), `#<n>` added to a name already used.
   */
  readonly policyName?: string;
  /** Epoch ms, for `'legacy'`'s absolute `X-RateLimit-Reset`. @defaultValue `Date.now()` */
  readonly nowMs?: number;
}

/** Whole seconds, rounded up: a client that waits this long is never early. */
export function toSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/**
 * Seconds in which `decision.limit` requests come back (the `w` of the headers): the window of a
 * window algorithm; for bucket algorithms, the time the sustained rate takes to refill the
 * requests allowed at once (6r/m with no burst: 1 request per 10 s). At least 1.
 *
 * @param policy - the decision's policy
 * @param limit - `decision.limit`
 */
export function quotaWindowSeconds(policy: Policy, limit: number): number {
  const bucket =
    policy.algorithm === 'gcra' || policy.algorithm === 'token-bucket' || policy.algorithm === 'leaky-bucket';
  const ms = bucket ? (limit * policy.windowMs) / policy.limit : policy.windowMs;
  return Math.max(1, toSeconds(ms));
}

/** A structured-field string (RFC 8941): quotes and backslashes escaped. */
export function sfString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** draft-8 names of several rules: distinct, each saying its rate. */
function ruleNames(limits: readonly DecisionLimit[], policyName: string | undefined): string[] {
  const used = new Set<string>();
  return limits.map(({ policy }, i) => {
    let name = policyName === undefined ? policy.source : `${policyName}:${policy.source}`;
    if (used.has(name)) name = `${name}#${i + 1}`;
    used.add(name);
    return sfString(name);
  });
}

/**
 * The rate-limit headers of a decision in one of the IETF draft forms or the legacy `X-RateLimit-*`.
 * A decision with several rules (`decision.limits`) lists every rule in draft-8, one item per
 * rule in each field; the other forms, which have room for one limit, report the deciding rule
 * (the rejecting one, else the most restrictive).
 *
 * @param mode - which form; `false` gives none
 * @param decision - the decision to report
 * @param context - policy name and time
 * @example
 * ```ts
 * rateLimitHeaders('draft-8', decision);
 * // [['RateLimit-Policy', '"6r/m";q=1;w=10'], ['RateLimit', '"6r/m";r=0;t=10']]
 * ```
 */
export function rateLimitHeaders(
  mode: HeaderMode,
  decision: Decision,
  context: RateLimitHeaderContext = {},
): HeaderList {
  if (mode === false) return [];
  const { limit, remaining } = decision;
  const window = quotaWindowSeconds(decision.policy, limit);
  const reset = toSeconds(decision.resetMs);
  switch (mode) {
    case 'draft-8': {
      const { limits } = decision;
      if (limits !== undefined && limits.length > 1) {
        const names = ruleNames(limits, context.policyName);
        const item = (i: number): DecisionLimit => limits[i] as DecisionLimit;
        return [
          [
            'RateLimit-Policy',
            names
              .map((n, i) => `${n};q=${item(i).limit};w=${quotaWindowSeconds(item(i).policy, item(i).limit)}`)
              .join(', '),
          ],
          [
            'RateLimit',
            names.map((n, i) => `${n};r=${item(i).remaining};t=${toSeconds(item(i).resetMs)}`).join(', '),
          ],
        ];
      }
      const name = sfString(context.policyName ?? decision.policy.source);
      return [
        ['RateLimit-Policy', `${name};q=${limit};w=${window}`],
        ['RateLimit', `${name};r=${remaining};t=${reset}`],
      ];
    }
    case 'draft-7':
      return [
        ['RateLimit-Policy', `${limit};w=${window}`],
        ['RateLimit', `limit=${limit}, remaining=${remaining}, reset=${reset}`],
      ];
    case 'draft-6':
      return [
        ['RateLimit-Policy', `${limit};w=${window}`],
        ['RateLimit-Limit', String(limit)],
        ['RateLimit-Remaining', String(remaining)],
        ['RateLimit-Reset', String(reset)],
      ];
    case 'legacy':
      return [
        ['X-RateLimit-Limit', String(limit)],
        ['X-RateLimit-Remaining', String(remaining)],
        // GitHub's and Twitter's convention: the epoch second at which the quota is full again.
        ['X-RateLimit-Reset', String(toSeconds((context.nowMs ?? Date.now()) + decision.resetMs))],
      ];
  }
}

/**
 * `Retry-After` of a rejection in whole seconds rounded up, or `undefined` when there is nothing
 * to wait for: an admitted request, or a cost that exceeds the capacity and can never pass
 * (`reason: 'cost-exceeds-capacity'`, `retryAfterMs` 0).
 *
 * @param decision - the decision
 * @example
 * ```ts
 * retryAfterSeconds({ ...decision, allowed: false, retryAfterMs: 1200 }); // 2
 * ```
 */
export function retryAfterSeconds(decision: Decision): number | undefined {
  if (decision.allowed || decision.reason === 'cost-exceeds-capacity' || decision.retryAfterMs <= 0)
    return undefined;
  return toSeconds(decision.retryAfterMs);
}
