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
