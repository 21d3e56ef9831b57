/** What `scriptCalls` needs of a client: ioredis `info`. */
interface InfoClient {
  info(section: 'commandstats'): Promise<string>;
}

/**
 * Script calls (EVALSHA + EVAL) Redis has served, from `INFO commandstats`, summed over the
 * given nodes (one for standalone, every master for a Cluster): how tests count round trips.
 */
export async function scriptCalls(...nodes: InfoClient[]): Promise<number> {
  let calls = 0;
  for (const node of nodes) {
    const info = await node.info('commandstats');
    for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) calls += Number(match[2]);
  }
  return calls;
}

/**
 * Calls of each command Redis has run since the last `CONFIG RESETSTAT`, scripts' own calls
 * included, from `INFO commandstats` of one node: by lower-case name (`zadd`, `psetex`, …).
 */
export async function commandCalls(node: InfoClient): Promise<Record<string, number>> {
  const info = await node.info('commandstats');
  const calls: Record<string, number> = {};
  for (const [, name, n] of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) calls[name as string] = Number(n);
  return calls;
}
