/**
 * Hands a client's replies on to their callers one write at a time, for a client that writes
 * on a later turn of the event loop: node-redis (4 to 6) puts a command on its socket in a
 * `setImmediate` scheduled when the command is sent, so every command sent while replies are
 * being handled leaves together, after all of that handling.
 *
 * Why it matters: the batch queue keeps two calls on their way and sends the next one as a call
 * lands, before that call's callers run on, so Redis works on one call while this process reads
 * the other's reply; ioredis writes at once, before any caller runs. With node-redis, when two
 * replies come in at once (one read, or one poll of the event loop), both are handled, their
 * callers run on, and only then do the two calls sent in their place leave, together: Redis and
 * this process take turns instead of working at once (measured at 256 in flight: no call at
 * Redis 12 to 22 % of the time, every other call written together with another; 0.71 × ioredis
 * in a full bench run). Handing the second reply on only after the call sent in place of the
 * first has left keeps the two apart: Redis works on that one while this process handles the
 * second reply. (With the cores crowded, taking turns costs less CPU: see the bench README.)
 *
 * How: the first reply to come is handed on at once; replies that come before the write of what
 * it sent are held, in order. When the store sends a command while a reply is out, an immediate
 * queued behind the client's own write hands the next held reply on (the immediates of one turn
 * run in order). When a reply held finds nothing sent since the last one handed on, the next turn
 * hands it on. So a held reply waits for the write of what the one before it sent (about a turn
 * of the event loop for each reply held ahead of it) and never overtakes an earlier one; at one
 * call in flight nothing is ever held.
 */
export class ReplyGate {
  /** A reply was handed on, and what its caller sent may not have been written yet. */
  #out = false;
  /** An immediate is queued behind the client's write of what was sent since. */
  #afterWrite = false;
  /** An immediate is queued to hand a held reply on when nothing was sent. */
  #turn = false;
  readonly #held: Array<() => void> = [];

  /** `reply`, settled as it came once the gate lets it through. */
  pass<T>(reply: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      reply.then(
        (value) => this.#arrive(() => resolve(value)),
        (error: unknown) => this.#arrive(() => reject(error)),
      );
    });
  }

  /** Call right after giving the client a command: its write is scheduled by then. */
  sent(): void {
    if (!this.#out || this.#afterWrite) return;
    this.#afterWrite = true;
    setImmediate(() => {
      this.#afterWrite = false;
      this.#release();
    });
  }

  #arrive(handOn: () => void): void {
    if (!this.#out) {
      this.#out = true;
      handOn();
      return;
    }
    this.#held.push(handOn);
    this.#queueTurn();
  }

  /** The next held reply on (or none out); always one immediate queued while replies are held. */
  #release(): void {
    const next = this.#held.shift();
    if (next === undefined) {
      this.#out = false;
      return;
    }
    next();
    if (this.#held.length > 0) this.#queueTurn();
  }

  /**
   * Once the callbacks of this turn have run: when nothing was sent since the last reply handed
   * on, no write is coming to wait for, so the next held reply goes on; otherwise the immediate
   * behind that write does it.
   */
  #queueTurn(): void {
    if (this.#turn) return;
    this.#turn = true;
    setImmediate(() => {
      this.#turn = false;
      if (this.#held.length > 0 && !this.#afterWrite) this.#release();
    });
  }
}
