import { createHash } from 'node:crypto';

/** Keys up to this many characters are counted as they are (unless they look shortened). */
export const MAX_KEY_CHARS = 200;
/** How much of a longer key is kept to show it. */
const SHOWN_CHARS = 160;
/** `…`: the character right after the shown part of every shortened key. */
const ELLIPSIS = 0x2026;
/** Hex digits of the digest: 64 bits of SHA-256. */
const DIGEST_HEX = 16;

/**
 * The text a key is counted and shown under. A key of up to 200 characters is itself (no
 * allocation); a longer one (a 15 kB header, a key function's 1 MB string) becomes its first
 * 160 characters, its length and a digest of the whole text, so a counter never holds more than
 * about 200 characters however long the keys.
 *
 * Every shortened id has `…` as its 161st character, so a short key that has one there too is
 * shortened as well: sent as a key, a long key's id is counted apart from that long key (its
 * length and digest differ), and ids stay one-to-one with keys. The digest is SHA-256, not a
 * fast 32-bit hash, because keys come from clients: landing on another key's id means finding a
 * second preimage of 64 bits. Keys of 161 to 200 characters pay one `charCodeAt`, shorter ones
 * nothing more; only the keys shortened pay the hash.
 */
export function keyId(key: string): string {
  // The common case first, one comparison: a key this short has nothing at index 160.
  if (key.length <= SHOWN_CHARS) return key;
  if (key.length <= MAX_KEY_CHARS && key.charCodeAt(SHOWN_CHARS) !== ELLIPSIS) return key;
  return `${key.slice(0, SHOWN_CHARS)}… (${key.length} chars, #${digestOf(key)})`;
}

/** Over the UTF-16 code units (UTF-8 would turn every lone surrogate into the same U+FFFD). */
function digestOf(key: string): string {
  return createHash('sha256').update(key, 'utf16le').digest('hex').slice(0, DIGEST_HEX);
}
