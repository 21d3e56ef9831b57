import { randomBytes } from 'node:crypto';

/** 72 random bits per process: ids of processes sharing one Redis never meet. */
const PROCESS = randomBytes(9).toString('base64url');
let limiters = 0;

/**
 * Lease ids for one limiter: `<process>:<limiter>:<n>`, unique across every process sharing the
 * store and every limiter of this one, short (a member of a sorted set costs its length).
 */
export function leaseIds(): () => string {
  const prefix = `${PROCESS}:${(limiters++).toString(36)}:`;
  let next = 0;
  return () => prefix + (next++).toString(36);
}
