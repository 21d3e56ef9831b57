import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

/** A user's password as stored: a random salt and its scrypt hash, never the password itself. */
interface StoredPassword {
  readonly salt: Buffer;
  readonly hash: Buffer;
}

const KEY_LENGTH = 32;

function hashOf(password: string, salt: Buffer): Buffer {
  return scryptSync(password, salt, KEY_LENGTH);
}

/** The example's accounts: user name → password, hashed once when the app starts. */
export class Accounts {
  readonly #passwords = new Map<string, StoredPassword>();
  /** What an unknown user's password is compared with, so both cost one scrypt. */
  readonly #decoy: StoredPassword;

  constructor(users: Readonly<Record<string, string>>) {
    for (const [name, password] of Object.entries(users)) {
      const salt = randomBytes(16);
      this.#passwords.set(name, { salt, hash: hashOf(password, salt) });
    }
    const salt = randomBytes(16);
    this.#decoy = { salt, hash: hashOf(randomBytes(16).toString('hex'), salt) };
  }

  /** Whether `password` is `name`'s; an unknown name takes as long as a wrong password. */
  verify(name: string, password: string): boolean {
    const stored = this.#passwords.get(name);
    const { salt, hash } = stored ?? this.#decoy;
    const matches = timingSafeEqual(hashOf(password, salt), hash);
    return stored !== undefined && matches;
  }
}
