/** A candidate: takes a key and a time, decides once. */
export type Decide = (key: string, now: number) => Promise<unknown>;

/** Decisions per second of `decide` over `keys`, run for about `ms` of wall time. */
export async function rate(decide: Decide, keys: readonly string[], ms: number): Promise<number> {
  const start = performance.now();
  let done = 0;
  let now = 1_700_006_400_000;
  while (performance.now() - start < ms) {
    for (let i = 0; i < 2048; i++) {
      await decide(keys[done % keys.length] as string, now);
      done++;
    }
    now += 1;
  }
  return done / ((performance.now() - start) / 1000);
}

/** The median of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Runs every candidate once per round, in a rotating order (A B C, B C A, …), for `rounds`
 * rounds, and returns each one's median: a noisy, shared machine hits every candidate alike.
 */
export async function interleaved(
  candidates: ReadonlyArray<[string, () => Decide]>,
  keys: readonly string[],
  { rounds, ms, onRound }: { rounds: number; ms: number; onRound?: (round: number) => void },
): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(candidates.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    onRound?.(round);
    for (let i = 0; i < candidates.length; i++) {
      const [name, make] = candidates[(i + round) % candidates.length] as [string, () => Decide];
      samples.get(name)?.push(await rate(make(), keys, ms));
    }
  }
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}
