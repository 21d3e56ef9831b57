/** The sections of the bench, in the order they run. */
export const SECTIONS = ['micro', 'memory', 'http', 'redis', 'replay', 'metrics', 'overload'] as const;
export type SectionName = (typeof SECTIONS)[number];

/** Every knob of a run. The full run's values keep `pnpm bench` to about 15 minutes on 2 cores (the overload section 4). */
export interface Settings {
  /** Sections to run (`BENCH_SECTIONS=micro,redis`). */
  readonly sections: readonly SectionName[];
  /** Micro: measured rounds per candidate (the median is reported). */
  readonly microRounds: number;
  /** Micro: wall time of one candidate's round, ms. */
  readonly microMs: number;
  /** Micro: distinct keys of the "many keys" scenario. */
  readonly microKeys: number;
  /** Memory: distinct keys inserted per candidate. */
  readonly memoryKeys: number;
  /** HTTP: rounds of the interleaved bare/limited sequence. */
  readonly httpRounds: number;
  /** HTTP: seconds of one measured load run. */
  readonly httpSeconds: number;
  /** HTTP: seconds of the unmeasured warm-up run of each app. */
  readonly httpWarmupSeconds: number;
  /** HTTP: autocannon connections. */
  readonly connections: number;
  /** HTTP: requests pipelined on each connection. */
  readonly pipelining: number;
  /** Redis: rounds per candidate and concurrency. */
  readonly redisRounds: number;
  /** Redis: wall time of one measured run, ms. */
  readonly redisMs: number;
  /** Redis: decisions in the command-counting pass of each candidate (and of the flood). */
  readonly redisCountDecisions: number;
  /** Replay: lines of the generated access log `sluice replay` reads (and a fifth of them). */
  readonly replayLines: number;
  /** Overload: seconds of one measured run (the settling runs last 11 times as long). */
  readonly overloadSeconds: number;
  /** Overload: rounds of the interleaved grid. */
  readonly overloadRounds: number;
}

/** The full run. */
export const FULL: Settings = {
  sections: SECTIONS,
  microRounds: 5,
  microMs: 300,
  microKeys: 100_000,
  memoryKeys: 1_000_000,
  httpRounds: 3,
  httpSeconds: 1.5,
  httpWarmupSeconds: 1,
  connections: 100,
  pipelining: 10,
  redisRounds: 3,
  redisMs: 1000,
  redisCountDecisions: 5000,
  replayLines: 1_000_000,
  overloadSeconds: 1,
  overloadRounds: 2,
};

/** `BENCH_QUICK=1`: every section, about a minute, numbers too noisy to judge. */
export const QUICK: Settings = {
  ...FULL,
  microRounds: 5,
  microMs: 60,
  microKeys: 100_000,
  memoryKeys: 200_000,
  httpRounds: 1,
  httpSeconds: 0.5,
  httpWarmupSeconds: 0.3,
  redisRounds: 1,
  redisMs: 200,
  redisCountDecisions: 1000,
  replayLines: 200_000,
  overloadSeconds: 0.3,
  overloadRounds: 1,
};

const NUMBER_KNOBS: ReadonlyArray<[keyof Omit<Settings, 'sections'>, string]> = [
  ['microRounds', 'BENCH_ROUNDS'],
  ['microMs', 'BENCH_MS'],
  ['microKeys', 'BENCH_KEYS'],
  ['memoryKeys', 'BENCH_MEMORY_KEYS'],
  ['httpRounds', 'BENCH_HTTP_ROUNDS'],
  ['httpSeconds', 'BENCH_HTTP_SECONDS'],
  ['httpWarmupSeconds', 'BENCH_HTTP_WARMUP_SECONDS'],
  ['connections', 'BENCH_CONNECTIONS'],
  ['pipelining', 'BENCH_PIPELINING'],
  ['redisRounds', 'BENCH_REDIS_ROUNDS'],
  ['redisMs', 'BENCH_REDIS_MS'],
  ['redisCountDecisions', 'BENCH_REDIS_COUNT'],
  ['replayLines', 'BENCH_REPLAY_LINES'],
  ['overloadSeconds', 'BENCH_OVERLOAD_SECONDS'],
  ['overloadRounds', 'BENCH_OVERLOAD_ROUNDS'],
];

/** The environment variables read by {@link settingsFromEnv}, for the report. */
export const ENV_KNOBS = ['BENCH_QUICK', 'BENCH_SECTIONS', ...NUMBER_KNOBS.map(([, name]) => name)];

/**
 * Settings from the environment: `BENCH_QUICK=1` starts from {@link QUICK}, and each knob
 * (`BENCH_ROUNDS`, `BENCH_HTTP_SECONDS`, …) overrides one value.
 * @throws Error naming the variable when a value is not a positive number or a section is unknown
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): Settings {
  const base = env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true' ? QUICK : FULL;
  const settings: Record<string, unknown> = { ...base };
  for (const [key, name] of NUMBER_KNOBS) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}="${text}": expected a number > 0`);
    settings[key] = value;
  }
  if (env.BENCH_SECTIONS !== undefined && env.BENCH_SECTIONS !== '') {
    const names = env.BENCH_SECTIONS.split(',').map((name) => name.trim());
    for (const name of names) {
      if (!(SECTIONS as readonly string[]).includes(name))
        throw new Error(`BENCH_SECTIONS: unknown section "${name}"; expected some of ${SECTIONS.join(',')}`);
    }
    settings.sections = SECTIONS.filter((name) => names.includes(name));
  }
  return settings as unknown as Settings;
}
