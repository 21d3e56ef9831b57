import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { ALGORITHMS, MemoryStore, createLimiter } from '@sluice/core';
import { mapTokenBucket } from './floor';
import { interleaved, type Decide } from './measure';

// Micro benchmark: decisions/s of limiter.consume on the memory store, per algorithm, next to
// the plain-Map floor, interleaved in one process and reported as ratios (median of rounds).
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MS = Number(process.env.BENCH_MS ?? 300);

function sluice(algorithm: (typeof ALGORITHMS)[number]): () => Decide {
  return () => {
    const limiter = createLimiter({
      algorithm,
      rate: '1000000/1s',
      store: new MemoryStore({ maxKeys: 200_000 }),
      ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
    });
    return (key) => limiter.consume(key);
  };
}

async function main(): Promise<void> {
  const scenarios = {
    'one hot key': ['hot'],
    '100 k keys': Array.from({ length: 100_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`),
  };
  const candidates: Array<[string, () => Decide]> = [
    ['plain Map token bucket (floor)', () => mapTokenBucket(1_000_000, 1000)],
    ...ALGORITHMS.filter((a) => a !== 'sliding-log').map((a): [string, () => Decide] => [
      `sluice ${a}`,
      sluice(a),
    ]),
  ];
  const results: Record<string, Record<string, { perSecond: number; ofFloor: number }>> = {};
  for (const [scenario, keys] of Object.entries(scenarios)) {
    process.stderr.write(
      `micro: ${scenario}, ${ROUNDS} rounds of ${candidates.length} candidates × ${MS} ms\n`,
    );
    const medians = await interleaved(candidates, keys, {
      rounds: ROUNDS,
      ms: MS,
      onRound: (r) => process.stderr.write(`  round ${r + 1}/${ROUNDS}\n`),
    });
    const floor = medians.get(candidates[0]![0]) as number;
    results[scenario] = Object.fromEntries(
      [...medians].map(([name, perSecond]) => [
        name,
        { perSecond: Math.round(perSecond), ofFloor: +(perSecond / floor).toFixed(2) },
      ]),
    );
  }
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const lines = [
    `Machine: ${machine}`,
    '',
    '| candidate | scenario | decisions/s | × floor |',
    '| --- | --- | ---: | ---: |',
  ];
  for (const [scenario, rows] of Object.entries(results)) {
    for (const [name, { perSecond, ofFloor }] of Object.entries(rows))
      lines.push(`| ${name} | ${scenario} | ${perSecond.toLocaleString('en')} | ${ofFloor} |`);
  }
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'latest.json'),
    `${JSON.stringify({ machine, date: new Date().toISOString(), micro: results }, null, 2)}\n`,
  );
  writeFileSync(join(dir, 'latest.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
