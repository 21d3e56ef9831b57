import type { Policy } from '../../src';
import { MIN_SLACK_MS } from '../../src/stores/redis/scripts/expiry.lua';

/**
 * How long a key may outlive its state on the server's clock (see `expiry.lua.ts`): a bucket's,
 * the larger of a second and its period (the time a full bucket takes to refill); 0 for the
 * others (the windows keep their own expiry, the sliding log its spans': see below).
 */
export function slackMsOf(policy: Policy): number {
  if (!['gcra', 'token-bucket', 'leaky-bucket'].includes(policy.algorithm) || policy.warmupMs > 0) return 0;
  return Math.max(MIN_SLACK_MS, Math.floor((policy.windowMs * (policy.burst + 1)) / policy.limit));
}

/**
 * The expiry a sliding log's key keeps on Redis (see `sliding-log.lua.ts`): only the first
 * admission of each window-long span of time sets it, to the end of the next span, so every
 * entry of the span is kept while it counts. Seen from the reference, whose TTL is what the
 * newest entry needs: at least that, at most two windows, and ending on a span's end.
 */

/** Its end, given the log's time of the write that set it: the end of the span after that time's. */
export function logKeepMs(atMs: number, nowMs: number, windowMs: number): number {
  return atMs - (((atMs % windowMs) + windowMs) % windowMs) + 2 * windowMs - nowMs;
}

/**
 * Expects `ttl` (a PTTL read just now, on a key written on the server's clock) to be a sliding
 * log's expiry: no shorter than `neededMs` (what the newest entry needs, less the `slackMs` of
 * real time since), at most two windows, and ending on the end of a span (the server's clock is
 * this machine's).
 */
export function expectLogExpiry(ttl: number, neededMs: number, windowMs: number, slackMs = 100): void {
  expect(ttl).toBeGreaterThan(neededMs - slackMs);
  expect(ttl).toBeLessThanOrEqual(2 * windowMs);
  const pastSpanEnd = (Date.now() + ttl) % windowMs;
  expect(Math.min(pastSpanEnd, windowMs - pastSpanEnd)).toBeLessThan(slackMs);
}

/** The kinds of state whose writes may keep the key's expiry (`SET … KEEPTTL`) instead of setting it. */
const KEEPING = new Set(['sliding-log', 'packed-log', 'fixed-window', 'sliding-window']);

/**
 * Checks the expiry a state's key has on Redis against the reference's TTLs, write after write,
 * in a sequence whose every step is followed by a PTTL and a PERSIST (so a write that sets no
 * expiry reads -1). A write that sets one sets the reference's TTL (a sliding log's: the end of
 * the span after its entries'), to within the real time the sequence took. A write that does not
 * (a window's admission in a window that has counted, most sliding-log writes) relies on the last
 * one set, which must still outlive what the state needs; only the kinds that may keep do.
 * Times are on the requests' clock.
 */
export class ExpiryCheck {
  private readonly expiresAt = new Map<string, number>();

  constructor(
    private readonly kind: string,
    private readonly windowMs: number,
    private readonly tookMs: () => number,
  ) {}

  /**
   * @param key - the key written
   * @param nowMs - the request's time
   * @param neededMs - the reference's TTL (a sliding log's: the newest entry's time + the window − `nowMs`)
   * @param ttl - the key's PTTL just after the write
   */
  ok(key: string, nowMs: number, neededMs: number, ttl: number): boolean {
    if (ttl === -1) {
      return KEEPING.has(this.kind) && (this.expiresAt.get(key) ?? -Infinity) >= nowMs + neededMs;
    }
    const keepMs =
      this.kind === 'sliding-log' || this.kind === 'packed-log'
        ? logKeepMs(nowMs + neededMs - this.windowMs, nowMs, this.windowMs)
        : neededMs;
    this.expiresAt.set(key, nowMs + keepMs);
    return ttl <= keepMs && ttl >= Math.max(0, keepMs - this.tookMs() - 2);
  }
}
