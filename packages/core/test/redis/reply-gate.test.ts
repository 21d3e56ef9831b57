import { ReplyGate } from '../../src/stores/redis/reply-gate';

/**
 * Issue 14: node-redis writes a command in a `setImmediate` scheduled when it is sent, so the
 * calls sent while replies are handled leave after all of that handling. The gate hands a second
 * reply on only once what the first one's caller sent has been written. A client written as
 * node-redis writes (every command sent in a turn leaves in one immediate) stands in for it here;
 * the store suites run the gate on node-redis 4, 5 and 6 against a real Redis.
 */
function nodeRedisLike(log: string[]) {
  const unwritten: string[] = [];
  let scheduled = false;
  const answers = new Map<string, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const gate = new ReplyGate();
  return {
    /** Sends `name` as the adapter does: the client's send, then `sent()`, the reply through the gate. */
    call(name: string): Promise<string> {
      const reply = new Promise<string>((resolve, reject) => answers.set(name, { resolve, reject }));
      unwritten.push(name);
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          for (const written of unwritten.splice(0)) log.push(`${written} written`);
        });
      }
      gate.sent();
      return gate.pass(reply);
    },
    answer(name: string): void {
      answers.get(name)?.resolve(name);
    },
    fail(name: string): void {
      answers.get(name)?.reject(new Error(`${name} failed`));
    },
  };
}

/** One turn of the event loop: immediates queued before this one have run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ReplyGate', () => {
  test('two replies at once: the second is handed on after the write of what the first one sent', async () => {
    const log: string[] = [];
    const client = nodeRedisLike(log);
    const a = client.call('A');
    const b = client.call('B');
    await turn();
    const handled = [
      a.then(() => {
        log.push('A handled');
        void client.call('C');
      }),
      b.then(() => log.push('B handled')),
    ];
    // Both replies in one read, as node-redis resolves them.
    client.answer('A');
    client.answer('B');
    await Promise.all(handled);
    // Without the gate: A handled, B handled, C written (C waits for B's callers).
    expect(log).toEqual(['A written', 'B written', 'A handled', 'C written', 'B handled']);
  });

  test('a reply with nothing out is handed on in the turn it comes, before any later immediate', async () => {
    const log: string[] = [];
    const client = nodeRedisLike(log);
    for (const name of ['A', 'B', 'C']) {
      const reply = client.call(name);
      await turn();
      const handled = reply.then(() => log.push(`${name} handled`));
      setImmediate(() => log.push(`immediate after ${name}`));
      client.answer(name);
      await handled;
      await turn();
    }
    expect(log).toEqual([
      'A written',
      'A handled',
      'immediate after A',
      'B written',
      'B handled',
      'immediate after B',
      'C written',
      'C handled',
      'immediate after C',
    ]);
  });

  test('replies and errors held together go on in the order they came, though nothing is sent', async () => {
    const log: string[] = [];
    const client = nodeRedisLike(log);
    const replies = ['A', 'B', 'C', 'D'].map((name) => client.call(name));
    await turn();
    const handled = replies.map((reply) =>
      reply.then(
        (name) => log.push(`${name} handled`),
        (error: Error) => log.push(error.message),
      ),
    );
    client.answer('A');
    client.fail('B');
    client.answer('C');
    client.answer('D');
    await Promise.all(handled);
    expect(log).toEqual([
      'A written',
      'B written',
      'C written',
      'D written',
      'A handled',
      'B failed',
      'C handled',
      'D handled',
    ]);
  });

  test('several replies at once, each handler sending: each call leaves before the next reply is handled', async () => {
    const log: string[] = [];
    const client = nodeRedisLike(log);
    const names = ['A', 'B', 'C'];
    const replies = names.map((name) => client.call(name));
    await turn();
    log.length = 0;
    const handled = replies.map((reply, i) =>
      reply.then(() => {
        log.push(`${names[i]} handled`);
        void client.call(`${names[i]}2`);
      }),
    );
    for (const name of names) client.answer(name);
    await Promise.all(handled);
    await turn();
    expect(log).toEqual(['A handled', 'A2 written', 'B handled', 'B2 written', 'C handled', 'C2 written']);
  });
});
