import { StoreTimeoutError } from './store-errors';

/** A call a {@link DeadlineList} bounds: linked from its start until it settles or its time is up. */
export abstract class Deadline {
  /** `performance.now()` when the call started. */
  startedAt = 0;
  prev: Deadline | undefined = undefined;
  next: Deadline | undefined = undefined;
  /** `waiting` while linked; `late` once past its time (unlinked, its verdict due a turn later). */
  state: 'waiting' | 'late' | 'settled' = 'waiting';
  /** How much later than its time the list noticed it was past it, in whole ms. */
  lagMs = 0;

  /** The call's time is up and it has not settled since, a turn later: it fails with `error`. */
  abstract timedOut(error: StoreTimeoutError): void;
}

/**
 * Bounds calls that all have the same `timeoutMs` (one guard's store calls): each settles as it
 * would, or fails with {@link StoreTimeoutError} once it has had `timeoutMs` and one turn of the
 * event loop's I/O phase without settling.
 *
 * Why the extra turn: Node runs expired timers before it reads sockets. When the process was busy
 * (synchronous work longer than `timeoutMs`) while a reply was on its way, the timer and the reply
 * are both due when the loop comes back, and the timer would win although the store answered in
 * time. Deferring the verdict with `setImmediate` lets the poll phase, which always runs between
 * the timers and the immediates, read that reply first. A store that really is silent still fails
 * within `timeoutMs` plus that one turn.
 *
 * One timeout for every call: they expire in the order they started, so one timer armed for the
 * oldest call waiting suffices, where a timeout per call made a timer, a promise and closures per
 * call (measured: about a kilobyte per store call). A call that settles is unlinked at once, so
 * nothing holds it or its promise; the timer is not re-armed then (it would cost one per call):
 * armed for a call that has settled since, it fires early, and is armed again for the oldest
 * call still waiting. It never keeps the process alive (the turn, once due, does).
 */
export class DeadlineList {
  #head: Deadline | undefined = undefined;
  #tail: Deadline | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  readonly #fire = (): void => this.#expire();

  /**
   * @param timeoutMs - every call's bound, in ms
   * @param options.clearWhenIdle - clear the timer as soon as no call waits, where it is otherwise
   * left to fire (unreferenced, harmless): for a user whose timers must all be gone when it is
   * idle (the concurrency limiter's permits), at the cost of a timer per call made alone
   */
  constructor(
    readonly timeoutMs: number,
    options?: { readonly clearWhenIdle?: boolean },
  ) {
    this.#clearWhenIdle = options?.clearWhenIdle === true;
  }

  readonly #clearWhenIdle: boolean;

  /** Starts bounding a call (now), in arrival order. */
  add(call: Deadline): void {
    call.startedAt = performance.now();
    const tail = this.#tail;
    if (tail === undefined) this.#head = call;
    else {
      tail.next = call;
      call.prev = tail;
    }
    this.#tail = call;
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  /**
   * Marks a call settled, and unlinks it if it is still waiting; `false` when it had settled
   * already or timed out (then its outcome is no longer its own to give).
   */
  settle(call: Deadline): boolean {
    const { state } = call;
    if (state === 'settled') return false;
    call.state = 'settled';
    if (state === 'waiting') {
      this.#unlink(call);
      if (this.#clearWhenIdle && this.#head === undefined && this.#timer !== undefined) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
      }
    }
    return true;
  }

  /**
   * Settles like `promise`, or rejects with {@link StoreTimeoutError} once `promise` has had this
   * list's `timeoutMs` and one turn without settling; what it resolves after that goes to `late`.
   */
  bound<T>(promise: Promise<T>, late?: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call = new BoundCall(reject);
      this.add(call);
      promise.then(
        (value) => {
          if (this.settle(call)) resolve(value);
          else if (late !== undefined) {
            try {
              late(value);
            } catch {
              // Its give-back lost, as one the store fails; never an unhandled rejection.
            }
          }
        },
        (error: unknown) => {
          if (this.settle(call)) reject(error);
        },
      );
    });
  }

  #unlink(call: Deadline): void {
    const { prev, next } = call;
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next === undefined) this.#tail = prev;
    else next.prev = prev;
    call.prev = undefined;
    call.next = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#fire, ms);
    this.#timer.unref();
  }

  /**
   * Takes the calls past their time off the list, and gives each its verdict one turn later
   * unless it settles first (see {@link DeadlineList} for why the turn). Timers fire on whole
   * milliseconds, so a call due less than one from now is due: its own timer would have fired.
   */
  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    const { timeoutMs } = this;
    let late: Deadline[] | undefined;
    let call = this.#head;
    while (call !== undefined && call.startedAt + timeoutMs < now + 1) {
      this.#unlink(call);
      call.state = 'late';
      call.lagMs = Math.max(0, Math.round(now - call.startedAt - timeoutMs));
      (late ??= []).push(call);
      call = this.#head;
    }
    if (call !== undefined) this.#arm(Math.max(1, Math.ceil(call.startedAt + timeoutMs - now)));
    // Referenced, unlike the timer: an unreferenced immediate would let the poll phase block
    // until some other event, holding the verdict far past one turn.
    if (late !== undefined) setImmediate(timedOut, late, timeoutMs);
  }
}

function timedOut(late: readonly Deadline[], timeoutMs: number): void {
  for (const call of late) {
    if (call.state !== 'late') continue;
    call.state = 'settled';
    call.timedOut(new StoreTimeoutError(timeoutMs, call.lagMs));
  }
}

/** A call bounded by {@link DeadlineList.bound}: its time up, its promise rejects. */
class BoundCall extends Deadline {
  constructor(private readonly reject: (error: unknown) => void) {
    super();
  }

  timedOut(error: StoreTimeoutError): void {
    this.reject(error);
  }
}
