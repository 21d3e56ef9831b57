import type { HttpResult } from '../http/http';
import { METRICS_FRAMEWORKS } from '../http/apps';
import type { RedisResult, RedisRow } from '../redis/redis';
import type { Goal } from './results';

const NOT_MEASURED = { measured: 'not measured (section not run)', met: null } as const;

const fmt = (value: number | undefined, digits = 2): string =>
  value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);

const invalid = (rows: readonly RedisRow[]): string => {
  const without = rows.reduce((sum, row) => sum + row.withoutStore, 0);
  return without > 0 ? ` (invalid: ${without} decisions without the store)` : '';
};

/** The goals of issue 11 (Redis batching), judged on this run. */
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
          measured: `${fmt(many.ofRlf)} ×${invalid([many])}`,
          met: many.withoutStore === 0 && many.ofRlf >= 3,
        }),
  });
  const worst256 = worst(sluice(256), 'ofRlf');
  goals.push({
    id: 'batch-256-every-rlf',
    goal: 'Redis decisions/s at 256 in flight, every algorithm vs rate-limiter-flexible',
    target: '≥ 2 × rate-limiter-flexible',
    ...(worst256 === undefined
      ? NOT_MEASURED
      : {
          measured: `worst ${fmt(worst256.ofRlf)} × (${worst256.candidate})${invalid(sluice(256))}`,
          met: invalid(sluice(256)) === '' && worst256.ofRlf >= 2,
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
    target: '≥ 1.0 × rate-limiter-flexible',
    ...(worst1 === undefined
      ? NOT_MEASURED
      : {
          measured: `worst ${fmt(worst1.ofRlf)} × (${worst1.candidate})${invalid(sluice(1))}`,
          met: invalid(sluice(1)) === '' && worst1.ofRlf >= 1,
        }),
  });
  const size = (maxSize: number) =>
    redis?.batching.sizes.find((s) => s.algorithm === 'gcra' && s.maxSize === maxSize);
  const [alone, full] = [size(1), size(64)];
  const share =
    alone === undefined || full === undefined ? Number.NaN : full.usecPerDecision / alone.usecPerDecision;
  goals.push({
    id: 'batch-redis-time-64',
    goal: 'Redis time per decision at batch 64 (gcra, INFO commandstats usec) vs batch: false (the issue asks ≤ 25 k instructions, ~0.4 of one call alone)',
    target: '≤ 0.4 × batch: false',
    ...(full === undefined || alone === undefined
      ? NOT_MEASURED
      : {
          measured: `${fmt(share)} × (${fmt(full.usecPerDecision)} vs ${fmt(alone.usecPerDecision)} µs, ${fmt(full.perCall, 1)} decisions per call)`,
          met: full.withoutStore === 0 && share <= 0.4,
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
    const row = (limiter: 'sluice' | 'usual') =>
      http?.rows.find(
        (r) =>
          r.framework === framework && r.limiter === limiter && r.store === 'redis' && r.path === 'admitted',
      );
    const [mine, usual] = [row('sluice'), row('usual')];
    const ok = mine !== undefined && mine.withoutStore === 0 && mine.expectedShare >= 0.99;
    goals.push({
      id: `batch-http-${framework}-vs-usual`,
      goal: `HTTP ${framework}, Redis, admitted path: sluice's ratio to bare vs ${usual?.name ?? 'the usual limiter'}'s`,
      target: '≥ 1.3 × the usual limiter’s ratio',
      ...(mine === undefined || usual === undefined
        ? NOT_MEASURED
        : {
            measured: `${fmt(mine.ratio / usual.ratio)} × (${fmt(mine.ratio, 3)} vs ${fmt(usual.ratio, 3)})${ok ? '' : ' (invalid)'}`,
            met: ok && mine.ratio >= 1.3 * usual.ratio,
          }),
    });
    if (framework !== 'express') {
      goals.push({
        id: `batch-http-${framework}-bare`,
        goal: `HTTP ${framework}, sluice Redis store, admitted path: requests/s vs bare`,
        target: '≥ 0.7 × bare',
        ...(mine === undefined
          ? NOT_MEASURED
          : {
              measured: `${fmt(mine.ratio, 3)} × bare${ok ? '' : ' (invalid)'}`,
              met: ok && mine.ratio >= 0.7,
            }),
      });
    }
  }
  return goals;
}
