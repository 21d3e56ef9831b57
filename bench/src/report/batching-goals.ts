import type { HttpResult } from '../http/http';
import { METRICS_FRAMEWORKS } from '../http/apps';
import { median } from '../measure';
import { TWO_LIMITS, type RedisResult, type RedisRow } from '../redis/redis';
import { LOG_LIMIT, WIDE_LOG_LIMIT } from '../limits';
import type { Goal } from './results';

const NOT_MEASURED = { measured: 'not measured (section not run)', met: null } as const;

const fmt = (value: number | undefined, digits = 2): string =>
  value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);

/** A ratio with its rounds' spread: `2.96 × (2.81–3.10)`. */
const spread = (value: number, [low, high]: readonly [number, number]): string =>
  `${fmt(value)} × (${fmt(low)}–${fmt(high)})`;

/** Median over the rounds of a / b, and its lowest and highest round. */
function roundRatios(
  a: readonly number[] | undefined,
  b: readonly number[] | undefined,
): { median: number; spread: [number, number] } {
  const ratios = (a ?? []).map((value, r) => value / (b?.[r] ?? Number.NaN));
  return { median: median(ratios), spread: [Math.min(...ratios), Math.max(...ratios)] };
}

const invalid = (rows: readonly RedisRow[]): string => {
  const without = rows.reduce((sum, row) => sum + row.withoutStore, 0);
  return without > 0 ? ` (invalid: ${without} decisions without the store)` : '';
};

