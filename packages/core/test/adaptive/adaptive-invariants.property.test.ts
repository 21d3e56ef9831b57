import fc from 'fast-check';
import { createAdaptiveLimiter, type AdaptiveDecision, type AdaptivePermit } from '../../src';
import { fakeClock } from '../contract/fake-clock';

/** One step of a run: a request arrives, one in flight ends, time passes, or the event loop lags. */
type Step =
  | { readonly kind: 'acquire'; readonly partition: string | undefined }
  | { readonly kind: 'release'; readonly pick: number; readonly dropped: boolean }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'lag' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      partition: fc.constantFrom('checkout', 'browse', 'admin', undefined),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), dropped: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'lag' as const }) },
);

describe('adaptive limiter invariants', () => {
  test('in flight never exceeds the limit at an admission, under 10 000 mixed-priority acquires and releases; every permit comes back once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 10_000, maxLength: 10_000 }),
        fc.constantFrom('vegas', 'gradient2', 'aimd' as const),
        fc.boolean(),
        async (steps, algorithm, queued) => {
          const clock = fakeClock(0);
          let lag: (delayMs: number) => void = () => undefined;
          const limiter = createAdaptiveLimiter({
            algorithm,
            initial: 16,
            min: 2,
            max: 64,
            windowMs: 5,
            shares: { checkout: 0.6, browse: 0.3 },
            queue: queued ? { maxSize: 20, maxWaitMs: 60_000, targetMs: 30 } : false,
            eventLoop: { monitor: (onSample) => ((lag = onSample), () => undefined) },
            clock,
          });
          const held: AdaptivePermit[] = [];
          let admitted = 0;
          let violations = 0;
          // `now`: decided at once, so the limiter's counts are still the decision's.
          const take = (decision: AdaptiveDecision, now = false): void => {
            if (!decision.allowed) return;
            admitted++;
            if (decision.inFlight > decision.limit) violations++;
            if (now && limiter.inFlight() > limiter.limit()) violations++;
            held.push(decision.permit as AdaptivePermit);
          };
          const waiting: Array<Promise<void>> = [];
          for (const step of steps) {
            switch (step.kind) {
              case 'acquire': {
                const decision = limiter.acquire(step.partition);
                if (decision instanceof Promise) waiting.push(decision.then((d) => take(d)));
                else take(decision, true);
                break;
              }
              case 'release': {
                if (held.length === 0) break;
                const [permit] = held.splice(step.pick % held.length, 1) as [AdaptivePermit];
                permit.release({ dropped: step.dropped });
                permit.release(); // a second release does nothing
                break;
              }
              case 'advance':
                clock.advance(step.ms);
                break;
              case 'lag':
                lag(500);
                break;
            }
            const { partitions, inFlight } = limiter.stats();
            const sum = Object.values(partitions).reduce((total, p) => total + p.inFlight, 0);
            if (sum !== inFlight || inFlight !== limiter.inFlight()) violations++;
          }
          limiter.close();
          await Promise.all(waiting);
          expect(violations).toBe(0);
          for (const permit of held.splice(0)) permit.release();
          expect(limiter.stats()).toMatchObject({ inFlight: 0, queued: 0 });
          expect(admitted).toBeGreaterThan(0);
        },
      ),
      // Shrinking 10 000 steps takes minutes: a failure is reported with its seed instead.
      { numRuns: 8, endOnFailure: true },
    );
  });
});
