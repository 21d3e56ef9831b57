import { MemoryStore, type RulesRequest, type Store, type StoreRequest, type Verdict } from '../../src';

/** How the flaky store answers: normally, by throwing, never, or after a delay. */
export type FlakyMode = 'ok' | 'throw' | 'hang' | { slowMs: number };

/**
 * A remote-looking store (no consumeSync) over a MemoryStore whose failures a test switches on
 * and off. A fault injector for the limiter's own guard, not a stand-in for Redis: the Redis
 * failure tests kill real redis-server processes.
 */
export class FlakyStore implements Store {
  mode: FlakyMode = 'ok';
  calls = 0;
  readonly #inner = new MemoryStore();

  async consume(request: StoreRequest): Promise<Verdict> {
    await this.#fault();
    return this.#inner.consumeSync(request);
  }

  async consumeRules(request: RulesRequest): Promise<Verdict[]> {
    await this.#fault();
    return this.#inner.consumeRulesSync(request);
  }

  reset(request: Omit<StoreRequest, 'cost'>): Promise<void> {
    return this.#inner.reset(request);
  }

  resetRules(request: Omit<RulesRequest, 'cost'>): Promise<void> {
    return this.#inner.resetRules(request);
  }

  async #fault(): Promise<void> {
    this.calls++;
    const mode = this.mode;
    if (mode === 'throw') throw new Error('ECONNREFUSED 127.0.0.1:1');
    if (mode === 'hang') await new Promise<never>(() => undefined);
    if (typeof mode === 'object') await new Promise((resolve) => setTimeout(resolve, mode.slowMs));
  }
}

/** `leasing`'s `degrade` where the remote never fails: reaching it fails the test. */
export const noOutage = (): Promise<never> =>
  Promise.reject(new Error('degrade called, yet the store never failed'));
