import { CAN_KEEP_TTL_LUA } from './prelude.lua';

/**
 * A piece of Lua written once and placed either as a function or inline. Redis makes every
 * closure a script defines again on each call (about 0.4 k instructions each, more with
 * upvalues) and a Lua call costs its frame: a lone decision's script runs each algorithm once, so
 * there its step and state reader are inlined (the gcra script fell from 54.7 k to about 45 k
 * instructions of redis-server per decision, callgrind), while the scripts that choose a step by
 * kind at run time (several rules, batches, give-backs) define the steps as functions.
 *
 * A block's `body` is written as a function body whose exits go through `ret` (`ret('a, b')`
 * where the function would `return a, b`; `ret('')` for a bare `return`): as a function, `ret`
 * returns; inline, the body runs in `repeat … until true` and `ret` assigns the block's outputs
 * and breaks out. So a body must not `ret` from inside a loop of its own.
 */
export interface LuaBlock {
  /** The names the body reads its arguments by, in order. */
  readonly params: readonly string[];
  /** The body, its exits written with `ret` (see {@link LuaBlock}); `io` reads and deletes state. */
  readonly body: (ret: (values: string) => string, io: StateIo) => string;
}

/** How a block reads a key's string and deletes a key. */
export interface StateIo {
  /** Statements that declare local `target`: the string at `key`, or false (see {@link inlineIo}). */
  readonly read: (target: string, key: string) => string;
  /** A statement deleting `key`. */
  readonly del: (key: string) => string;
  /**
   * Whether the script declares the kinds' memos of texts (see `slidingLogWriteLua`): a script
   * that may decide many requests at one "now", where the texts repeat.
   */
  readonly memo?: boolean;
  /**
   * A Lua expression true where Redis has `SET … KEEPTTL` (see `CAN_KEEP_TTL_LUA`): the probe
   * itself in a lone decision's script (read only where a step could keep an expiry), the
   * prelude's `can_keep_ttl` in the scripts that decide many (read once per call, not per
   * decision: about 0.3 k instructions each).
   */
  readonly keepsTtl: string;
}

/**
 * Reads and deletes through the functions `packed` and `del` in scope: the prelude's
 * `stateAccessLua`, or the batch script's (which may be its view's); in the scripts that choose
 * steps by kind, which declare the kinds' memos.
 */
export const callIo: StateIo = {
  read: (target, key) => `local ${target} = packed(${key})`,
  del: (key) => `del(${key})`,
  memo: true,
  keepsTtl: 'can_keep_ttl',
};

/**
 * Reads and deletes with the commands themselves, as `stateAccessLua` does (another type at the
 * key is deleted and read as none; any error but WRONGTYPE is the server's, and raised).
 */
export const inlineIo: StateIo = {
  read: (target, key) => `local ${target} = redis.pcall('GET', ${key})
if type(${target}) == 'table' then
  if not match(${target}.err, '^WRONGTYPE') then error(${target}) end
  redis.call('DEL', ${key})
  ${target} = false
end`,
  del: (key) => `redis.call('DEL', ${key})`,
  keepsTtl: CAN_KEEP_TTL_LUA,
};

/** `local function <name>(<params>) … end`. */
export function defineLua(name: string, block: LuaBlock, io: StateIo): string {
  return `local function ${name}(${block.params.join(', ')})
${block.body((values) => `return ${values}`, io)}
end`;
}

/**
 * The block inline: declares the locals `outs` as the function's results would be assigned to
 * them (`local a, b = f(args)`), the arguments given as Lua expressions; with `assign`, assigns
 * them instead (`a, b = f(args)`: locals declared before).
 */
export function inlineLua(
  block: LuaBlock,
  args: readonly string[],
  outs: readonly string[],
  io: StateIo,
  assign = false,
): string {
  // Temporaries of their own (`ret_<out>`, a name no body uses): a body's locals may be named as
  // the outputs.
  const temps = outs.map((out) => `ret_${out}`).join(', ');
  const bind = block.params
    .map((param, i) => [param, args[i] ?? 'nil'] as const)
    .filter(([param, arg]) => param !== arg);
  const binding =
    bind.length === 0
      ? ''
      : `local ${bind.map(([param]) => param).join(', ')} = ${bind.map(([, arg]) => arg).join(', ')}\n`;
  return `local ${temps}
do
${binding}repeat
${block.body((values) => (values === '' ? 'break' : `${temps} = ${values} break`), io)}
until true
end
${assign ? '' : 'local '}${outs.join(', ')} = ${temps}`;
}
