import { socketPeerAddress, type PeerSocket } from '../keys/client-address';
import type { HttpRequest } from '../keys/http-request';

/**
 * What every framework's request mapping into core's neutral shape shares (`fromNodeRequest`,
 * `fromRequestLike`, `fromContextLike`): the peer's address (`undefined` once the client has
 * reset), the URL as received and the headers (parsed, and the lines), read at once; `query`
 * and `route`, which core calls only when a key asks, each mapping reads from the framework's
 * own request (`source`). One object per request: methods, not two closures per request.
 */
export abstract class NeutralRequest<TSource> implements HttpRequest {
  readonly remoteAddress: string | undefined;

  /**
   * @param source - the framework's request, for `query` and `route`
   * @param socket - Node's socket of the request
   * @param url - the request target as received, path and query
   * @param headers - Node's parsed headers
   * @param rawHeaders - Node's header lines as received (`rawHeaders`)
   */
  constructor(
    protected readonly source: TSource,
    socket: PeerSocket | null | undefined,
    readonly url: string,
    readonly headers: HttpRequest['headers'],
    readonly rawHeaders: readonly string[] | undefined,
  ) {
    this.remoteAddress = socketPeerAddress(socket);
  }

  abstract query(): unknown;

  abstract route(): string | undefined;
}
