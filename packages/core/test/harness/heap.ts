import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A real gc() inside jest (no `--expose-gc` needed on the command line), so heap figures are
// measured, not guessed.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after full collections: what is still reachable. */
export function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** 1 MB as the README counts it (MiB). */
export const MB = 1024 * 1024;

/** Text padding the hostile keys below to 15 kB, as a long `user-id` header would. */
const PAD = 'u'.repeat(15_000);

/**
 * The i-th of distinct 15 kB keys, each one flat string of its own as a header value is (a
 * concatenation such as `${i}:${PAD}` would share `PAD` between all keys, and cost nothing).
 */
export function longKey(i: number): string {
  return [i, PAD].join(':');
}

/**
 * The i-th of distinct 20-character keys, each cut out of a 15 kB string of its own, as a
 * cookie value is out of a long `Cookie` header: short, yet V8 represents it as a slice that
 * keeps the whole string alive.
 */
export function slicedKey(i: number): string {
  const header = `${PAD}; sid=${String(i).padStart(20, '0')}`;
  return header.slice(header.length - 20);
}
