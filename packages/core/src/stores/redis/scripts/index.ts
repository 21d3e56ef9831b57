import type { AlgorithmName } from '../../../types';
import { fixedWindowLua } from './fixed-window.lua';
import { gcraLua } from './gcra.lua';
import { leakyBucketLua } from './leaky-bucket.lua';
import { preludeLua } from './prelude.lua';
import { slidingLogLua } from './sliding-log.lua';
import { slidingWindowLua } from './sliding-window.lua';
import { tokenBucketLua } from './token-bucket.lua';

const bodies: Record<AlgorithmName, string> = {
  gcra: gcraLua,
  'token-bucket': tokenBucketLua,
  'leaky-bucket': leakyBucketLua,
  'fixed-window': fixedWindowLua,
  'sliding-window': slidingWindowLua,
  'sliding-log': slidingLogLua,
};

/**
 * The complete Lua source of each algorithm (prelude + body). Typed by algorithm name, so an
 * algorithm added to `ALGORITHMS` without its script fails the type check.
 */
export const LUA_SCRIPTS: Readonly<Record<AlgorithmName, string>> = Object.fromEntries(
  Object.entries(bodies).map(([algorithm, body]) => [algorithm, preludeLua + body]),
) as Record<AlgorithmName, string>;
