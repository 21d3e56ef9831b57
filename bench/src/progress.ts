// Children inherit the start time, so every line counts from the start of the run.
process.env.BENCH_STARTED_AT ??= String(Date.now());
const started = Number(process.env.BENCH_STARTED_AT);

/** Progress on stderr, so stdout keeps only the final table: `[  42.0 s] http · express · round 2/3`. */
export function progress(...parts: ReadonlyArray<string | number>): void {
  if (process.env.BENCH_SILENT === '1') return;
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${seconds} s] ${parts.join(' · ')}\n`);
}
