import { replay } from '/work/wt/cli/packages/cli/src/replay/replay';
(async () => {
  const t = performance.now();
  const r = await replay({
    input: { kind: 'log', path: process.argv[2] as string },
    policies: ['gcra 10r/s burst=20', 'fixed-window 600/1m', 'leaky-bucket 10r/s burst=20'],
  });
  console.log(
    r.requests,
    (performance.now() - t).toFixed(0),
    'ms',
    process.resourceUsage().maxRSS / 1024,
    'MB',
  );
})();
