import type { Decision } from '../types';
import type { Limiter } from './limiter-types';

/** One limit of a request with several ({@link consumeAll}). */
export interface LimitRequest {
  /** A limiter made by `createLimiter`. */
  readonly limiter: Limiter;
  /** The key this limit counts the request under. */
  readonly key: string;
  /** Units the request takes from this limit. @defaultValue the limiter's `cost` */
  readonly cost?: number;
  /** Passed to the limiter's `overrides` function, as in `consume`. */
  readonly context?: unknown;
  /** Count the request here, but never refuse it because of this limit (nginx `limit_req_dry_run`). @defaultValue false */
  readonly dryRun?: boolean;
}

/** A limit of a request as {@link takeAll} takes it: a {@link LimitRequest}, or a probe. */
export interface TakeRequest extends LimitRequest {
  /**
   * Decide the request at its `cost` but take nothing: it is refused as a request of that cost
   * would be, admitted while the units are left (see `JointPart.probe`), and reported like any
   * decision. The HTTP layer asks a request of cost 0 so, at cost 1. @defaultValue false
   */
  readonly probe?: boolean;
}

/** A refund: gives back exactly what one limit's admission took; never rejects. */
export type Refund = () => Promise<unknown>;

/** {@link consumeAll}'s decisions, and how to give back what each limit that admitted took. */
export interface TakenAll {
  readonly decisions: Array<Decision | undefined>;
  /**
   * Per limit, in order: gives back exactly what its admission took (each window in the window
   * it counted in, the sliding log's very entries, leased units to their lease), for a request
   * that was admitted but will not run (a held request whose client left); `undefined` where
   * nothing was taken or nothing can be given back exactly (then `limiter.cancel` still gives
   * back a delayed turn). A refund the store fails is reported as a `storeError` and lost.
   */
  readonly refunds: ReadonlyArray<Refund | undefined>;
}
