import type { RequestView } from '../keys/http-request';
import type { Decision } from '../types';
import { DRY_RUN_HEADER } from './common-outcomes';
import type { Result } from './decide-all';
import { delayOutcome, takeHeldSlots } from './delay-outcome';
import type { HeaderList, HttpOutcome } from './http-options';
import { retryAfterSeconds } from './rate-limit-headers';
import { rejectionBody } from './reply-body';
import { withRetryAfter } from './reply-cache';
import { notify, reportFailure } from './user-callbacks';

/**
 * What the adapter does with a request, from its limits' decisions (see `createHttpLimiter`):
 * refused by the rejecting limit with the longest wait, else held for the longest delay any limit
 * asks (or refused when a limit's `maxHeld` is reached), else passed on; the headers report the
 * most restrictive decision, and a dry-run limit only reports. `dryRunMissingKey`: a dry-run
 * limit would have refused the request for its key.
 */
export function outcomeOf<TRequest, THandler>(
  request: TRequest,
  view: RequestView,
  results: Array<Result<TRequest, THandler>>,
  dryRunMissingKey: boolean,
): HttpOutcome<THandler> {
  let rejection: Result<TRequest, THandler> | undefined;
  let reported: Result<TRequest, THandler> | undefined;
  let delayMs = 0;
  let dryRun: 'rejected' | 'delayed' | undefined = dryRunMissingKey ? 'rejected' : undefined;
  for (const result of results) {
    const { entry, decision } = result;
    if (!decision.allowed) {
      notify(entry.limit, { request, decision, dryRun: entry.limit.dryRun });
      if (entry.limit.dryRun) dryRun = 'rejected';
      else if (rejection === undefined || decision.retryAfterMs > rejection.decision.retryAfterMs)
        rejection = result;
    } else if (decision.delayMs > 0) {
      if (entry.limit.dryRun) dryRun ??= 'delayed';
      else delayMs = Math.max(delayMs, decision.delayMs);
    }
    if (reported === undefined || moreRestrictive(decision, reported.decision)) reported = result;
  }
  let release: (() => void) | undefined;
  if (rejection === undefined && delayMs > 0) {
    const held = takeHeldSlots(results);
    if ('release' in held) release = held.release;
    else {
      rejection = held.refused; // `maxHeld` reached
      notify(rejection.entry.limit, { request, decision: rejection.decision, dryRun: false });
    }
  }
  if (rejection !== undefined) reported = rejection;
  if (reported === undefined) return { kind: 'next', headers: [] };

  const { limit, replies } = reported.entry;
  const rateLimit = replies.headers(reported.decision);
  // The remembered list is shared: a dry-run report goes on a copy.
  const headers: HeaderList = dryRun === undefined ? rateLimit : [...rateLimit, [DRY_RUN_HEADER, dryRun]];
  if (rejection === undefined) {
    return release === undefined
      ? { kind: 'next', headers }
      : delayOutcome(headers, delayMs, results, release);
  }
  const { decision } = rejection;
  const status = rejectionStatus(limit, decision);
  const fallback = limit.fallback;
  if (fallback === undefined) return replies.rejection(decision, headers, status, view.header('accept'));
  const retryAfter = retryAfterSeconds(decision);
  if ('handler' in fallback) {
    const { key } = rejection.entry;
    const refused = withRetryAfter(headers, retryAfter);
    return {
      kind: 'handler',
      headers: refused,
      handler: fallback.handler,
      decision,
      // Built now, used only if the handler fails: the reply the client would have had without it.
      rejection: {
        kind: 'reply',
        headers: refused,
        status,
        ...rejectionBody(decision, view.header('accept')),
      },
      reportError: (threw) => reportFailure(limit, request, 'fallback', { threw }, key),
    };
  }
  const { reply } = fallback;
  return {
    kind: 'reply',
    headers: [...withRetryAfter(headers, retryAfter), ...reply.headers],
    status: reply.status,
    type: reply.type,
    body: reply.body,
  };
}

/** The status of a refusal: `onStoreError: 'fail-closed'` is the server's trouble (503), not the client's. */
export function rejectionStatus(limit: { readonly status: number }, decision: Decision): number {
  return decision.reason === 'store-unavailable' ? 503 : limit.status;
}

/** Whether `a` leaves fewer requests than `b`, or as many with a longer reset. */
function moreRestrictive(a: Decision, b: Decision): boolean {
  return a.remaining < b.remaining || (a.remaining === b.remaining && a.resetMs > b.resetMs);
}
