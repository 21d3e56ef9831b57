import { createHash } from 'node:crypto';
import type { StoreRequest } from '../store';
import { ALGORITHMS, type AlgorithmName, type RejectReason, type Verdict } from '../../types';
import { LUA_SCRIPTS } from './scripts';

/**
 * The name each script is registered under with ioredis `defineCommand`. It carries a digest of
 * the source, so two versions of sluice sharing one client never overwrite each other's script.
 */
export const COMMAND_NAMES: Readonly<Record<AlgorithmName, string>> = Object.fromEntries(
  ALGORITHMS.map((algorithm) => {
    const digest = createHash('sha1').update(LUA_SCRIPTS[algorithm]).digest('hex').slice(0, 12);
    return [algorithm, `sluice:${algorithm}:${digest}`];
  }),
) as Record<AlgorithmName, string>;

/**
 * The script arguments (ARGV) for one request, in the order the Lua prelude reads them. An
 * absent `nowMs` travels as `''`, which makes the script read the server's `TIME`.
 */
export function scriptArgs({ policy, cost, nowMs }: Omit<StoreRequest, 'prefix' | 'key'>): string[] {
  return [
    nowMs === undefined ? '' : String(nowMs),
    String(cost),
    String(policy.limit),
    String(policy.windowMs),
    String(policy.burst),
    policy.nodelay ? '1' : '0',
    String(policy.delay),
  ];
}

const REASONS: readonly (RejectReason | undefined)[] = [undefined, 'limited', 'cost-exceeds-capacity'];

/**
 * Reads a script's reply (seven integers, see the Lua prelude) into a {@link Verdict}.
 * @throws Error when the reply has another shape (a proxy or module answering in its place)
 */
export function toVerdict(reply: unknown): Verdict {
  if (!Array.isArray(reply) || reply.length !== 7 || !reply.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new Error(`sluice: unexpected reply from the Redis rate-limit script: ${JSON.stringify(reply)}`);
  }
  const [allowed, limit, remaining, resetMs, retryAfterMs, delayMs, reasonCode] = reply as number[];
  const verdict = {
    allowed: allowed === 1,
    limit: limit as number,
    remaining: remaining as number,
    resetMs: resetMs as number,
    retryAfterMs: retryAfterMs as number,
    delayMs: delayMs as number,
  };
  const reason = REASONS[reasonCode as number];
  return reason === undefined ? verdict : { ...verdict, reason };
}
