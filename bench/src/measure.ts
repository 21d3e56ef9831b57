/** A candidate of the micro bench: takes a key, decides once (each reads its own clock). */
export type Decide = (key: string) => Promise<unknown>;

/** A named, ready candidate. */
export interface Contender {
  readonly name: string;
  readonly decide: Decide;
}

/** Decisions per second of `decide` over `keys` in order, run for about `ms` of wall time. */
export async function rate(decide: Decide, keys: readonly string[], ms: number): Promise<number> {
  const start = performance.now();
  let done = 0;
  while (performance.now() - start < ms) {
    for (let i = 0; i < 2048; i++) {
      await decide(keys[done % keys.length] as string);
      done++;
    }
  }
  return done / ((performance.now() - start) / 1000);
}

/** The median of numbers (NaN for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Rounds a number to `digits` significant decimals for the report. */
export function round(value: number, digits = 2): number {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : value;
}

/** Every sample of a candidate and their median. */
export interface Samples {
  readonly median: number;
  readonly samples: readonly number[];
}

/**
 * Warms every contender (one full pass over `keys`, and at least `ms`), then runs each once per
 * round in a rotating order (A B C, B C A, …) and returns each one's median: a noisy, shared
 * machine hits every contender alike. Contenders keep their state across rounds, so the "many
 * keys" scenario measures a store that already holds every key.
 */
export async function interleaved(
  contenders: readonly Contender[],
  keys: readonly string[],
  { rounds, ms, onRound }: { rounds: number; ms: number; onRound?: (round: number) => void },
): Promise<Map<string, Samples>> {
  for (const { decide } of contenders) {
    for (const key of keys) await decide(key);
    await rate(decide, keys, ms);
  }
  const samples = new Map<string, number[]>(contenders.map(({ name }) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    onRound?.(r);
    for (let i = 0; i < contenders.length; i++) {
      const { name, decide } = contenders[(i + r) % contenders.length] as Contender;
      samples.get(name)?.push(await rate(decide, keys, ms));
    }
  }
  return new Map([...samples].map(([name, values]) => [name, { median: median(values), samples: values }]));
}
