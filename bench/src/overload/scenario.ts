/** What every run of the overload section shares: the workloads, their capacity, the objective. */

/** `backend`: the handler waits on a {@link Backend}; `cpu`: the handler burns the event loop. */
export const WORKLOADS = ['backend', 'cpu'] as const;
export type Workload = (typeof WORKLOADS)[number];

/**
 * The backend's slots and the time each request holds one: 20 × 1000 / 80 = 250 requests/s, so
 * that 10 × capacity (2500 requests/s, refusals mostly) leaves the server most of a core shared
 * with other work (at 1000 requests/s, 10 × could not be refused in time on a busy machine).
 */
export const SLOTS = 20;
export const SERVICE_MS = 80;
export const BACKEND_CAPACITY = (SLOTS * 1000) / SERVICE_MS;

/**
 * CPU burnt per request by the `cpu` workload's handler, ms, in two halves with a turn of the
 * event loop between them (as a handler that renders, awaits, renders), so requests in progress
 * share the core. Its capacity is measured, not assumed: 1000 ms ÷ the server's CPU per request.
 */
export const BURN_MS = 4;

/** A 200 later than this is not goodput. */
export const OBJECTIVE_MS = 250;

/** Each client gives up (closes its connection) after this. */
export const CLIENT_TIMEOUT_MS = 1000;

/** Offered load, × capacity. */
export const LOADS = [0.5, 1, 3, 10] as const;

/** The priorities scenario: a flood of `browse` at this × capacity, `checkout` at this share of it. */
export const FLOOD_LOAD = 10;
export const CHECKOUT_LOAD = 0.5;
export const CHECKOUT_SHARE = 0.7;

/** How a candidate limits (or not) the app it runs in. */
export type CandidateSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'concurrency'; readonly max: number }
  | { readonly kind: 'under-pressure' }
  | { readonly kind: 'adaptive' }
  | { readonly kind: 'adaptive-shares' };

/**
 * @fastify/under-pressure as its README shows it, sampling ten times as often as its default
 * (1 s), so that it can react within a run: 503 while the event loop's mean delay over the last
 * sample passes 50 ms or its utilization 0.98.
 */
export const UNDER_PRESSURE_OPTIONS = {
  sampleInterval: 100,
  maxEventLoopDelay: 50,
  maxEventLoopUtilization: 0.98,
} as const;

/** The candidates of the main grid, in the report's order. */
export const CANDIDATES = [
  'none',
  'concurrency-best',
  'concurrency-high',
  'concurrency-low',
  'under-pressure',
  'adaptive',
] as const;
export type CandidateId = (typeof CANDIDATES)[number];

/** How the report names each candidate. */
export const CANDIDATE_NAMES: Record<CandidateId, string> = {
  none: 'no limiter',
  'concurrency-best': 'sluice concurrencyLimit, best max',
  'concurrency-high': 'sluice concurrencyLimit, max 4 × too high',
  'concurrency-low': 'sluice concurrencyLimit, max 4 × too low',
  'under-pressure': '@fastify/under-pressure',
  adaptive: 'sluice adaptiveLimit',
};
