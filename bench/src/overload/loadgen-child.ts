// The overload section's load generator, alone on its core: one open-loop run per request.
import { serveRequests } from '../child';
import { openLoop, type Phase } from './open-loop';

/** The `q` quantile of `values` (nearest rank), NaN for none. */
function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

serveRequests(async (message) => {
  if (message.type !== 'run') throw new Error(`unknown request ${message.type}`);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const run = await openLoop(Number(message.port), message.phases as Phase[], {
    objectiveMs: Number(message.objectiveMs),
    timeoutMs: Number(message.timeoutMs),
    measureFromMs: Number(message.measureFromMs ?? 0),
  });
  const cpu = process.cpuUsage(cpuBefore);
  const paths = Object.fromEntries(
    Object.entries(run.tallies).map(([path, { admittedMs, refusedMs, ...counts }]) => [
      path,
      {
        ...counts,
        admittedP50: quantile(admittedMs, 0.5),
        admittedP99: quantile(admittedMs, 0.99),
        refusedP99: quantile(refusedMs, 0.99),
      },
    ]),
  );
  return {
    type: 'result',
    paths,
    buckets: run.buckets,
    seconds: run.seconds,
    lateTicksMs: run.lateTicksMs,
    // Share of one core the generator used over the run (1: it was the bottleneck).
    loadCpu: (cpu.user + cpu.system) / 1000 / (performance.now() - started),
  };
});
process.send?.({ type: 'ready' });
