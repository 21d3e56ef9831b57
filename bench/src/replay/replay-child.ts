// One replay in a fresh process, so its peak memory (maxRSS) is its own: the log of
// BENCH_REPLAY_LOG through the three policies of BENCH_REPLAY_POLICIES (JSON), then `result`;
// the bench ends the process.
import { replay } from '@sluice/cli';

const path = process.env.BENCH_REPLAY_LOG as string;
const policies = JSON.parse(process.env.BENCH_REPLAY_POLICIES as string) as string[];
const started = performance.now();
const cpu = process.cpuUsage();
replay({ input: { kind: 'log', path }, policies }).then(
  (result) => {
    process.send?.({
      type: 'result',
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: ((used) => (used.user + used.system) / 1e6)(process.cpuUsage(cpu)),
      requests: result.requests,
      unparsed: result.unparsed,
      limited: result.policies.map((policy) => policy.limited),
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    });
  },
  (error: unknown) => {
    process.send?.({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
  },
);
