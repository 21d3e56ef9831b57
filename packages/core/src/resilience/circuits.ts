import { CircuitBreaker } from './circuit-breaker';

/** Consecutive failures that open a circuit. */
export const FAILURE_THRESHOLD = 3;
/** How long an open circuit keeps requests away from the store before one probe is let through. */
export const COOLDOWN_MS = 250;
/**
 * How long an open circuit nothing asks for still counts as the store being down: past it, its
 * node is taken for one requests no longer reach (a Cluster master replaced after a failover).
 */
export const UNASKED_MS = 2000;
/** Most nodes with a circuit of their own; past it, circuits without failures are dropped first. */
const MAX_NODES = 1024;

/** What the store being down, and back, is reported to. */
export interface CircuitsOptions {
  /** The store's `nodeOf`, if it has one: one circuit per node it names. */
  readonly nodeOf: ((key: string) => string | undefined) | undefined;
  /** Time for the circuits (see {@link CircuitBreaker}). */
  readonly now: () => number;
  /** The guard's `timeoutMs`: a probe that never reported back lapses after twice that (and a cooldown). */
  readonly timeoutMs: number;
  /** Told `false` when a circuit opens, `true` once none is open that requests still ask for. */
  readonly up?: ((up: boolean) => void) | undefined;
}

/** The end of an outage, as `storeRecovered` tells it. */
export type Outage = NonNullable<ReturnType<CircuitBreaker['succeeded']>>;

/**
 * A remote store's circuit breakers: one per node the store names for a key (`Store.nodeOf`: a
 * Redis Cluster's masters), else one for the whole store (a single Redis, a key whose node is not
 * known yet). One master gone then fails only the keys it holds, and only its keys wait out a
 * timeout each until its circuit opens; the other masters' keys are still decided by Redis.
 * A whole Cluster gone costs three failed calls per master before each circuit opens.
 *
 * The store is reported down (`up(false)`) when any circuit opens, and up again once no circuit
 * is open that requests asked for in the last {@link UNASKED_MS}: a master replaced by a failover
 * keeps its open circuit, which nothing reaches any more, and must not keep the store down.
 */
export class Circuits {
  readonly #whole: CircuitBreaker;
  readonly #byNode = new Map<string, CircuitBreaker>();
  readonly #nodeOf: ((key: string) => string | undefined) | undefined;
  readonly #now: () => number;
  readonly #probeLapseMs: number;
  readonly #up: ((up: boolean) => void) | undefined;
  /** Whether `up(false)` was the last told. */
  #down = false;

  constructor({ nodeOf, now, timeoutMs, up }: CircuitsOptions) {
    this.#nodeOf = nodeOf;
    this.#now = now;
    this.#probeLapseMs = 2 * timeoutMs + COOLDOWN_MS;
    this.#up = up;
    this.#whole = this.#circuit();
  }

  #circuit(): CircuitBreaker {
    return new CircuitBreaker(FAILURE_THRESHOLD, COOLDOWN_MS, this.#now, this.#probeLapseMs);
  }

  /** The circuit of the node holding `key` (the whole store's when the store names none). */
  of(key: string): CircuitBreaker {
    const nodeOf = this.#nodeOf;
    if (nodeOf === undefined) return this.#whole;
    let node: unknown;
    try {
      node = nodeOf(key);
    } catch {
      return this.#whole; // a custom store's `nodeOf` that throws: one circuit, as without it
    }
    if (typeof node !== 'string') return this.#whole;
    let circuit = this.#byNode.get(node);
    if (circuit === undefined) {
      if (this.#byNode.size >= MAX_NODES) this.#forgetIdle();
      if (this.#byNode.size >= MAX_NODES) return this.#whole;
      this.#byNode.set(node, (circuit = this.#circuit()));
    }
    return circuit;
  }

  /** Whether a call for `key` may go to the store (see {@link CircuitBreaker.allow}). */
  allow(key: string): boolean {
    return this.of(key).allow();
  }

  /**
   * The store answered for `key` (a verdict, or an error about the key's data): returns the
   * outage of its node that this ends, if any.
   */
  answered(key: string): Outage | undefined {
    const outage = this.of(key).succeeded();
    if (this.#down && !this.#anyDown()) {
      this.#down = false;
      this.#up?.(true);
    }
    return outage;
  }

  /** The store itself failed a call for `key`. */
  failed(key: string): void {
    const circuit = this.of(key);
    circuit.failed();
    if (circuit.retryInMs() > 0 && !this.#down) {
      this.#down = true;
      this.#up?.(false);
    }
  }

  #anyDown(): boolean {
    if (this.#whole.openAndAsked(UNASKED_MS)) return true;
    for (const circuit of this.#byNode.values()) if (circuit.openAndAsked(UNASKED_MS)) return true;
    return false;
  }

  #forgetIdle(): void {
    for (const [node, circuit] of this.#byNode) if (circuit.idle()) this.#byNode.delete(node);
  }
}
