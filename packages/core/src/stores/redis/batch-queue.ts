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
 * Sends a batch of one or more requests of one group as one call. When the call settles it must
 * call `landed` first, then settle each request (resolved, or rejected on its own or with the
 * call): the call's place is free, and the next batch on its way, before any caller runs on.
 */
export type SendBatch<E> = (batch: readonly E[], landed: () => void) => void;

/** One call on its way: until it settles, or is given up (every request in it past its deadline). */
export interface InFlight {
  /** The latest deadline of its requests. */
  readonly until: number;
  /** Given up: its place was freed before it settled. */
  released: boolean;
}

/** A group's requests waiting, in arrival order, and its calls on their way. */
interface Group<E> {
  /** Waiting requests from `head` on (those before it have left). */
  waiting: E[];
  head: number;
  readonly flying: InFlight[];
  /** Armed while requests wait: at the earliest deadline among them. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Calls one group may have on their way at once while they are not full: two, measured (gcra,
 * 10 000 keys, one ioredis connection, 2 shared cores). With one, Redis idles while this process
 * reads a batch's replies and builds the next: across a network that is what bounds a connection
 * (1 ms added each way, 256 in flight: 30 000 decisions/s with two, 19 000 with one). On loopback
 * the two tie at 256 in flight, and one makes fuller batches at low concurrency (8 in flight: 4.0
 * decisions per call against 2.3); four only halves the batches (33 decisions per call at 256 in
 * flight). Full batches may go past it, up to {@link MAX_FULL_IN_FLIGHT}.
 */
export const MAX_IN_FLIGHT = 2;

/**
 * Calls one group may have on their way at once when the next one is full (`maxSize` requests
 * waiting): sixteen, so that with the default `maxSize` of 64 a thousand requests in flight (an
 * HTTP server under 100 connections × 10 pipelined requests) all go out at once, as they would
 * with a command each, instead of 128 per round trip. Waiting for a call to land adds nothing to
 * a full batch but latency: measured (bench/src/http/redis-path.ts: one hot key, 1000
 * callers, Redis on the other of 2 shared cores, 7 interleaved rounds), Node's CPU per decision
 * falls from 9.2 µs (8.1 to 11.2) to 5.1 (4.7 to 5.6), its GC time from 6.0 to 3.2 µs, and
 * decisions/s rise from 46 000 to 78 000: with two calls the event loop idled half the time
 * waiting for replies, and requests waited long enough to be promoted by the GC. Over HTTP
 * (the bench's admitted path, 5 runs alternating the two): Koa 0.38 → 0.65 × bare, Fastify
 * 0.48 → 0.58, Express 0.72 → 0.78 (within the noise of a shared machine). Sixteen calls
 * of 64 hold Redis about as long as a thousand single commands would; past that, requests wait
 * their turn as before, so what reaches Redis stays bounded.
 */
export const MAX_FULL_IN_FLIGHT = 16;

/**
 * A request with less time than this left is not sent: no reply could come back in time, and
 * its caller, about to decide without the store, would see the store count it too. (Timers fire
 * on whole milliseconds, so one armed for a deadline may run a fraction of one early.)
 */
const SEND_MARGIN_MS = 1;

/**
 * Batching without a delay: a request whose group has fewer than {@link MAX_IN_FLIGHT} calls on
 * their way goes out at once, alone; otherwise it waits, and when a call of its group settles,
 * the requests waiting (up to `maxSize`, in arrival order) go out as one call. So an idle store
 * adds no latency, and a busy one sends fuller calls, about one per round trip. A batch that is
 * full (`maxSize` requests waiting) goes at once while its group has fewer than
 * {@link MAX_FULL_IN_FLIGHT} calls on their way: waiting would not make it fuller.
 *
 * Deadlines: a request is never sent after its deadline (its caller has decided without the
 * store): at the deadline of the earliest one waiting (the one timer, armed only while requests
 * wait), those past theirs are rejected with {@link StoreTimeoutError}, and a call whose every
 * request is past its deadline frees its place, so a call that never returns cannot stall its
 * group: the requests waiting behind it are bounded by the rate they arrive at times their
 * `timeoutMs`.
 */
export class BatchQueue<E extends Queued> {
  /** By group; a group stays once made (at most one per Cluster slot). */
  readonly #groups = new Map<number, Group<E>>();

  constructor(
    private readonly send: SendBatch<E>,
    private readonly maxSize: number,
  ) {}

  #group(id: number): Group<E> {
    let group = this.#groups.get(id);
    if (group === undefined) {
      group = { waiting: [], head: 0, flying: [], timer: undefined };
      this.#groups.set(id, group);
    }
    return group;
  }

  /**
   * A place for one request to go out alone, at once, when its group has room (then nothing of
   * the group is waiting either): the caller sends it and gives the place back with
   * {@link BatchQueue.landed} when the call settles, before its own caller runs on. `undefined`
   * when the group is full: push it.
   */
  room(id: number, deadline: number): InFlight | undefined {
    const group = this.#group(id);
    if (group.flying.length >= MAX_IN_FLIGHT) return undefined;
    const call: InFlight = { until: deadline, released: false };
    group.flying.push(call);
    return call;
  }

