import { ALGORITHMS, type AlgorithmName, type Store } from '../../src';
import { createHttpLimiter, type HttpRequest, type RateLimitOptions } from '../../src/adapter';
import { fakeClock } from './fake-clock';

type Handler = () => void;

/** Where a route's two limits keep their state, and how many script calls a store has served. */
export interface LosslessSetup {
  /** The per-address and per-SKU limits' stores (one store for both, or two). */
  stores(): { perIp: Store; perSku: Store };
  /** The per-address key, the SKU key. */
  readonly keys?: { ip: string; sku: string };
  /** Script calls served so far, when the store is Redis (to tell one call per request). */
  scriptCalls?(): Promise<number>;
  /** At most this many script calls per request (the joint path: 1). */
  readonly maxCallsPerRequest?: number;
}

const REQUESTS = 300;
/** Numbers every run, so no two share a prefix in one store. */
let runs = 0;

/**
 * The flash-sale scenario of issue 12: a route limited per address (100/1h) and per SKU (5/1h),
 * 300 concurrent requests from one address for one SKU. Exactly 5 pass, and the per-address
 * limit has spent exactly 5 units — a rejection by the SKU limit uses none of the address's —
 * for every algorithm, through the HTTP layer.
 */
export function describeLossless(label: string, setup: LosslessSetup): void {
  describe(`several limits on one route leak no unit: ${label}`, () => {
    test.each(ALGORITHMS)(
      '%s: 300 concurrent requests, exactly 5 pass and 5 units spent',
      async (algorithm) => {
        const run = ++runs;
        const clock = fakeClock();
        const { perIp, perSku } = setup.stores();
        const { ip, sku } = setup.keys ?? { ip: '203.0.113.9', sku: 'sku-1' };
        const limit = (
          name: string,
          rate: string,
          key: string,
          store: Store,
        ): RateLimitOptions<object, Handler> => ({
          key,
          rate,
          algorithm: algorithm as AlgorithmName,
          ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
          store,
          prefix: `lossless-${name}-${algorithm}-${run}`,
          clock,
          // A slow shared machine must not turn a decision into a degraded one.
          timeoutMs: 10_000,
          onStoreError: 'fail-closed',
        });
        const limits = createHttpLimiter<object, Handler>([
          limit('ip', '100/1h', '$remote_addr', perIp),
          limit('sku', '5/1h', '$arg_sku', perSku),
        ]);
        const http: HttpRequest = {
          remoteAddress: ip,
          url: `/buy?sku=${encodeURIComponent(sku)}`,
          headers: {},
        };
        const callsBefore = await setup.scriptCalls?.();
        const outcomes = await Promise.all(Array.from({ length: REQUESTS }, () => limits.decide({}, http)));
        const callsAfter = await setup.scriptCalls?.();
        const kinds = outcomes.map((outcome) => (outcome.kind === 'reply' ? outcome.status : outcome.kind));
        expect(kinds.filter((kind) => kind === 'next')).toHaveLength(5);
        expect(kinds.filter((kind) => kind !== 'next' && kind !== 429)).toEqual([]);

        const [ipLimiter, skuLimiter] = limits.limiters;
        const perAddress = await ipLimiter?.peek(ip);
        expect(perAddress).toMatchObject({ limit: 100, remaining: 95 });
        expect((await skuLimiter?.peek(sku))?.remaining).toBe(0);
        if (setup.maxCallsPerRequest !== undefined && callsBefore !== undefined && callsAfter !== undefined)
          expect(callsAfter - callsBefore).toBeLessThanOrEqual(setup.maxCallsPerRequest * REQUESTS);
      },
    );
  });
}
