import { runStep, type Step } from '../algorithms';
import {
  blockedVerdict,
  nextBlock,
  refusalOfBlock,
  startsBlock,
  type BlockRecord,
} from '../algorithms/block';
import { giveBackOf } from '../algorithms/give-back';
import { Frame } from '../algorithms/step';
import { SluiceConfigError } from '../policy/config-error';
import { capacityOf } from '../policy/resolve-policy';
import { checkOptionNames, isPlainObject } from '../policy/option-checks';
import type { AlgorithmName, BlockPolicy, Policy, Receipt, Verdict } from '../types';
import { heldKey } from './key-digest';
import { BLOCKS, readBlock, writeBlock } from './memory/blocks';
import { giveBackTaken, prepareJoint } from './memory/joint-steps';
import { SlotTable } from './memory/slot-table';
import { codecOf, decideOf, namespaceOf, type Decide } from './memory/state-columns';
import type { JointPart, PreparedJoint, RulesRequest, Store, StoreRequest } from './store';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys kept at once; past it the keys used least recently are forgotten (as nginx evicts
   * its `limit_req_zone`), so a flood of distinct keys cannot grow memory without bound. A
   * forgotten key starts fresh, so size it well above the number of keys active within one window.
   * @defaultValue 100000
   */
  maxKeys?: number;
}

const OPTIONS = new Set(['maxKeys']);

/**
 * The in-process store, and the default. O(1) per decision for every algorithm but
 * `sliding-log` (O(limit)); no timer and no object per key: state lives in typed-array columns
 * indexed by one `Map` from key to slot. At most `maxKeys` keys are held; when full, a key seen
 * only once or not used lately makes room (CLOCK eviction, see `SlotTable`), so a flood of
 * distinct keys cannot grow memory and cannot push out the keys in use. An idle key's state is
 * ignored once expired, and its slot is reused.
 *
 * Memory: about 54 bytes per key plus the key text (`pnpm bench`, section memory: 1 000 000
 * keys, `--expose-gc`; a plain `Map` of `{ tokens, last }` objects takes about 85). Key text is
 * bounded: a key over 42 characters is held by its SHA-256 (43 characters), a shorter one as its
 * own copy, so a key's text costs at most 64 bytes (104 beyond Latin-1). The default store
 * (`maxKeys: 100 000`) stays under 16 MB of heap for keys such as addresses and ids or longer
 * than 42 characters, and under 20 MB whatever the keys. Verdicts never carry the held text:
 * decisions report the key as given.
 *
 * @example
 * ```ts
 * const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 50_000 }) });
 * ```
 */
export class MemoryStore implements Store {
  /** The cap on keys. */
  readonly maxKeys: number;
  readonly #table: SlotTable;
  /**
   * namespace → prefix → scope → key → slot, where the namespace is the algorithm (one rule) or
   * the algorithm and the rule's index (several rules), and the scope is `''` or an override's:
   * no string is built per decision.
   */
  readonly #indexes = new Map<string, Map<string, Map<string, Map<string, number>>>>();
  // The policy and index used last, and the policy's decide function: one limiter calling in a
  // row skips the lookups.
  #lastPolicy: Policy | undefined;
  #lastPrefix: string | undefined;
  #lastScope: string | undefined;
  #lastIndex: Map<string, number> | undefined;
  #lastDecide: Decide | undefined;
  /** The registers of every decision: decisions are synchronous, so one serves them all. */
  readonly #frame = new Frame();

