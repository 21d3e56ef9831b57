import calculateSlot from 'cluster-key-slot';
import { keyDigest } from '../key-digest';
import type { ScriptClient } from './redis-client';
import { BLOCK_KEY_NAME, KEY_NAMES, type StateKind } from './scripts';

/**
 * Characters rewritten by {@link escapeKeyText}: `%` (the escape character itself), `{` and `}`
 * (Redis Cluster hashes only the text between the first `{` and the next `}`, so a brace in user
 * text could pick the slot), and lone UTF-16 surrogates (UTF-8 encodes each as U+FFFD, which
 * would merge distinct keys).
 */
const UNSAFE = /[%{}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Any character {@link UNSAFE} may rewrite (every surrogate: the exact check is left to it). */
const NEEDS_ESCAPE = /[%{}\uD800-\uDFFF]/;

/** Escaped text longer than this is replaced by its SHA-256: a hostile 10 kB key costs 66 bytes. */
export const MAX_VERBATIM_KEY_LENGTH = 256;

/**
 * Rewrites any text into a non-empty segment without braces, one-to-one:
 *
 * - `%` → `%25`, `{` → `%7B`, `}` → `%7D`, a lone surrogate → `%u` + 4 hex digits;
 * - the empty text → `%` alone, which no escape produces (every `%` written is followed by hex
 *   or `u`): an empty hash tag `{}` would not count as a tag on Cluster;
 * - a result longer than {@link MAX_VERBATIM_KEY_LENGTH} → `%h` + its SHA-256 in hex
 *   ({@link keyDigest}, shared with the in-process stores), a form escaping never produces either.
 *
 * Everything else (`:`, spaces, CR/LF, NUL, any Unicode) is kept: Redis keys are binary-safe.
 */
export function escapeKeyText(text: string): string {
  if (text === '') return '%';
  // The usual key (an address, an id) has nothing to escape: spare it the replace.
  if (text.length <= MAX_VERBATIM_KEY_LENGTH && !NEEDS_ESCAPE.test(text)) return text;
  const escaped = text.replace(UNSAFE, (ch) =>
    ch.length === 1 && ch.charCodeAt(0) < 0x80
      ? `%${ch.charCodeAt(0).toString(16).toUpperCase()}`
      : `%u${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  if (escaped.length <= MAX_VERBATIM_KEY_LENGTH) return escaped;
  return `%h${keyDigest(escaped)}`;
}

/**
 * The Redis key holding one algorithm's state for one user key:
 * `[<store prefix>:]<limiter prefix>:{<key>}:<algorithm>[@<format>][:<scope>][:<rule>]`, every
 * text part escaped with {@link escapeKeyText}; `@<format>` marks a state format changed since the
 * first (see `KEY_NAMES`). The escaped user key is the key's only `{…}`, so it alone
 * chooses the Cluster slot (every rule of one decision lands on the same one), is never empty,
 * and always stays inside the prefixes' namespace.
 *
 * @param storePrefix - the `RedisStore` prefix, or `undefined` for none
 * @param prefix - the limiter's prefix
 * @param key - the user's key, any string
 * @param algorithm - the algorithm (or `warm-up`), so two kinds of state never read each other's
 * @param scope - a per-key override's namespace (its rate), or `undefined`
 * @param rule - the rule's index in a limiter with several rules, or `undefined` for a single rule
 */
export function redisKey(
  storePrefix: string | undefined,
  prefix: string,
  key: string,
  algorithm: StateKind,
  scope?: string,
  rule?: number,
): string {
  const base = `${headOf(storePrefix, prefix)}${escapeKeyText(key)}${tailOf(algorithm)}`;
  const scoped = scope === undefined ? base : `${base}:${escapeKeyText(scope)}`;
  return rule === undefined ? scoped : `${scoped}:${rule}`;
}

/**
 * The Redis key of a user key's block record (see `BLOCK_KEY_NAME`):
 * `[<store prefix>:]<limiter prefix>:{<key>}:block@1`, the same hash tag as its states' keys, so
 * it is decided in the same script call on Redis Cluster too.
 */
export function blockKey(storePrefix: string | undefined, prefix: string, key: string): string {
  return `${headOf(storePrefix, prefix)}${escapeKeyText(key)}}:${BLOCK_KEY_NAME}`;
}

/** Limiter prefixes of one store prefix whose key heads are kept: past it, heads are built each time. */
const MAX_HEADS = 1024;

/** `[<store prefix>:]<limiter prefix>:{` by store prefix (`undefined`: none), then by limiter prefix. */
const HEADS = new Map<string | undefined, Map<string, string>>();

/** `}:<algorithm>[@<format>]` by algorithm. */
const TAILS = new Map<StateKind, string>();

/** A key's text before its escaped user key: escaped once per store and limiter prefix. */
function headOf(storePrefix: string | undefined, prefix: string): string {
  let heads = HEADS.get(storePrefix);
  if (heads === undefined) HEADS.set(storePrefix, (heads = new Map()));
  let head = heads.get(prefix);
  if (head === undefined) {
    const namespace =
      storePrefix === undefined
        ? escapeKeyText(prefix)
        : `${escapeKeyText(storePrefix)}:${escapeKeyText(prefix)}`;
    head = `${namespace}:{`;
    if (heads.size < MAX_HEADS) heads.set(prefix, head);
  }
  return head;
}

function tailOf(algorithm: StateKind): string {
  let tail = TAILS.get(algorithm);
  if (tail === undefined) TAILS.set(algorithm, (tail = `}:${KEY_NAMES[algorithm]}`));
  return tail;
}

/**
 * One store's state keys (see {@link redisKey}), the last single-rule key kept: a hot item's
 * requests (one client's, one SKU's) share one string, built and escaped once, which a batch
 * then tells apart from others by identity (see `runBatch`).
 */
export class StateKeys {
  #key: string | undefined = undefined;
  #prefix = '';
  #kind: StateKind | undefined = undefined;
  #scope: string | undefined = undefined;
  #last = '';

  /** @param storePrefix - the `RedisStore` prefix, or `undefined` for none */
  constructor(readonly storePrefix: string | undefined) {}

  /** The key of one rule's state (see {@link redisKey}). */
  of(prefix: string, key: string, kind: StateKind, scope: string | undefined): string {
    if (key === this.#key && prefix === this.#prefix && kind === this.#kind && scope === this.#scope)
      return this.#last;
    this.#key = key;
    this.#prefix = prefix;
    this.#kind = kind;
    this.#scope = scope;
    return (this.#last = redisKey(this.storePrefix, prefix, key, kind, scope));
  }

  /** The key of a user key's block record (see {@link blockKey}). */
  blockOf(prefix: string, key: string): string {
    return blockKey(this.storePrefix, prefix, key);
  }

  /** The key of each rule's state, in order (see {@link redisKey}'s `rule`). */
  ofRules(prefix: string, key: string, kinds: readonly StateKind[], scope: string | undefined): string[] {
    return kinds.map((kind, i) => redisKey(this.storePrefix, prefix, key, kind, scope, i));
  }
}

/**
 * A Cluster client's `nodeOf` by user key. Every key of a user key shares its hash tag, the
 * escaped key, so its slot is the escaped key's; a circuit asks it twice a call (to allow it, to
 * record its outcome), so the last key's slot is kept. Only the slot's master may change, and the
 * client is asked for it each time.
 */
export function nodeReader(client: ScriptClient): (key: string) => string | undefined {
  let lastKey: string | undefined;
  let lastSlot = 0;
  return (key) => {
    if (key !== lastKey) {
      lastSlot = calculateSlot(escapeKeyText(key));
      lastKey = key;
    }
    return client.nodeOf(lastSlot);
  };
}
