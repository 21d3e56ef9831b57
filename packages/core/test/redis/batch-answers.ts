/**
 * Each request's answer in a reply of the batch script (see `scripts/batch.lua.ts`), given each
 * request's op (1 consume on one key, 2 give back, 3 reset): a failure's first word (`OOM`), a
 * consume's `admitted` or its code when it was not (1 limited, 2 cost exceeds capacity), or
 * the number a give-back or reset replied.
 */
export function batchAnswers(reply: readonly unknown[], ops: readonly number[]): unknown[] {
  const answers: unknown[] = [];
  for (let at = 0; at < reply.length; at++) {
    const value = reply[at];
    if (value instanceof Error) answers.push(value.message.split(' ')[0]);
    else if (ops[answers.length] !== 1) answers.push(value);
    else if (typeof value === 'number' && value < 0) {
      // `-1 - code, remaining, resetMs, waitMs`.
      answers.push(value === -1 ? 'admitted' : -1 - value);
      at += 3;
    } else {
      // An admission without delay: `remaining, resetMs`.
      answers.push('admitted');
      at += 1;
    }
  }
  return answers;
}
