import { Deadline, type DeadlineList } from './deadline-list';
import type { Outcome } from '../stores/outcome';
import { StoreTimeoutError } from './store-errors';

/** What a guard does with the outcome of one of its calls. */
export interface CallOutcomes {
  readonly deadlines: DeadlineList;
  /** The store answered a call for `key` that started at `startedAt` (`performance.now()`). */
  answered(key: string, startedAt: number): void;
  /** The store failed a call for `key` (an error, or no answer in time). */
  failed(key: string, error: unknown, startedAt: number): void;
}

/**
 * A store call on a guard's deadline list whose outcome the store tells (an `Outcome`): a failure,
 * or no answer in time, reaches {@link GuardedOutcome.fallBack} once. Its caller's promise's
 * `resolve` and `reject` are set on it by {@link promiseOf}.
 */
export abstract class GuardedOutcome<T, R> extends Deadline implements Outcome<T> {
  resolve: (value: R) => void = ignore;
  reject: (error: unknown) => void = ignore;

  constructor(protected readonly deadlines: DeadlineList) {
    super();
  }

  abstract answered(value: T): void;

  failed(error: unknown): void {
    // Past its time, its own verdict (which knows how late the loop was) is due this turn: a
    // store's queue that gave up on the request at the same time (see `timedOut`) need not speak.
    if (this.state === 'late' && error instanceof StoreTimeoutError) return;
    if (this.deadlines.settle(this)) this.fallBack(error);
  }

  timedOut(error: StoreTimeoutError): void {
    this.fallBack(error);
  }

  /** The store failed the call, or did not answer in time (reported and settled here). */
  protected abstract fallBack(error: unknown): void;
}

/**
 * One guarded store call, as one object: its place on the guard's deadline list, and how it
 * settles its caller's promise, with the store's answer or, when the store fails or is too slow,
 * with the fallback's.
 */
class GuardedCall<R extends { readonly key: string }, T> extends GuardedOutcome<T, T | Promise<T>> {
  constructor(
    private readonly outcomes: CallOutcomes,
    private readonly request: R,
    private readonly fallback: (request: R) => Promise<T>,
    private readonly late: Late<R, T> | undefined,
  ) {
    super(outcomes.deadlines);
  }

  answered(value: T): void {
    if (!this.deadlines.settle(this)) {
      // Decided by the fallback already: what the store took for it goes back. Never thrown
      // into the store's reply handling, where the other requests of a batch are settled.
      try {
        this.late?.(this.request, value);
      } catch {
        // A give-back that cannot even be sent is lost, as one the store fails.
      }
      return;
    }
    try {
      this.outcomes.answered(this.request.key, this.startedAt);
    } catch (error) {
      this.fallBack(error);
      return;
    }
    this.resolve(value);
  }

  protected fallBack(error: unknown): void {
    try {
      this.outcomes.failed(this.request.key, error, this.startedAt);
      this.resolve(this.fallback(this.request));
    } catch (thrown) {
      this.reject(thrown);
    }
  }
}

/**
 * What to do with a store's answer that came after its call was decided by the fallback (it
 * missed its deadline): give back what the store took for it, if anything.
 */
export type Late<R, T> = (request: R, value: T) => void;

/**
 * Asks the store by `send`, bounded by the guard's deadline list; when it fails or is too slow
 * (see {@link DeadlineList}), reports it and resolves with `fallback`'s answer instead; an
 * answer that comes after that goes to `late`.
 * Not async: the hottest path of a remote store, where an async function awaiting a timeout of
 * its own made a timer, three promises and their closures per call.
 */
export function guardedCall<R extends { readonly key: string }, T>(
  outcomes: CallOutcomes,
  request: R,
  send: Send<R, T>,
  fallback: (request: R) => Promise<T>,
  late?: Late<R, T>,
): Promise<T> {
  const pending = new GuardedCall(outcomes, request, fallback, late);
  const promise = promiseOf<T>(pending);
  outcomes.deadlines.add(pending);
  try {
    send(request, pending);
  } catch (error) {
    // A store that throws instead of rejecting fails like any other.
    pending.failed(error);
  }
  return promise;
}

const ignore = (): void => undefined;

/**
 * The call whose promise is being made: one executor for every call, where a closure per call
 * would hold it (`new Promise` runs its executor at once, so nothing else can come between).
 */
let capturing: { resolve: (value: never) => void; reject: (error: unknown) => void } | undefined;

/**
 * A new promise whose `resolve` and `reject` are set on `call`: a guarded call settles its caller's
 * promise itself, without a closure per call to hold it.
 */
export function promiseOf<T>(call: {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}): Promise<T> {
  capturing = call as NonNullable<typeof capturing>;
  return new Promise<T>(capture);
}

function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  const call = capturing as NonNullable<typeof capturing>;
  capturing = undefined;
  call.resolve = resolve;
  call.reject = reject;
}

/** Sends a request to the store; its outcome goes to `to`. */
export type Send<R, T> = (request: R, to: Outcome<T>) => void;

/** A store method that returns a promise, as a {@link Send}. */
export function sendOf<R, T>(call: (request: R) => Promise<T>): Send<R, T> {
  return (request, to) => {
    call(request).then(
      (value) => to.answered(value),
      (error: unknown) => to.failed(error),
    );
  };
}
