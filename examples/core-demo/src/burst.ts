import { createLimiter, type Decision, type LimiterOptions } from '@sluice/core';

/** One line of the demo's table. */
export interface BurstRow {
  readonly title: string;
  readonly decisions: readonly Decision[];
}

/** A flash sale opens: `requests` arrive in the same millisecond for one SKU, then again 1 s later. */
export async function burst(title: string, options: LimiterOptions, requests: number): Promise<BurstRow> {
  let now = Date.UTC(2026, 10, 11, 0, 0, 0);
  const limiter = createLimiter({ ...options, clock: () => now });
  const decisions: Decision[] = [];
  for (let i = 0; i < requests; i++) decisions.push(await limiter.consume('sku:1001'));
  now += 1000;
  for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('sku:1001'));
  return { title, decisions };
}

/** The zones a flash sale configures in nginx, and their sluice twins. */
export const SCENARIOS: ReadonlyArray<[string, LimiterOptions]> = [
  ['gcra 2r/s burst=3 (redis-cell CL.THROTTLE sku 3 2 1)', { rate: '2r/s', burst: 3 }],
  [
    'leaky-bucket 2r/s burst=3 nodelay (nginx limit_req)',
    { algorithm: 'leaky-bucket', rate: '2r/s', burst: 3, nodelay: true },
  ],
  ['leaky-bucket 2r/s burst=3 (nginx, delayed)', { algorithm: 'leaky-bucket', rate: '2r/s', burst: 3 }],
  [
    'token-bucket replenish 2/s, capacity 4 (Spring Cloud Gateway)',
    { algorithm: 'token-bucket', rate: '2r/s', burst: 3 },
  ],
  ['fixed-window 4/1s', { algorithm: 'fixed-window', rate: '4/1s' }],
  ['sliding-window 4/1s', { algorithm: 'sliding-window', rate: '4/1s' }],
  ['sliding-log 4/1s', { algorithm: 'sliding-log', rate: '4/1s' }],
];

/** `✓` admitted, `…1000` admitted after a delay of 1000 ms, `✗500` rejected, retry after 500 ms. */
export function describeDecision(d: Decision): string {
  if (!d.allowed) return `✗${d.retryAfterMs}`;
  return d.delayMs > 0 ? `…${d.delayMs}` : '✓';
}
