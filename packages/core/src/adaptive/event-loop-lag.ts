import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * A source of event-loop delays: called once with a listener of each sample's delay (ms);
 * returns what stops it.
 */
export type EventLoopMonitor = (onSample: (delayMs: number) => void) => () => void;

/** Resolution of Node's histogram (ms): finer costs a timer tick more often. */
const RESOLUTION_MS = 10;

/**
 * The default monitor: Node's `monitorEventLoopDelay`, its p99 read and reset every `sampleMs`
 * by an unref'd timer (it never keeps a process alive). Node records the interval between its
 * timer's ticks (every 10 ms on an idle loop), so the resolution is taken off: an idle loop reads
 * about 0 ms, one blocked for 100 ms about 100 ms.
 *
 * @param sampleMs - how often a sample is read
 */
export function eventLoopDelayMonitor(sampleMs: number): EventLoopMonitor {
  return (onSample) => {
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    const timer = setInterval(() => {
      // Nanoseconds, from one tick of its 10 ms timer to the next.
      const delayMs = histogram.count > 0 ? Math.max(0, histogram.percentile(99) / 1e6 - RESOLUTION_MS) : 0;
      histogram.reset();
      onSample(delayMs);
    }, sampleMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      histogram.disable();
    };
  };
}
