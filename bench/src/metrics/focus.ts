// `npx tsx src/metrics/focus.ts`: only the metrics section (issue 13's goals), printed; writes
// nothing to results/ (a partial run must not replace latest.json). The same knobs as `pnpm bench`.
import { describeMachine, machineLine } from '../machine';
import { judgeGoals } from '../report/goals';
import { markdown } from '../report/markdown';
import { settingsFromEnv } from '../settings';
import { runMetrics } from './metrics';

async function main(): Promise<void> {
  const started = performance.now();
  const machine = describeMachine();
  const settings = { ...settingsFromEnv(), sections: ['metrics'] as const };
  const metrics = await runMetrics(settings, machine.pinning);
  const goals = judgeGoals({ metrics });
  process.stdout.write(
    markdown({
      machine,
      date: new Date().toISOString(),
      durationSeconds: Math.round((performance.now() - started) / 100) / 10,
      settings,
      goals: goals.filter((goal) => goal.id.startsWith('metrics-')),
      metrics,
    }),
  );
  console.log(`\n${machineLine(machine)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
