import type { Partition } from './partitions';

/** A request waiting for a permit. */
export interface Waiter {
  readonly partition: Partition;
  /** Clock ms when it started waiting. */
  readonly since: number;
  /** Settles it: with a permit (`true`) or refused; called once, after it left the queue. */
  readonly settle: (admitted: boolean, reason?: 'overloaded' | 'queue-timeout' | 'cancelled') => void;
}

/**
 * The short queue above the limit, oldest first. Overload is CoDel's standing queue: its oldest
 * waiter has waited longer than `targetMs`; it then lasts at least `20 × targetMs` (CoDel's 5 ms
 * target in a 100 ms interval), so that arrivals are refused at once for a while rather than the
 * queue filling again at once.
 */
export class Waiters {
  readonly #list: Waiter[] = [];
  #overloadedUntil = -Infinity;

  constructor(readonly targetMs: number) {}

  get size(): number {
    return this.#list.length;
  }

  /** Whether the queue is overloaded now (see the class). */
  overloaded(now: number): boolean {
    const oldest = this.#list[0];
    if (oldest !== undefined && now - oldest.since > this.targetMs)
      this.#overloadedUntil = now + 20 * this.targetMs;
    return now < this.#overloadedUntil;
  }

  /**
   * An arrival was refused for overload: the overload lasts another `20 × targetMs` from now.
   * Under sustained overload the queue then never forms again, and every refusal is immediate;
   * it ends once arrivals have found free permits for that long.
   */
  prolong(now: number): void {
    this.#overloadedUntil = now + 20 * this.targetMs;
  }

  push(waiter: Waiter): void {
    this.#list.push(waiter);
    waiter.partition.queued++;
  }

  /** Takes `waiter` out, if still there; `false` otherwise. */
  remove(waiter: Waiter): boolean {
    const index = this.#list.indexOf(waiter);
    if (index === -1) return false;
    this.#removeAt(index);
    return true;
  }

  /**
   * The first waiter `admissible` accepts, taken out: newest first when `lifo`, else oldest first.
   */
  take(lifo: boolean, admissible: (waiter: Waiter) => boolean): Waiter | undefined {
    const list = this.#list;
    if (lifo) {
      for (let i = list.length - 1; i >= 0; i--) if (admissible(list[i] as Waiter)) return this.#removeAt(i);
    } else {
      for (let i = 0; i < list.length; i++) if (admissible(list[i] as Waiter)) return this.#removeAt(i);
    }
    return undefined;
  }

  /** Takes out the waiters that started before `before` (the oldest, at the front). */
  takeOlder(before: number): Waiter[] {
    const list = this.#list;
    let count = 0;
    while (count < list.length && (list[count] as Waiter).since < before) count++;
    if (count === 0) return [];
    const old = list.splice(0, count);
    for (const waiter of old) waiter.partition.queued--;
    return old;
  }

  /** Takes out every waiter. */
  takeAll(): Waiter[] {
    return this.takeOlder(Infinity);
  }

  #removeAt(index: number): Waiter {
    const [waiter] = this.#list.splice(index, 1) as [Waiter];
    waiter.partition.queued--;
    return waiter;
  }
}
