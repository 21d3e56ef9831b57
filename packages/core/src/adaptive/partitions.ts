import { OTHER_PARTITION } from './resolve-adaptive-options';

/** One partition's bookkeeping. */
export interface Partition {
  readonly name: string;
  /** Its guaranteed fraction of the limit (0 for `'*'` when the shares sum to 1). */
  readonly share: number;
  inFlight: number;
  queued: number;
  shed: number;
  /**
   * Until when (clock ms) it counts as wanting its share: set when one of its requests could not
   * be admitted at once. Meanwhile the others borrow none of its unused share.
   */
  wantsUntil: number;
}

/**
 * How long a partition that was refused (or had to wait) keeps its unused share reserved: long
 * enough for the borrowers' permits to come back to it, short enough that capacity it no longer
 * wants is lent again soon.
 */
export const WANTS_MS = 1000;

/**
 * The room kept free for a partition in use, as a share of its requests in flight (within its
 * unused guarantee), so that its own swings do not wait for a refusal to reserve its share:
 * without it, a flood borrowing everything left checkout (at half the capacity, share 0.7)
 * refused each time its reservation lapsed, 3 % of its requests.
 */
const IN_USE_ROOM = 0.5;

/**
 * The partitions of one limiter and the count in flight over all of them, kept synchronously: an
 * admission checks and counts in one call, so no two requests can both take the last permit
 * (the race of concurrency-limits issue #234, where the check and the count were apart).
 */
export class Partitions {
  readonly #byName = new Map<string, Partition>();
  readonly #all: Partition[] = [];
  readonly #other: Partition;
  /** Requests in flight, all partitions. */
  inFlight = 0;

  constructor(shares: ReadonlyMap<string, number>) {
    for (const [name, share] of shares) {
      const partition: Partition = { name, share, inFlight: 0, queued: 0, shed: 0, wantsUntil: -Infinity };
      this.#byName.set(name, partition);
      this.#all.push(partition);
    }
    this.#other = this.#byName.get(OTHER_PARTITION) as Partition;
  }

  /** The partition of `name`: `'*'` for a name not in `shares`, or none. */
  of(name: string | undefined): Partition {
    return (name === undefined ? undefined : this.#byName.get(name)) ?? this.#other;
  }

  all(): readonly Partition[] {
    return this.#all;
  }

  /** Its guaranteed permits at `limit`: the share, floored, at least 1 for a partition with a share. */
  guaranteed(partition: Partition, limit: number): number {
    return partition.share === 0 ? 0 : Math.max(1, Math.floor(partition.share * limit));
  }

  /**
   * Whether one more request of `partition` may start: never past `limit` in total; within its
   * guaranteed part always; beyond it (borrowing) only while every other partition keeps free
   * the unused guarantee it wants (all of it for one that wants its share; for one in use, room
   * to grow by half of what it has in flight).
   */
  mayAdmit(partition: Partition, limit: number, now: number): boolean {
    if (this.inFlight >= limit) return false;
    if (partition.inFlight < this.guaranteed(partition, limit)) return true;
    let reserved = 0;
    for (const other of this.#all) {
      if (other === partition || (other.inFlight === 0 && other.wantsUntil <= now)) continue;
      const unused = this.guaranteed(other, limit) - other.inFlight;
      if (unused <= 0) continue;
      reserved += other.wantsUntil > now ? unused : Math.min(unused, Math.ceil(other.inFlight * IN_USE_ROOM));
    }
    return this.inFlight + 1 + reserved <= limit;
  }

  take(partition: Partition): void {
    partition.inFlight++;
    this.inFlight++;
  }

  give(partition: Partition): void {
    partition.inFlight--;
    this.inFlight--;
  }
}
