import type { Decision } from '../types';
import { retryAfterSeconds } from './rate-limit-headers';

/** A reply's body with its content type. */
export interface ReplyBody {
  readonly type: string;
  readonly body: string;
}

/** Content type of JSON replies. */
export const JSON_TYPE = 'application/json; charset=utf-8';
/** Content type of text replies. */
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/**
 * Whether the client prefers JSON to plain text, by the quality values of its `Accept` header
 * (`application/json`, any `+json` type, `application/*`, `* /*`). On a tie, text wins: `curl`'s
 * `Accept: * /*` reads a sentence, a `fetch` asking for `application/json` gets JSON.
 *
 * @param accept - the `Accept` header (`''` when absent)
 * @example
 * ```ts
 * prefersJson('application/json'); // true
 * prefersJson('*' + '/*');          // false
 * ```
 */
export function prefersJson(accept: string): boolean {
  if (accept === '') return false;
  let json = { q: 0, rank: -1 };
  let text = { q: 0, rank: -1 };
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    const [type, subtype = ''] = media.split('/');
    // The most specific matching range decides a type's quality (RFC 9110 §12.5.1).
    const jsonRank =
      type === 'application' && (subtype === 'json' || subtype.endsWith('+json'))
        ? 2
        : type === 'application' && subtype === '*'
          ? 1
          : media === '*/*'
            ? 0
            : -1;
    const textRank =
      media === 'text/plain' ? 2 : type === 'text' && subtype === '*' ? 1 : media === '*/*' ? 0 : -1;
    if (jsonRank > json.rank) json = { q, rank: jsonRank };
    if (textRank > text.rank) text = { q, rank: textRank };
  }
  return json.q > text.q;
}

/**
 * The short body of a rejection: JSON when the client prefers it, else one sentence.
 *
 * @param decision - the rejecting decision, or `undefined` for a request refused for its key:
 *   lacking one, or with `several` values for it
 * @param accept - the `Accept` header
 * @param several - with `decision` `undefined`: the key was given several differing values
 * @example
 * ```ts
 * rejectionBody(decision, 'application/json').body; // '{"error":"rate_limited","message":"Too many requests, retry in 6 s.","retryAfter":6}'
 * rejectionBody(undefined, '', true).body; // 'This request gives its rate-limit key several values.\n'
 * ```
 */
export function rejectionBody(decision: Decision | undefined, accept: string, several = false): ReplyBody {
  let error: string;
  let message: string;
  let retryAfter: number | undefined;
  if (decision === undefined && several) {
    error = 'ambiguous_key';
    message = 'This request gives its rate-limit key several values.';
  } else if (decision === undefined) {
    error = 'missing_key';
    message = 'This request has no rate-limit key.';
  } else if (decision.reason === 'store-unavailable') {
    error = 'store_unavailable';
    retryAfter = retryAfterSeconds(decision);
    message = `The rate limiter is unavailable, retry in ${retryAfter ?? 1} s.`;
  } else if (decision.reason === 'cost-exceeds-capacity') {
    error = 'cost_exceeds_capacity';
    message = `This request costs more than the ${decision.limit} allowed at once.`;
  } else {
    error = 'rate_limited';
    retryAfter = retryAfterSeconds(decision);
    message =
      retryAfter === undefined ? 'Too many requests.' : `Too many requests, retry in ${retryAfter} s.`;
  }
  if (prefersJson(accept)) return { type: JSON_TYPE, body: JSON.stringify({ error, message, retryAfter }) };
  return { type: TEXT_TYPE, body: `${message}\n` };
}
