import {
  createAdaptiveLimiter,
  type AdaptiveAlgorithmName,
  type AdaptiveDecision,
  type AdaptiveQueueOptions,
} from '../../src';

/** A run of the simulation: a backend of fixed capacity behind an adaptive limiter. */
export interface SimulationOptions {
  readonly algorithm: AdaptiveAlgorithmName;
  /** Requests the backend serves at once. */
  readonly slots: number;
  /** Ms one request takes in a slot. */
  readonly serviceMs: number;
  /** Arrivals, as a multiple of the backend's capacity (`slots / serviceMs`). */
  readonly load: number;
  /** Simulated ms; the first quarter is warm-up, not measured. */
  readonly durationMs: number;
  /** The limiter's queue: none by default. Its `maxWaitMs` timers are real ones, never reached here (waiters leave on events). */
  readonly queue?: AdaptiveQueueOptions;
}

/** What a run measured after its warm-up. */
export interface SimulationResult {
  /** Completed requests per ms, as a fraction of the backend's capacity. */
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Mean limit over the measured part. */
  readonly meanLimit: number;
  /** Fraction of arrivals refused. */
  readonly refused: number;
  /** p99 of the time a refusal took (arrival to answer), in ms: 0 when every refusal is at arrival. */
  readonly refusalP99Ms: number;
}

/** Events by time: a binary heap. */
class Events {
  readonly #heap: Array<{ t: number; run: () => void }> = [];

  push(t: number, run: () => void): void {
    const heap = this.#heap;
    heap.push({ t, run });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as { t: number }).t <= t) break;
      [heap[i], heap[parent]] = [heap[parent] as never, heap[i] as never];
      i = parent;
    }
  }

  pop(): { t: number; run: () => void } | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && (heap[l] as { t: number }).t < (heap[m] as { t: number }).t) m = l;
        if (r < heap.length && (heap[r] as { t: number }).t < (heap[m] as { t: number }).t) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m] as never, heap[i] as never];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Simulates clients arriving at `load` × the backend's capacity (Poisson arrivals, a seeded
 * generator), an adaptive limiter without a queue in front, and a backend of `slots` slots of
 * `serviceMs` (±10 %) with a FIFO queue of its own: latency grows with that queue. Everything
 * runs on a fake clock; a run is deterministic.
 */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const { slots, serviceMs, load, durationMs } = options;
  let now = 0;
  let seed = 0x2545f491;
  const random = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x1_0000_0000;
  };
  const limiter = createAdaptiveLimiter({
    algorithm: options.algorithm,
    queue: options.queue ?? false,
    eventLoop: false,
    clock: () => now,
  });
  const events = new Events();
  const backendQueue: Array<() => void> = [];
  let busy = 0;
  const serve = (done: () => void): void => {
    if (busy >= slots) {
      backendQueue.push(() => serve(done));
      return;
    }
    busy++;
    events.push(now + serviceMs * (0.9 + 0.2 * random()), () => {
      busy--;
      done();
      backendQueue.shift()?.();
    });
  };
  const warmUp = durationMs / 4;
  const latencies: number[] = [];
  const refusals: number[] = [];
  let arrivals = 0;
  let refused = 0;
  let limitSum = 0;
  let limitReadings = 0;
  const perMs = (slots / serviceMs) * load;
  const arrive = (): void => {
    const measured = now >= warmUp;
    const start = now;
    if (measured) {
      arrivals++;
      limitSum += limiter.limit();
      limitReadings++;
    }
    const decided = (decision: AdaptiveDecision): void => {
      if (!decision.allowed) {
        if (measured) {
          refused++;
          refusals.push(decision.waitedMs);
        }
        return;
      }
      serve(() => {
        decision.permit?.release();
        if (measured) latencies.push(now - start);
      });
    };
    const decision = limiter.acquire();
    // A waiter is settled within the event that frees it (its promise resolves in the next microtask).
    if (decision instanceof Promise) void decision.then(decided);
    else decided(decision);
  };
  for (let t = -Math.log(1 - random()) / perMs; t < durationMs; t += -Math.log(1 - random()) / perMs) {
    const at = t;
    events.push(at, arrive);
  }
  for (let event = events.pop(); event !== undefined; event = events.pop()) {
    now = event.t;
    event.run();
    // Lets a waiter admitted by this event start its work now, before the clock moves on.
    if (options.queue !== undefined) await Promise.resolve();
  }
  limiter.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    throughput: latencies.length / ((durationMs - warmUp) * (slots / serviceMs)),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    meanLimit: limitSum / Math.max(1, limitReadings),
    refused: refused / Math.max(1, arrivals),
    refusalP99Ms: refusals.sort((a, b) => a - b)[Math.floor(0.99 * refusals.length)] ?? 0,
  };
}
