/**
 * A policy's own script replies its verdict as one integer when its four numbers fit in one
 * below 2^53, and as the table `{ code, remaining, resetMs, waitMs }` otherwise. Redis turns a
 * table of four into a reply at about 6 k instructions (its checks for `err`, `ok`, `double`…
 * fields, a deferred array length); an integer costs it a few hundred: a lone gcra decision
 * fell from 62 k to 56 k instructions of redis-server (callgrind).
 *
 * The digits, lowest first: `code` (0 to 2) in base 3, then `remaining` in base `capacity + 1`
 * (no step leaves more than its policy's capacity), then `resetMs`. When `waitMs` is not 0 (a
 * rejection's retry time, an admission's delay) it follows `resetMs`, which then has
 * {@link replyRadix} as its base, and the integer is negated. A number that does not fit is
 * sent in the table: exactness never depends on the policy's numbers.
 */

/** Integers of a double are exact up to 2^53. */
const EXACT = 2 ** 53;

/**
 * The base of `resetMs` when `waitMs` follows it: a power of 2 that leaves both of them about
 * half of the bits that `code` and `remaining` leave (about 2^24 ms each, 4.6 hours, for a
 * capacity of 1).
 */
export function replyRadix(capacity: number): number {
  return 2 ** Math.max(0, Math.floor((53 - Math.log2(3 * (capacity + 1))) / 2));
}

/**
 * The Lua that ends a policy's own script: replies `code, remaining, reset_ms, wait_ms` (local
 * integers >= 0) as one integer when they fit, else as the table.
 */
export function packedReplyLua(capacity: number): string {
  const span = capacity + 1;
  const radix = replyRadix(capacity);
  return `if remaining < ${span} then
  if wait_ms == 0 then
    local n = (reset_ms * ${span} + remaining) * 3 + code
    if n < ${EXACT} then return n end
  elseif reset_ms < ${radix} then
    local n = ((wait_ms * ${radix} + reset_ms) * ${span} + remaining) * 3 + code
    if n < ${EXACT} then return -n end
  end
end
return { code, remaining, reset_ms, wait_ms }`;
}

/** `code, remaining, resetMs, waitMs` of a packed reply (see {@link packedReplyLua}). */
export function unpackReply(reply: number, capacity: number): [number, number, number, number] {
  const span = capacity + 1;
  let n = reply < 0 ? -reply : reply;
  const code = n % 3;
  n = (n - code) / 3;
  const remaining = n % span;
  n = (n - remaining) / span;
  if (reply >= 0) return [code, remaining, n, 0];
  const radix = replyRadix(capacity);
  const resetMs = n % radix;
  return [code, remaining, resetMs, (n - resetMs) / radix];
}
