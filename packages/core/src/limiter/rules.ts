import { SluiceConfigError } from '../policy/config-error';
import type { RateInput } from '../policy/rate';
import { resolvePolicy, type PolicyOptions } from '../policy/resolve-policy';
import type { DecisionLimit, Policy, Verdict } from '../types';

/**
 * One limit of a limiter with several, with its own rate and algorithm: `{ rate, algorithm?,
 * burst?, nodelay?, delay?, queue? }`, each as the limiter option of the same name.
 */
export type RuleOptions = PolicyOptions;

/** The options that say what a limiter limits: one `rate` or a list of them, or `rules`. */
export interface RulesOptions extends Omit<PolicyOptions, 'rate'> {
  rate?: RateInput | readonly RateInput[];
  rules?: readonly RuleOptions[];
}

/** Most rules one limiter may have: each costs a key and a step per decision. */
export const MAX_RULES = 16;

const RULE_FIELDS = ['rate', 'algorithm', 'burst', 'nodelay', 'delay', 'queue'] as const;
const SHARED = ['algorithm', 'burst', 'nodelay', 'delay', 'queue'] as const;

/**
 * The limiter's policies, in order: one for a single `rate`; one per entry of a `rate` list
 * (each parsed like `rate`, sharing `algorithm`, `burst`, `nodelay` and `delay`, each with its
 * own default burst); one per entry of `rules`.
 *
 * @throws {@link SluiceConfigError} naming the first invalid option, e.g. `rate[1]` or `rules[0].burst`
 */
export function resolveRules(options: RulesOptions): readonly Policy[] {
  const { rate, rules } = options;
  if (rules !== undefined) {
    if (rate !== undefined) {
      throw new SluiceConfigError(
        'rules',
        rules,
        'cannot be combined with rate: give every limit in rules, or a list of rates in rate',
      );
    }
    for (const name of SHARED) {
      if (options[name] !== undefined) {
        throw new SluiceConfigError(
          name,
          options[name],
          'cannot be combined with rules: set it in each rule',
        );
      }
    }
    return listOf('rules', rules).map((rule, i) => resolveRule(rule, i));
  }
  if (!Array.isArray(rate)) return [resolvePolicy(options as PolicyOptions)];
  // Every option but the rate is shared: resolvePolicy reads the ones it knows.
  return listOf('rate', rate as readonly RateInput[]).map((entry, i) =>
    renaming({ rate: `rate[${i}]` }, () => resolvePolicy({ ...options, rate: entry })),
  );
}

function listOf<T>(option: string, list: readonly T[]): readonly T[] {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_RULES) {
    throw new SluiceConfigError(option, list, `expected a list of 1 to ${MAX_RULES} limits`);
  }
  return list;
}

function resolveRule(rule: unknown, i: number): Policy {
  const at = `rules[${i}]`;
  if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
    throw new SluiceConfigError(at, rule, 'expected { rate, algorithm?, burst?, nodelay?, delay?, queue? }');
  }
  for (const name of Object.keys(rule)) {
    if (!(RULE_FIELDS as readonly string[]).includes(name)) {
      throw new SluiceConfigError(
        `${at}.${name}`,
        (rule as Record<string, unknown>)[name],
        `unknown rule field; accepted: ${RULE_FIELDS.join(', ')}`,
        'SLUICE_UNKNOWN_OPTION',
      );
    }
  }
  const names = Object.fromEntries(RULE_FIELDS.map((name) => [name, `${at}.${name}`]));
  return renaming(names, () => resolvePolicy(rule as RuleOptions));
}

/** Runs `resolve`, giving a {@link SluiceConfigError} about option `x` the name `names[x]`. */
function renaming<T>(names: Readonly<Record<string, string>>, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    const renamed = error instanceof SluiceConfigError ? names[error.option] : undefined;
    throw renamed === undefined ? error : (error as SluiceConfigError).renamed(renamed);
  }
}

/**
 * Which rule a decision with several rules reports: on a rejection the rejecting rule — one
 * whose cost can never pass first (waiting would not help), else the longest retry; when all
 * admit, the most restrictive (fewest remaining, then longest reset). Its `delayMs` becomes the
 * longest delay any rule asks for, since the request must wait for all of them.
 */
export function decidingRule(verdicts: readonly Verdict[]): { index: number; delayMs: number } {
  let index = 0;
  let delayMs = 0;
  for (let i = 0; i < verdicts.length; i++) {
    const v = verdicts[i] as Verdict;
    const best = verdicts[index] as Verdict;
    delayMs = Math.max(delayMs, v.delayMs);
    if (i > 0 && outranks(v, best)) index = i;
  }
  return { index, delayMs: (verdicts[index] as Verdict).allowed ? delayMs : 0 };
}

function outranks(a: Verdict, b: Verdict): boolean {
  if (a.allowed !== b.allowed) return !a.allowed;
  if (!a.allowed) {
    const aFinal = a.reason === 'cost-exceeds-capacity';
    const bFinal = b.reason === 'cost-exceeds-capacity';
    if (aFinal !== bFinal) return aFinal;
    return a.retryAfterMs > b.retryAfterMs;
  }
  return a.remaining < b.remaining || (a.remaining === b.remaining && a.resetMs > b.resetMs);
}

/** Every rule's numbers, for `Decision.limits`. */
export function limitsOf(
  policies: readonly Policy[],
  verdicts: readonly Verdict[],
): readonly DecisionLimit[] {
  return policies.map((policy, i) => {
    const { limit, remaining, resetMs } = verdicts[i] as Verdict;
    return { policy, limit, remaining, resetMs };
  });
}