  constructor(options: MemoryStoreOptions = {}) {
    if (!isPlainObject(options))
      throw new SluiceConfigError(
        'options',
        options,
        'expected MemoryStore options: an object such as { maxKeys: 100000 }',
      );
    checkOptionNames(options, OPTIONS, 'MemoryStore option');
    const maxKeys = options.maxKeys ?? 100_000;
    if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > 2 ** 30) {
      throw new SluiceConfigError('maxKeys', maxKeys, 'must be a whole number from 1 to 2^30');
    }
    this.maxKeys = maxKeys;
    this.#table = new SlotTable(maxKeys);
  }

  /** Number of keys currently held (expired ones included until their slot is reused). */
  get size(): number {
    return this.#table.size;
  }

  /**
   * Keys evicted to make room for others while their state was still live (each then started
   * afresh, its count forgotten): 0 while `maxKeys` is enough. Expired keys' slots, reused first,
   * are not counted.
   */
  get forgotten(): number {
    return this.#table.forgotten;
  }

  consume(request: StoreRequest): Promise<Verdict> {
    return Promise.resolve(this.consumeSync(request));
  }

  /**
   * The synchronous core of {@link MemoryStore.consume}. A request with a `block` is decided
   * around the same step (see {@link MemoryStore.#blocking}); without, one property check more.
   */
  consumeSync(request: StoreRequest): Verdict {
    if (request.block !== undefined) return this.#consumeBlocking(request, request.block);
    const { prefix, key, policy, cost, nowMs, scope = '' } = request;
    const now = nowMs ?? Date.now();
    if (policy !== this.#lastPolicy || prefix !== this.#lastPrefix || scope !== this.#lastScope) {
      this.#lastIndex = this.#lookup(namespaceOf(policy), prefix, scope);
      this.#lastDecide = decideOf(policy);
      this.#lastPolicy = policy;
      this.#lastPrefix = prefix;
      this.#lastScope = scope;
    }
    const decide = this.#lastDecide as Decide;
    return decide(
      this.#table,
      this.#lastIndex as Map<string, number>,
      heldKey(key),
      policy,
      now,
      cost,
      this.#frame,
    );
  }

  /** {@link MemoryStore.consumeSync} of a limiter with `block`, around the same step. */
  #consumeBlocking(request: StoreRequest, block: BlockPolicy): Verdict {
    const now = request.nowMs ?? Date.now();
    return this.#blocking(request, block, now, [request.policy], () => [
      this.consumeSync({ ...request, nowMs: now, block: undefined }),
    ])[0] as Verdict;
  }

  /**
   * A decision of a limiter with `block`: refused while the key is blocked, else `decide`d, and
   * a refusal as `'limited'` blocks the key (longer each time within `maxDurationMs`, see
   * `nextBlock`); one synchronous step, as the decision itself.
   */
  #blocking(
    { prefix, key, cost }: Pick<StoreRequest, 'prefix' | 'key' | 'cost'>,
    block: BlockPolicy,
    now: number,
    policies: readonly Policy[],
    decide: () => Verdict[],
  ): Verdict[] {
    const index = this.#lookup(BLOCKS, prefix, '');
    const held = heldKey(key);
    const live = readBlock(this.#table, index, held, now, block);
    if (live !== undefined && now < live.until) {
      return policies.map((policy) => blockedVerdict(capacityOf(policy), live, now));
    }
    const verdicts = decide();
    if (!verdicts.some((v) => startsBlock(v, cost))) return verdicts;
    const next: BlockRecord = nextBlock(live, block, now);
    writeBlock(this.#table, index, held, now, next, block);
    return verdicts.map((v) => refusalOfBlock(v, next, now));
  }

  consumeRules(request: RulesRequest): Promise<Verdict[]> {
    return Promise.resolve(this.consumeRulesSync(request));
  }

  /**
   * Every rule's step on its own state, then — only when every rule admits — every new state
   * written: all or nothing, in one synchronous step (nothing can run in between). When a rule
   * rejects, the rules that would have admitted report their state as it stays (a peek).
   */
  consumeRulesSync(request: RulesRequest): Verdict[] {
    const { block } = request;
    if (block !== undefined) {
      const now = request.nowMs ?? Date.now();
      return this.#blocking(request, block, now, request.policies, () =>
        this.consumeRulesSync({ ...request, nowMs: now, block: undefined }),
      );
    }
    const { prefix, key: given, policies, cost, nowMs, scope = '' } = request;
    const now = nowMs ?? Date.now();
    const key = heldKey(given);
    const table = this.#table;
    const indexes: Array<Map<string, number>> = [];
    const states: unknown[] = [];
    const steps: Array<Step<unknown>> = [];
    let admitted = true;
    policies.forEach((policy, i) => {
      const index = this.#lookup(ruleNamespace(policy.algorithm, i), prefix, scope);
      const slot = table.find(index, key, now);
      const state = slot === undefined ? undefined : codecOf(policy).decode(table.columns, slot);
      const step = runStep(state, policy, now, cost);
      if (!step.verdict.allowed) admitted = false;
      indexes.push(index);
      states.push(state);
      steps.push(step);
    });
    if (!admitted) {
      return steps.map((step, i) =>
        step.verdict.allowed && cost > 0
          ? runStep(states[i], policies[i] as Policy, now, 0).verdict
          : step.verdict,
      );
    }
    steps.forEach((step, i) => {
      if (step.state === undefined) return;
      const codec = codecOf(policies[i] as Policy);
      codec.encode(
        step.state,
        table.columns,
        table.claim(indexes[i] as Map<string, number>, key, now, now + step.ttlMs),
      );
    });
    return steps.map((step) => step.verdict);
  }

  /**
   * Gives back `cost` units of an admission that will not be served (see `Store.giveBack`):
   * nothing for the algorithms that never delay.
   */
  giveBack({ prefix, key, policy, cost, nowMs, scope = '' }: StoreRequest): Promise<void> {
    this.#giveBack(
      this.#lookup(namespaceOf(policy), prefix, scope),
      heldKey(key),
      policy,
      nowMs ?? Date.now(),
      cost,
    );
    return Promise.resolve();
  }

  /** {@link MemoryStore.giveBack} for every rule of a limiter with several. */
  giveBackRules({ prefix, key: given, policies, cost, nowMs, scope = '' }: RulesRequest): Promise<void> {
    const now = nowMs ?? Date.now();
    const key = heldKey(given);
    policies.forEach((policy, i) =>
      this.#giveBack(this.#lookup(ruleNamespace(policy.algorithm, i), prefix, scope), key, policy, now, cost),
    );
    return Promise.resolve();
  }

  #giveBack(index: Map<string, number>, key: string, policy: Policy, now: number, cost: number): void {
    const back = giveBackOf(policy);
    const table = this.#table;
    const slot = back === undefined ? undefined : table.find(index, key, now);
    if (slot === undefined) return;
    const codec = codecOf(policy);
    const step = (back as NonNullable<typeof back>)(codec.decode(table.columns, slot), policy, now, cost);
    if (step === 'delete') table.release(index, key);
    else if (step !== undefined)
      codec.encode(step.state, table.columns, table.claim(index, key, now, now + step.ttlMs));
  }

  /** Several limiters' parts of one request, checked without writing (see `Store.prepareAllSync`). */
  prepareAllSync(parts: readonly JointPart[]): PreparedJoint {
    return prepareJoint(this.#table, parts, this.#partIndex, this.#blockIndex);
  }

  /** Gives back exactly what a part took, with its receipts (see `Store.giveBackTaken`). */
  giveBackTaken(part: RulesRequest, receipts: readonly Receipt[]): Promise<void> {
    giveBackTaken(this.#table, part, receipts, this.#partIndex);
    return Promise.resolve();
  }

  /** A part's rule keeps its state where `consume` (one rule) or `consumeRules` (several) keeps it. */
  readonly #partIndex = (part: RulesRequest, rule: number): Map<string, number> => {
    const policy = part.policies[rule] as Policy;
    const namespace = part.policies.length > 1 ? ruleNamespace(policy.algorithm, rule) : namespaceOf(policy);
    return this.#lookup(namespace, part.prefix, part.scope ?? '');
  };

  /** Where a part's block record is kept: one per prefix and key. */
  readonly #blockIndex = (part: RulesRequest): Map<string, number> => this.#lookup(BLOCKS, part.prefix, '');

  /** Forgets the key's state, and its block (a reset lifts it). */
  reset({ prefix, key, policy, scope }: Omit<StoreRequest, 'cost'>): Promise<void> {
    const held = heldKey(key);
    this.#table.release(this.#lookup(namespaceOf(policy), prefix, scope ?? ''), held);
    this.#table.release(this.#lookup(BLOCKS, prefix, ''), held);
    return Promise.resolve();
  }

  /** Forgets every rule's state for the key, and its block. */
  resetRules({ prefix, key: given, policies, scope = '' }: Omit<RulesRequest, 'cost'>): Promise<void> {
    const key = heldKey(given);
    policies.forEach((policy, i) =>
      this.#table.release(this.#lookup(ruleNamespace(policy.algorithm, i), prefix, scope), key),
    );
    this.#table.release(this.#lookup(BLOCKS, prefix, ''), key);
    return Promise.resolve();
  }

  #lookup(namespace: string, prefix: string, scope: string): Map<string, number> {
    let byPrefix = this.#indexes.get(namespace);
    if (byPrefix === undefined) this.#indexes.set(namespace, (byPrefix = new Map()));
    let byScope = byPrefix.get(prefix);
    if (byScope === undefined) byPrefix.set(prefix, (byScope = new Map()));
    let index = byScope.get(scope);
    if (index === undefined) byScope.set(scope, (index = new Map()));
    return index;
  }
}

/** `'<algorithm>:<index>'`, built once per (algorithm, index): no string per decision. */
const RULE_NAMESPACES = new Map<AlgorithmName, string[]>();

/** The state namespace of rule `index` of a limiter with several rules; never an algorithm's own name. */
function ruleNamespace(algorithm: AlgorithmName, index: number): string {
  let names = RULE_NAMESPACES.get(algorithm);
  if (names === undefined) RULE_NAMESPACES.set(algorithm, (names = []));
  return (names[index] ??= `${algorithm}:${index}`);
}
