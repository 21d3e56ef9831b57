import { SluiceConfigError } from '../policy/config-error';
import { checkMagnitudes } from '../policy/resolve-policy';
import type { Policy } from '../types';
import { MemoryStore } from '../stores/memory-store';
import type { Store } from '../stores/store';

/**
 * What to do when the store fails or is slower than `timeoutMs`:
 * - `'fail-open'`: admit the request (the decision says `degraded: 'fail-open'`);
 * - `'fail-closed'`: reject it with `reason: 'store-unavailable'` (adapters reply 503 + Retry-After);
 * - `{ insurance, instances? }`: decide with a second store, typically a `MemoryStore`, so limits
 *   still hold on each instance. The insurance store knows nothing of what Redis counted: within
 *   one window, N instances admit up to N + 1 times the limit (Redis's, then each one's).
 *   `instances` divides the insurance limit by the number of app instances expected to share the
 *   load, which bounds them at about twice the limit.
 */
export type OnStoreError = 'fail-open' | 'fail-closed' | InsuranceOption;

/** `onStoreError` with an insurance store. */
export interface InsuranceOption {
  /** The store that decides while the main store is away. */
  insurance: Store;
  /**
   * Divide the limit by this many instances while insured: a whole number from 1 to 10 000.
   * Within one window the instances then admit up to about twice the limit: what Redis admitted
   * before, and the divided limit on each. @defaultValue 1
   */
  instances?: number;
}

/** `onStoreError`, validated. */
export type ResolvedOnStoreError =
  | { readonly mode: 'fail-open' }
  | { readonly mode: 'fail-closed' }
  | { readonly mode: 'insurance'; readonly store: Store; readonly instances: number };

const ACCEPTED = `expected 'fail-open', 'fail-closed' or { insurance: new MemoryStore(), instances?: number }`;

/**
 * Validates `onStoreError`. The default is an in-process `MemoryStore` as insurance: an outage
 * of the shared store never removes all protection (each instance keeps limiting on its own).
 */
export function resolveOnStoreError(value: unknown): ResolvedOnStoreError {
  if (value === undefined) return { mode: 'insurance', store: new MemoryStore(), instances: 1 };
  if (value === 'fail-open' || value === 'fail-closed') return { mode: value };
  if (typeof value !== 'object' || value === null)
    throw new SluiceConfigError('onStoreError', value, ACCEPTED);
  for (const name of Object.keys(value)) {
    if (name !== 'insurance' && name !== 'instances') {
      throw new SluiceConfigError(
        `onStoreError.${name}`,
        (value as Record<string, unknown>)[name],
        `unknown field; ${ACCEPTED}`,
      );
    }
  }
  const { insurance, instances = 1 } = value as Partial<InsuranceOption>;
  if (typeof insurance !== 'object' || insurance === null || typeof insurance.consume !== 'function') {
    throw new SluiceConfigError(
      'onStoreError.insurance',
      insurance,
      'expected a store such as new MemoryStore()',
    );
  }
  if (
    typeof instances !== 'number' ||
    !Number.isInteger(instances) ||
    instances < 1 ||
    instances > MAX_INSTANCES
  ) {
    throw new SluiceConfigError(
      'onStoreError.instances',
      instances,
      `must be a whole number from 1 to ${MAX_INSTANCES}`,
    );
  }
  return { mode: 'insurance', store: insurance, instances };
}

/** Most app instances `onStoreError.instances` divides a limit among. */
export const MAX_INSTANCES = 10_000;

/**
 * The policy each of `instances` app instances enforces on its own while insured, or `undefined`
 * when dividing it would overflow what the algorithms compute exactly (a window of years times
 * thousands of instances).
 */
export function dividedPolicy(policy: Policy, instances: number): Policy | undefined {
  let divided: Policy;
  if (
    policy.algorithm === 'gcra' ||
    policy.algorithm === 'token-bucket' ||
    policy.algorithm === 'leaky-bucket'
  ) {
    // Same window, 1/n of the rate: n times the window for the same limit, exactly.
    const burst = Math.max(0, Math.floor((policy.burst + 1) / instances) - 1);
    divided = {
      ...policy,
      windowMs: policy.windowMs * instances,
      burst,
      delay: Math.min(policy.delay, burst),
    };
  } else divided = { ...policy, limit: Math.max(1, Math.floor(policy.limit / instances)) };
  try {
    checkMagnitudes(divided);
  } catch {
    return undefined;
  }
  return divided;
}

/**
 * Checks that a limiter's own policies can be divided among `onStoreError.instances`.
 * @throws {@link SluiceConfigError} naming `onStoreError.instances` when one would overflow
 */
export function checkDivisible(onStoreError: ResolvedOnStoreError, policies: readonly Policy[]): void {
  if (onStoreError.mode !== 'insurance' || onStoreError.instances === 1) return;
  for (const policy of policies) {
    if (dividedPolicy(policy, onStoreError.instances) === undefined) {
      throw new SluiceConfigError(
        'onStoreError.instances',
        onStoreError.instances,
        `too large for the rate divided among them (${policy.source}: its window times the instances overflows 2^53 ms); give fewer instances`,
      );
    }
  }
}
