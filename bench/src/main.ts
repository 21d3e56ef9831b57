// `pnpm bench`: every section with the full settings (about 15 minutes on 2 cores), or fewer and
// shorter with BENCH_QUICK=1, BENCH_SECTIONS=micro,redis and the other knobs of settings.ts.
import { runBench } from './run';
import { settingsFromEnv } from './settings';

runBench(settingsFromEnv()).then(
  ({ report }) => {
    process.stdout.write(report);
    // Some peers keep timers (one per key) that would hold the process open for their window.
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
