/**
 * What an adaptive limiter answers and counts: apart from its options, so that the metrics sink
 * can name them without importing the options (which name the sink).
 */

/**
 * Why a request got no permit: `'limited'` (the limit is reached and there is no queue, or its
 * partition may not borrow), `'overloaded'` (the queue has stood longer than `targetMs`: refused
 * at arrival, or after waiting longer than `targetMs`), `'queue-full'`, `'queue-timeout'`
 * (no permit within `maxWaitMs`), `'cancelled'` (its `signal` aborted while it waited).
 */
export type AdaptiveRefusal = 'limited' | 'overloaded' | 'queue-full' | 'queue-timeout' | 'cancelled';

/** How a request ended, for {@link AdaptivePermit.release}. */
export interface AdaptiveReleaseOptions {
  /**
   * The request failed for lack of capacity (a timeout, its client gave up): AIMD and Vegas
   * shrink the limit; its latency is not measured.
   * @defaultValue false
   */
  dropped?: boolean;
  /** Its latency says nothing about load (a failure before any work): not measured. @defaultValue false */
  ignore?: boolean;
}

/** A permit of an adaptive limiter: give it back with `release()` when the request ends. */
export interface AdaptivePermit {
  /** The partition it counts in. */
  readonly partition: string;
  /** `true` once released. */
  readonly released: boolean;
  /**
   * Gives the permit back and measures its latency (acquire to now), once: later calls do nothing.
   * @param options - whether the request was dropped or is not to be measured
   */
  release(options?: AdaptiveReleaseOptions): void;
}

/** The answer to `acquire`. Being refused is a normal answer, never a rejected promise. */
export interface AdaptiveDecision {
  /** Whether the request may go on: it holds `permit`. */
  readonly allowed: boolean;
  /** The permit, when allowed: release it when the request ends. */
  readonly permit?: AdaptivePermit;
  /** The partition asked for (`'*'` for a name not in `shares`, or none). */
  readonly partition: string;
  /** The limit when decided (requests in flight, all partitions). */
  readonly limit: number;
  /** Requests in flight after this decision, all partitions. */
  readonly inFlight: number;
  /** Ms after which a retry may find a permit: an estimate from the measured latency; 0 when allowed. */
  readonly retryAfterMs: number;
  /** Ms this request waited in the queue (0 when decided at once). */
  readonly waitedMs: number;
  /** Set when refused. */
  readonly reason?: AdaptiveRefusal;
}

/** Counts of one partition, for metrics. */
export interface AdaptivePartitionStats {
  /** Its guaranteed part of the limit (share × limit, floored; at least 1 for a share). */
  readonly limit: number;
  /** Its requests in flight now. */
  readonly inFlight: number;
  /** Its requests waiting now. */
  readonly queued: number;
  /** Its requests refused since the limiter was made. */
  readonly shed: number;
}

/** An adaptive limiter's counts now, for gauges. */
export interface AdaptiveStats {
  /** The limit: requests in flight at most, all partitions. */
  readonly limit: number;
  /** Requests in flight now, all partitions. */
  readonly inFlight: number;
  /** Requests waiting in the queue now, all partitions. */
  readonly queued: number;
  /** By partition name (`'*'` for the unlisted). */
  readonly partitions: Readonly<Record<string, AdaptivePartitionStats>>;
}