/** The goals of Redis batching and its state formats, judged on this run. */
export function batchingGoals(redis: RedisResult | undefined, http: HttpResult | undefined): Goal[] {
  const sluice = (inFlight: number) =>
    redis?.rows.filter((r) => r.inFlight === inFlight && /^sluice:[a-z-]+$/.test(r.id)) ?? [];
  const gcra = (inFlight: number) => sluice(inFlight).find((r) => r.id === 'sluice:gcra');
  const worst = (rows: readonly RedisRow[], field: 'ofRlf' | 'ofIncr') =>
    rows.reduce<RedisRow | undefined>((w, r) => (w === undefined || r[field] < w[field] ? r : w), undefined);
  const goals: Goal[] = [];
  const many = gcra(256);
  goals.push({
    id: 'batch-256-gcra-rlf',
    goal: 'Redis decisions/s at 256 in flight (gcra, batching) vs rate-limiter-flexible RateLimiterRedis',
    target: '≥ 3 × rate-limiter-flexible',
    ...(many === undefined
      ? NOT_MEASURED
      : {
          measured: `${spread(many.ofRlf, many.ofRlfSpread)}${invalid([many])}`,
          met: many.withoutStore === 0 && many.ofRlf >= 3,
        }),
  });
  const worst256 = worst(sluice(256), 'ofRlf');
  goals.push({
    id: 'batch-256-every-rlf',
    goal: `Redis decisions/s at 256 in flight, every algorithm vs rate-limiter-flexible (the sliding log at ${LOG_LIMIT} per window)`,
    target: '≥ 2 × rate-limiter-flexible',
    ...(worst256 === undefined
      ? NOT_MEASURED
      : {
          measured: `worst ${spread(worst256.ofRlf, worst256.ofRlfSpread)} (${worst256.candidate})${invalid(sluice(256))}`,
          met: invalid(sluice(256)) === '' && worst256.ofRlf >= 2,
        }),
  });
  const wideLog = redis?.rows.find(
    (r) => r.inFlight === 256 && r.id === `sluice:sliding-log:${WIDE_LOG_LIMIT}`,
  );
  goals.push({
    id: 'batch-256-log-wide-rlf',
    goal: `Redis decisions/s at 256 in flight, the sliding log at ${WIDE_LOG_LIMIT} per window (a sorted set) vs rate-limiter-flexible`,
    target: '≥ 1.5 × rate-limiter-flexible',
    ...(wideLog === undefined
      ? NOT_MEASURED
      : {
          measured: `${spread(wideLog.ofRlf, wideLog.ofRlfSpread)}${invalid([wideLog])}`,
          met: wideLog.withoutStore === 0 && wideLog.ofRlf >= 1.5,
        }),
  });
  const two = (id: string) => redis?.rows.find((r) => r.inFlight === 256 && r.id === id);
  const [twoSluice, twoRlf] = [two(TWO_LIMITS.sluice), two(TWO_LIMITS.rlf)];
  const twoRatio = roundRatios(twoSluice?.samples, twoRlf?.samples);
  goals.push({
    id: 'batch-256-two-limits',
    goal: 'Several limits [perIp, perSku] on one Redis node at 256 in flight: sluice consumeAll vs two RateLimiterRedis.consume calls per request',
    target: '≥ 2 × two rate-limiter-flexible calls',
    ...(twoSluice === undefined || twoRlf === undefined
      ? NOT_MEASURED
      : {
          measured: `${spread(twoRatio.median, twoRatio.spread)}${invalid([twoSluice])}`,
          met: twoSluice.withoutStore === 0 && twoRatio.median >= 2,
        }),
  });
  goals.push({
    id: 'batch-256-gcra-incr',
    goal: 'Redis decisions/s at 256 in flight (gcra) vs the bare-INCR ceiling (one INCR per request)',
    target: '≥ 1.5 × bare INCR',
    ...(many === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(many.ofIncr)} × INCR${invalid([many])}`,
          met: many.withoutStore === 0 && many.ofIncr >= 1.5,
        }),
  });
  const worst1 = worst(sluice(1), 'ofRlf');
  goals.push({
    id: 'batch-1-every-rlf',
    goal: 'Redis decisions/s at 1 in flight, every algorithm vs rate-limiter-flexible',
    target: '≥ 0.9 × rate-limiter-flexible',
    ...(worst1 === undefined
      ? NOT_MEASURED
      : {
          measured: `worst ${spread(worst1.ofRlf, worst1.ofRlfSpread)} (${worst1.candidate})${invalid(sluice(1))}`,
          met: invalid(sluice(1)) === '' && worst1.ofRlf >= 0.9,
        }),
  });
  const size = (maxSize: number) =>
    redis?.batching.sizes.find((s) => s.algorithm === 'gcra' && s.maxSize === maxSize);
  const [alone, full] = [size(1), size(64)];
  const share =
    alone === undefined || full === undefined ? Number.NaN : full.usecPerDecision / alone.usecPerDecision;
  goals.push({
    id: 'batch-redis-time-64',
    goal: 'Redis time per decision at batch 64 (gcra, INFO commandstats usec) vs batch: false',
    target: '≤ 0.45 × batch: false',
    ...(full === undefined || alone === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(share)} × (${fmt(full.usecPerDecision)} vs ${fmt(alone.usecPerDecision)} µs, ${fmt(full.perCall, 1)} decisions per call)`,
          met: full.withoutStore === 0 && share <= 0.45,
        }),
  });
  const counted = (name: string) => redis?.batching.instructions?.find((row) => row.name === name);
  const [fresh, state, shared, hot, lone] = [
    'gcra b64 fresh',
    'gcra b64 state',
    'gcra b64 shared',
    'gcra b64 hot',
    'gcra admitted',
  ].map(counted);
  const k = (row: { perDecision: number } | undefined): string =>
    row === undefined ? 'n/a' : `${fmt(row.perDecision / 1000, 1)} k`;
  goals.push({
    id: 'batch-instructions-64',
    goal: 'Redis instructions per decision at batch 64 (gcra, callgrind), keys each holding a state of their own (the usual case; fresh keys, keys sharing one state and one hot key beside)',
    target: '≤ 25 k per decision',
    ...(redis === undefined
      ? NOT_MEASURED
      : state === undefined
        ? { measured: 'not measured (valgrind is not on PATH)', met: null }
        : {
            measured: `${k(state)} (fresh keys ${k(fresh)}, one same state ${k(shared)}, hot key ${k(hot)}; alone ${k(lone)})`,
            met: state.perDecision <= 25_000,
          }),
  });
  const on = redis?.batching.latency.find((l) => l.batch);
  goals.push({
    id: 'batch-p99-1',
    goal: 'p99 latency of one decision at 1 in flight (gcra), batching vs batch: false',
    target: '≤ 1.1 × batch: false',
    ...(on === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(on.p99OfUnbatched, 3)} × (p99 ${fmt(on.p99Us, 0)} µs)${on.withoutStore > 0 ? ' (invalid: decisions without the store)' : ''}`,
          met: on.withoutStore === 0 && on.p99OfUnbatched <= 1.1,
        }),
  });
  for (const framework of METRICS_FRAMEWORKS) {
    const row = (limiter: 'sluice' | 'floor-batch') =>
      http?.rows.find(
        (r) =>
          r.framework === framework && r.limiter === limiter && r.store === 'redis' && r.path === 'admitted',
      );
    const [mine, floor] = [row('sluice'), row('floor-batch')];
    const ok = mine !== undefined && mine.withoutStore === 0 && mine.expectedShare >= 0.99;
    // Round by round: both ran in each round, each against the bare runs around it.
    const ofFloor = roundRatios(mine?.ratios, floor?.ratios);
    goals.push({
      id: `batch-http-${framework}-floor`,
      goal: `HTTP ${framework}, Redis, admitted path: sluice's ratio to bare vs the floor's (the same app making one batched Redis call per request, no limiter)`,
      target: '≥ 0.95 × the floor’s ratio',
      ...(mine === undefined || floor === undefined
        ? NOT_MEASURED
        : {
            measured: `${spread(ofFloor.median, ofFloor.spread)} (${fmt(mine.ratio, 3)} vs ${fmt(floor.ratio, 3)})${ok ? '' : ' (invalid)'}`,
            met: ok && ofFloor.median >= 0.95,
          }),
    });
  }
  return goals;
}
