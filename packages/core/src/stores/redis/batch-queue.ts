import { StoreTimeoutError } from '../../resilience/store-errors';

/** What the queue needs of one request. */
export interface Queued {
  /**
   * Requests of one group may go out together: the Cluster slot of the request's keys, or the
   * same number for every request on a standalone Redis.
   */
  readonly group: number;
  /** `performance.now()` past which the caller no longer waits: never sent after it. `Infinity`: none. */
  readonly deadline: number;
  /** The caller's `timeoutMs`, for the {@link StoreTimeoutError} of a request dropped at its deadline. */
  readonly timeoutMs: number;
  /** Rejects the request's promise. */
  fail(error: unknown): void;
}

/**
 * Sends a batch of one or more requests of one group as one call and settles each of them
 * (resolved, or rejected on its own or with the call). Never rejects: it resolves once the call
 * has settled, which frees its place for the next batch.
 */
export type SendBatch<E> = (batch: readonly E[]) => Promise<void>;

/** One call on its way: until it settles, or is given up (every request in it past its deadline). */
interface InFlight {
  /** The latest deadline of its requests. */
  readonly until: number;
  /** Given up: its place was freed before it settled. */
  released: boolean;
}

/** A group's requests waiting, in arrival order, and its calls on their way. */
interface Group<E> {
  waiting: E[];
  readonly flying: InFlight[];
}

/**
 * Calls one group may have on their way at once. Two, measured (`pnpm bench`, Redis section):
 * with one, Redis idles while this process reads a batch's replies and sends the next; with
 * two, one batch is decided while the next is built; more only adds calls of fewer requests.
 */
export const MAX_IN_FLIGHT = 2;

/**
 * Batching without a timer: a request whose group has fewer than {@link MAX_IN_FLIGHT} calls on
 * their way goes out at once, alone; otherwise it waits, and when a call of its group settles,
 * the requests waiting (up to `maxSize`, in arrival order) go out as one call. So an idle store
 * adds no latency, and a busy one sends fuller calls, about one per round trip.
 *
 * A request still waiting at its deadline is never sent (its caller decided without the store:
 * it is rejected with {@link StoreTimeoutError} when its batch would leave); a call whose every
 * request is past its deadline no longer holds its place, so a call that never returns cannot
 * stall its group, and the requests waiting behind it are bounded by the rate they arrive at
 * times their `timeoutMs`.
 */
export class BatchQueue<E extends Queued> {
  readonly #groups = new Map<number, Group<E>>();

  constructor(
    private readonly send: SendBatch<E>,
    private readonly maxSize: number,
  ) {}

  /** Sends the request now when its group has room, or queues it for the group's next call. */
  push(entry: E): void {
    let group = this.#groups.get(entry.group);
    if (group === undefined) this.#groups.set(entry.group, (group = { waiting: [], flying: [] }));
    if (group.flying.length < MAX_IN_FLIGHT) {
      // Nothing waits when there is room (then nothing is waiting either): alone, at once.
      this.#launch(entry.group, group, [entry]);
      return;
    }
    group.waiting.push(entry);
    if (this.#release(group)) this.#pump(entry.group, group);
  }

  /** Frees the place of a call whose requests are all past their deadline. */
  #release(group: Group<E>): boolean {
    const now = performance.now();
    const given = group.flying.findIndex((call) => call.until <= now);
    if (given === -1) return false;
    (group.flying[given] as InFlight).released = true;
    group.flying.splice(given, 1);
    return true;
  }

  /** Sends the waiting requests, in order, while the group has room. */
  #pump(id: number, group: Group<E>): void {
    while (group.flying.length < MAX_IN_FLIGHT && group.waiting.length > 0) {
      const batch = this.#take(group);
      if (batch.length > 0) this.#launch(id, group, batch);
    }
    // A call given up on may settle after its group was emptied and made anew: leave that one be.
    if (group.flying.length === 0 && this.#groups.get(id) === group) this.#groups.delete(id);
  }

  #launch(id: number, group: Group<E>, batch: readonly E[]): void {
    let until = -Infinity;
    for (const entry of batch) if (entry.deadline > until) until = entry.deadline;
    const call: InFlight = { until, released: false };
    group.flying.push(call);
    void this.send(batch).then(() => {
      if (!call.released) group.flying.splice(group.flying.indexOf(call), 1);
      this.#pump(id, group);
    });
  }

  /** The next batch: up to `maxSize` waiting requests still within their deadline, in order. */
  #take(group: Group<E>): E[] {
    const { waiting } = group;
    const taken = waiting.length <= this.maxSize ? waiting : waiting.splice(0, this.maxSize);
    if (taken === waiting) group.waiting = [];
    const now = performance.now();
    let kept = 0;
    for (const entry of taken) {
      if (entry.deadline <= now) entry.fail(new StoreTimeoutError(entry.timeoutMs));
      else taken[kept++] = entry;
    }
    taken.length = kept;
    return taken;
  }
}
