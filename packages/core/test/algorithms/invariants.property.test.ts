import fc from 'fast-check';
import { ALGORITHMS, type AlgorithmName, type Policy, type Verdict } from '../../src';
import { resolvePolicy, runStep } from '../../src/adapter';

/** A request: time step since the previous one (ms) and cost. */
type Request = readonly [dt: number, cost: number];

const policyArb = (algorithm: AlgorithmName): fc.Arbitrary<Policy> =>
  fc
    .record({
      limit: fc.integer({ min: 1, max: 20 }),
      window: fc.constantFrom(1, 7, 1000, 1500, 60_000),
      burst: fc.integer({ min: 0, max: 10 }),
      nodelay: fc.boolean(),
    })
    .map(({ limit, window, burst, nodelay }) =>
      resolvePolicy({
        algorithm,
        rate: { limit, window },
        burst,
        ...(algorithm === 'leaky-bucket' ? { nodelay } : {}),
      }),
    );

const requestsArb = (maxCost: number): fc.Arbitrary<Request[]> =>
  fc.array(
    fc.tuple(
      fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
      fc.integer({ min: 0, max: maxCost }),
    ),
    {
      minLength: 1,
      maxLength: 80,
    },
  );

/** Runs requests through the pure step as a store would, returning (time, cost, verdict) triples. */
function run(policy: Policy, requests: readonly Request[], start = 1_700_006_400_000) {
  let state: unknown;
  let expiresAt = 0;
  let now = start;
  return requests.map(([dt, cost]) => {
    now += dt;
    const step = runStep(now < expiresAt ? state : undefined, policy, now, cost);
    if (step.state !== undefined) {
      state = step.state;
      expiresAt = now + step.ttlMs;
    }
    return { now, cost, verdict: step.verdict, ttlMs: step.ttlMs, wrote: step.state !== undefined };
  });
}

const capacityOf = (policy: Policy): number =>
  ['gcra', 'token-bucket', 'leaky-bucket'].includes(policy.algorithm) ? policy.burst + 1 : policy.limit;

describe.each(ALGORITHMS)('%s invariants (fast-check)', (algorithm) => {
  test('every verdict is well-formed: finite integers >= 0, consistent with allowed', () => {
    fc.assert(
      fc.property(policyArb(algorithm), requestsArb(25), (policy, requests) => {
        for (const { verdict, cost, ttlMs, wrote } of run(policy, requests)) {
          const v: Verdict = verdict;
          for (const n of [v.limit, v.remaining, v.resetMs, v.retryAfterMs, v.delayMs, ttlMs]) {
            expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
          }
          expect(v.limit).toBe(capacityOf(policy));
          expect(v.remaining).toBeLessThanOrEqual(v.limit);
          if (v.allowed) {
            expect(v.retryAfterMs).toBe(0);
            expect(v.reason).toBeUndefined();
          } else {
            expect(v.delayMs).toBe(0);
            expect(wrote).toBe(false);
            if (cost > v.limit) expect(v).toMatchObject({ reason: 'cost-exceeds-capacity', retryAfterMs: 0 });
            else expect(v.reason === 'limited' && v.retryAfterMs > 0).toBe(true);
          }
          if (wrote) expect(ttlMs).toBeGreaterThan(0);
          if (cost === 0) expect(wrote).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('peeks change nothing: removing them leaves every other verdict as it was', () => {
    fc.assert(
      fc.property(policyArb(algorithm), requestsArb(6), (policy, requests) => {
        const withPeeks = run(policy, requests).filter((r) => r.cost > 0);
        // Fold each removed peek's time step into the next request so times stay the same.
        const folded: Request[] = [];
        let carried = 0;
        for (const [dt, cost] of requests) {
          if (cost === 0) carried += dt;
          else {
            folded.push([dt + carried, cost]);
            carried = 0;
          }
        }
        expect(run(policy, folded).map((r) => r.verdict)).toEqual(withPeeks.map((r) => r.verdict));
      }),
      { numRuns: 200 },
    );
  });

  test('retryAfterMs is a promise kept: the same request at that time passes', () => {
    fc.assert(
      fc.property(policyArb(algorithm), requestsArb(6), (policy, requests) => {
        const results = run(policy, requests);
        const rejected = results.findIndex((r) => !r.verdict.allowed && r.verdict.reason === 'limited');
        fc.pre(rejected >= 0);
        const retry = results[rejected]!;
        const replay = run(policy, [
          ...requests.slice(0, rejected + 1),
          [retry.verdict.retryAfterMs, retry.cost],
        ]);
        expect(replay[replay.length - 1]!.verdict.allowed).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('hard limits (fast-check)', () => {
  test.each(['gcra', 'token-bucket', 'leaky-bucket'] as const)(
    '%s: any interval of length D admits at most capacity + D × rate units',
    (algorithm) => {
      fc.assert(
        fc.property(policyArb(algorithm), requestsArb(4), (policy, requests) => {
          const admitted = run(policy, requests).filter((r) => r.verdict.allowed && r.cost > 0);
          for (let i = 0; i < admitted.length; i++) {
            let units = 0;
            for (let j = i; j < admitted.length; j++) {
              units += admitted[j]!.cost;
              const span = admitted[j]!.now - admitted[i]!.now;
              expect(units).toBeLessThanOrEqual(
                capacityOf(policy) + Math.floor((span * policy.limit) / policy.windowMs),
              );
            }
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  test('sliding-log: no window of windowMs ever holds more than limit admitted units', () => {
    fc.assert(
      fc.property(policyArb('sliding-log'), requestsArb(4), (policy, requests) => {
        const admitted = run(policy, requests).filter((r) => r.verdict.allowed && r.cost > 0);
        for (const a of admitted) {
          const inWindow = admitted.filter((b) => b.now >= a.now && b.now < a.now + policy.windowMs);
          expect(inWindow.reduce((sum, b) => sum + b.cost, 0)).toBeLessThanOrEqual(policy.limit);
        }
      }),
      { numRuns: 300 },
    );
  });

  test.each(['fixed-window', 'sliding-window'] as const)(
    '%s: no window of windowMs holds more than 2 × limit',
    (algorithm) => {
      fc.assert(
        fc.property(policyArb(algorithm), requestsArb(4), (policy, requests) => {
          const admitted = run(policy, requests).filter((r) => r.verdict.allowed && r.cost > 0);
          for (const a of admitted) {
            const inWindow = admitted.filter((b) => b.now >= a.now && b.now < a.now + policy.windowMs);
            expect(inWindow.reduce((sum, b) => sum + b.cost, 0)).toBeLessThanOrEqual(2 * policy.limit);
          }
        }),
        { numRuns: 300 },
      );
    },
  );
});