  /** The call of a place {@link BatchQueue.room} gave for group `id` has settled. */
  landed(id: number, call: InFlight): void {
    this.#landed(this.#group(id), call);
  }

  /**
   * Sends the request now when its group has room, or queues it for the group's next call.
   *
   * @param now - `performance.now()`, as the caller read it this turn
   */
  push(entry: E, now: number = performance.now()): void {
    const group = this.#group(entry.group);
    if (group.flying.length < MAX_IN_FLIGHT) {
      this.#launch(group, [entry]);
      return;
    }
    group.waiting.push(entry);
    if (this.#full(group) || this.#release(group, now)) this.#pump(group);
    else if (group.timer === undefined && entry.deadline !== Infinity) this.#arm(group, entry.deadline);
  }

  /** Whether a full batch waits and the group has room for it. */
  #full(group: Group<E>): boolean {
    return group.flying.length < MAX_FULL_IN_FLIGHT && group.waiting.length - group.head >= this.maxSize;
  }

  /** Frees the places of calls whose every request is past its deadline; whether any was. */
  #release(group: Group<E>, now: number): boolean {
    let released = false;
    for (let i = group.flying.length - 1; i >= 0; i--) {
      const call = group.flying[i] as InFlight;
      if (call.until > now) continue;
      call.released = true;
      group.flying.splice(i, 1);
      released = true;
    }
    return released;
  }

  #arm(group: Group<E>, deadline: number): void {
    group.timer = setTimeout(() => this.#expire(group), Math.max(0, Math.ceil(deadline - performance.now())));
    group.timer.unref();
  }

  /** At a waiting request's deadline: drops those past theirs, frees stalled calls' places. */
  #expire(group: Group<E>): void {
    group.timer = undefined;
    const now = performance.now() + SEND_MARGIN_MS;
    const late: E[] = [];
    const kept: E[] = [];
    let next = Infinity;
    for (let i = group.head; i < group.waiting.length; i++) {
      const entry = group.waiting[i] as E;
      if (entry.deadline <= now) late.push(entry);
      else {
        kept.push(entry);
        if (entry.deadline < next) next = entry.deadline;
      }
    }
    group.waiting = kept;
    group.head = 0;
    timedOut(late);
    this.#release(group, now);
    this.#pump(group);
    if (group.head < group.waiting.length && group.timer === undefined && next !== Infinity)
      this.#arm(group, next);
  }

  /** Sends the waiting requests, in order, while the group has room (more room for full batches). */
  #pump(group: Group<E>): void {
    while (group.head < group.waiting.length && (group.flying.length < MAX_IN_FLIGHT || this.#full(group))) {
      const batch = this.#take(group);
      if (batch.length > 0) this.#launch(group, batch);
    }
    if (group.head === group.waiting.length && group.timer !== undefined) {
      clearTimeout(group.timer);
      group.timer = undefined;
    }
  }

  #launch(group: Group<E>, batch: readonly E[]): void {
    let until = -Infinity;
    for (const entry of batch) if (entry.deadline > until) until = entry.deadline;
    const call: InFlight = { until, released: false };
    group.flying.push(call);
    this.send(batch, () => this.#landed(group, call));
  }

  #landed(group: Group<E>, call: InFlight): void {
    if (!call.released) group.flying.splice(group.flying.indexOf(call), 1);
    this.#pump(group);
  }

  /** The next batch: up to `maxSize` waiting requests still within their deadline, in order. */
  #take(group: Group<E>): E[] {
    const { waiting, head } = group;
    const end = Math.min(waiting.length, head + this.maxSize);
    const taken = head === 0 && end === waiting.length ? waiting : waiting.slice(head, end);
    if (end === waiting.length) {
      group.waiting = [];
      group.head = 0;
    } else if (end > 4096) {
      // Never emptied under steady load: drop what has left now and then.
      group.waiting = waiting.slice(end);
      group.head = 0;
    } else {
      group.head = end;
    }
    const now = performance.now() + SEND_MARGIN_MS;
    const late: E[] = [];
    let kept = 0;
    for (const entry of taken) {
      if (entry.deadline <= now) late.push(entry);
      else taken[kept++] = entry;
    }
    taken.length = kept;
    timedOut(late);
    return taken;
  }
}

/**
 * Rejects requests that waited past their deadline, one turn later: the caller's own timeout
 * (the limiter's guard), due at the same time, then speaks first, with what it knows (how late
 * a busy event loop was to notice, see `DeadlineList`).
 */
function timedOut(late: readonly Queued[]): void {
  if (late.length === 0) return;
  setImmediate(() => {
    for (const entry of late) entry.fail(new StoreTimeoutError(entry.timeoutMs));
  });
}
