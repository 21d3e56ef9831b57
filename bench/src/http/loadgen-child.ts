// The load generator, alone on its core: autocannon as a library, one run per request.
import autocannon from 'autocannon';
import { serveRequests } from '../child';

serveRequests(async (message) => {
  if (message.type !== 'run') throw new Error(`unknown request ${message.type}`);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = await autocannon({
    url: String(message.url),
    connections: Number(message.connections),
    pipelining: Number(message.pipelining),
    duration: Number(message.seconds),
    // autocannon checks its end at each sample: 100 ms samples end a run within 100 ms of its duration.
    sampleInt: 100,
  });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = count ?? 0;
  return {
    type: 'result',
    requests: result.requests.total,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    loadCpu: (cpu.user + cpu.system) / 1000 / wallMs,
  };
});
process.send?.({ type: 'ready' });
