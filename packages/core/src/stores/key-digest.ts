import { createHash } from 'node:crypto';

/**
 * Hashed ahead of a text's UTF-16 code units: a byte UTF-8 never contains, so no text hashed as
 * UTF-16 can have the bytes of a text hashed as UTF-8.
 */
const UTF16_MARK = Buffer.from([0xff]);

/**
 * The SHA-256 of key text, in hex (64 characters; the Redis store's form, above 256 escaped
 * characters) or base64url (43; the in-process structures', above {@link MAX_HELD_KEY_LENGTH}),
 * whatever the text's length. Distinct texts get distinct digests: well-formed text is hashed
 * as UTF-8; text with a lone surrogate (which UTF-8 would turn into U+FFFD, merging distinct
 * texts) as its UTF-16 code units after a mark.
 */
export function keyDigest(text: string, encoding: 'hex' | 'base64url' = 'hex'): string {
  const hash = createHash('sha256');
  // Node 20 has isWellFormed (ES2024); the project's lib is ES2022.
  if ((text as string & { isWellFormed(): boolean }).isWellFormed()) hash.update(text, 'utf8');
  else hash.update(UTF16_MARK).update(text, 'utf16le');
  return hash.digest(encoding);
}

/**
 * Longest key text (UTF-16 code units) the in-process structures hold as it is; a longer key is
 * held by its 43-character base64url digest. 42 keeps addresses, UUIDs and most composite keys
 * verbatim (a length check is all they pay), and bounds what a held key's text costs: 64 bytes
 * of heap for Latin-1 text or a digest (V8's 16-byte header, one byte a character), 104 for
 * text beyond Latin-1 (two bytes a character), so a bound in keys is a bound in bytes. It must
 * stay below the digest's length: the two never meet, so a digest cannot be taken for a key.
 */
export const MAX_HELD_KEY_LENGTH = 42;

// The last long key and its digest: the block cache, a lease and the store each look up the
// same request's key, and a hot long key comes again and again; one entry keeps it bounded.
let lastLong = '';
let lastDigest = '';

/**
 * The text an in-process map holds a key by: the key itself up to {@link MAX_HELD_KEY_LENGTH}
 * characters, else its {@link keyDigest}. A hostile 15 kB key then costs what a short one does.
 * Decisions still report the key as given: this is only how state is found.
 */
export function heldKey(key: string): string {
  if (key.length <= MAX_HELD_KEY_LENGTH) return key;
  if (key !== lastLong) {
    lastDigest = keyDigest(key, 'base64url');
    lastLong = key;
  }
  return lastDigest;
}

/**
 * A copy of held key text that owns its characters, for storing (never needed to look up). V8
 * may represent a string as a slice of a larger one, or as the concatenation of its parts: a
 * 20-character cookie value cut out of a 15 kB `Cookie` header would keep the whole header
 * alive for as long as the key is held. Texts under 13 characters are never slices or
 * concatenations in V8, and digests are fresh strings, so only the others are copied; the copy
 * is made once, when a key is first stored.
 */
export function ownedKeyText(text: string): string {
  if (text.length < 13 || text.length > MAX_HELD_KEY_LENGTH) return text;
  // JSON's round trip is exact for every string (lone surrogates included) and builds one flat
  // string of the text's own length: the smallest copy measured.
  return JSON.parse(JSON.stringify(text)) as string;
}
