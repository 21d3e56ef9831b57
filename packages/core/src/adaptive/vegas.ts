import { clampLimit, type LimitAlgorithm, type LimitState } from './limit-algorithm';

/** TCP Vegas as a concurrency limit: the queue it estimates from the latency above the fastest seen. */
export interface VegasState extends LimitState {
  /** The lowest window latency seen since the last probe (ms), the latency without a queue; `Infinity` before any. */
  readonly noLoadRttMs: number;
  /** Windows until the next probe of the no-load latency. */
  readonly untilProbe: number;
  /** While probing: the limit to come back to, and the windows of the probe left (2: draining, 1: measuring). */
  readonly probe?: { readonly limit: number; readonly windows: number };
}

/** How often the no-load latency is measured afresh, in windows per square root of the limit (Netflix's `probeMultiplier`: 30). */
const PROBE_MULTIPLIER = 30;
/** Windows before the first probe, and before the next one after a probe that found a lower latency. */
const FIRST_PROBE = 10;
/** A probe cuts the limit to this share of the requests the backend serves without a queue. */
const PROBE_DEPTH = 0.75;
/** A probe's latency under this share of the no-load latency it replaces calls the next probe soon. */
const FOUND_LOWER = 0.9;

/**
 * Vegas (Netflix concurrency-limits `VegasLimit`), as a pure step: the requests queued at the
 * backend are estimated as `limit × (1 − noLoadRtt / rtt)`; at most `log10(limit)` the limit
 * grows by `6·log10(limit)`, below `α = 3·log10(limit)` by `log10(limit)`; above
 * `β = 6·log10(limit)` it shrinks (α and β capped for a small backend, below); a drop shrinks
 * it by `log10(limit)`. A window with fewer than half the limit in flight leaves it alone (the
 * app, not the backend, was the bound), and one with more than α of it unused does not grow it
 * (at exactly the backend's capacity the limit drifted to twice its slots, and the queue that
 * let in at the next load step stood for windows).
 *
 * Three changes from Netflix. The queue it keeps is at most what the backend serves without one
 * (`limit × noLoadRtt / rtt`): α at most half of that, β at most all of it (but α ≥ 1, β ≥ 2),
 * and a window without a queue grows the limit by at most that much. Netflix's α of 3 and β of
 * 6 requests are a short queue in front of 20 slots, but three to six service times in front of
 * a backend that serves one request at a time, as a CPU-bound handler in the event loop does:
 * there the limit sat at 5, each request waiting for four others (simulated, one slot of 10 ms
 * at 3×: p99 62 ms; with the cap 37 ms, throughput 0.98 of the capacity against 0.99). From
 * about 10 slots up the cap is above α and β and changes nothing.
 *
 * Above β, Netflix shrinks by `log10(limit)` a window: from 500 in flight, a backend that got
 * four times slower waited ten seconds (at 100 ms windows) for the limit to halve. Here it
 * shrinks by half the estimated queue past β (at least `log10(limit)`), and past 2β straight to
 * `limit × noLoadRtt / rtt + α` (the requests the backend serves without a queue, plus the queue
 * it wants), so the limit heads for that within a window or two.
 *
 * And Netflix's probe forgets the no-load latency and takes the next window's, which under
 * sustained overload is a queued latency — the limit then climbs at each probe. Here
 * a probe cuts the limit for two windows (one drains the backend's queue, one measures), as BBR's
 * ProbeRTT does, then comes back. How deep: to 3/4 of the requests the backend serves without a
 * queue (`limit × noLoadRtt / rtt` from the last window; BBRv2 likewise probes at a share of its
 * estimated BDP rather than BBRv1's 4 packets), never below a quarter of the limit. A quarter
 * every time drains the queue too, but refuses what a probe need not: at a backend's capacity
 * with `shares`, checkout offered at half of it lost 13 % of its requests to one 0.3 s probe
 * (at 3/4, 2 %). When the no-load latency was measured queued, the latency looks queue free at
 * any limit, the estimate is the limit itself and a probe cuts only a quarter; so a probe that
 * finds a latency clearly lower than the one it replaces calls the next one soon, and probes
 * cut deeper until what they find stops falling (the simulated backend of 4 slots at 3×, whose
 * first windows run queued at the initial 20: a mean limit of 6.9, p99 2.0 × the bare latency).
 * At the default window, 0.2 s every ~15 s (the first after 1 s), and only in a window where
 * the limit is in use (at light load it would refuse requests and drain nothing: it waits for
 * load).
 */
export const vegas: LimitAlgorithm<VegasState> = {
  // The first probe soon: the first windows may run at an `initial` far above the backend's capacity.
  init: (limit) => ({ limit, noLoadRttMs: Number.POSITIVE_INFINITY, untilProbe: FIRST_PROBE }),
  update(state, { rttMs, inFlight, dropped }, bounds) {
    const { limit, probe } = state;
    if (probe !== undefined) {
      if (probe.windows > 1) return { ...state, probe: { limit: probe.limit, windows: probe.windows - 1 } };
      // A latency clearly below the one it replaces: the old one was queued, and this may be too.
      const lower = rttMs < FOUND_LOWER * state.noLoadRttMs;
      return {
        limit: probe.limit,
        noLoadRttMs: rttMs,
        untilProbe: lower ? FIRST_PROBE : probeAfter(probe.limit),
      };
    }
    const log = Math.max(1, Math.log10(Math.max(1, limit)));
    // What the backend serves without a queue, by the last window: the queue kept is at most
    // that many requests (latency about twice the no-load one at most), α ≥ 1 and β ≥ 2 (below,
    // a backend of one slot idles between a request and the next).
    const queueFree = (limit * Math.min(state.noLoadRttMs, rttMs)) / rttMs;
    const alpha = Math.min(3 * log, Math.max(1, queueFree / 2));
    const beta = Math.min(6 * log, Math.max(2, queueFree));
    // In use: at most α of the limit left unused in the window.
    const used = inFlight >= limit - alpha;
    // A probe only where the limit binds: below it nothing of ours is queued to drain, and a
    // cut limit would refuse the light load it serves.
    if (state.untilProbe <= 1 && used) {
      const depth = Math.max(limit / 4, PROBE_DEPTH * queueFree);
      return { ...state, limit: clampLimit(depth, bounds), untilProbe: 0, probe: { limit, windows: 2 } };
    }
    const noLoadRttMs = Math.min(state.noLoadRttMs, rttMs);
    const untilProbe = Math.max(1, state.untilProbe - 1);
    let next = limit;
    if (dropped) next = limit - log;
    else if (inFlight * 2 >= limit) {
      const queued = Math.ceil(limit * (1 - noLoadRttMs / rttMs));
      // Grows only a limit in use: one that went unused would let a queue in once load rises.
      if (queued <= Math.min(log, alpha))
        next = used ? limit + Math.min(6 * log, Math.max(1, queueFree)) : limit;
      else if (queued < alpha) next = used ? limit + log : limit;
      else if (queued > 2 * beta) next = (limit * noLoadRttMs) / rttMs + alpha;
      else if (queued > beta) next = limit - Math.max(log, (queued - beta) / 2);
    }
    return { limit: clampLimit(next, bounds), noLoadRttMs, untilProbe };
  },
};

function probeAfter(limit: number): number {
  return Math.max(10, Math.round(PROBE_MULTIPLIER * Math.sqrt(Math.max(1, limit))));
}
