export { clientAddressKey, resolveIpv6Subnet, socketPeerAddress } from './client-address';
export type { PeerSocket } from './client-address';
export { headerValue, NOT_FOUND_ROUTE, RequestView } from './http-request';
export type { HttpRequest } from './http-request';
export { compileKeyTemplate, KEY_VARIABLES, readsClientAddress } from './key-template';
export type { ClientAddressOptions, KeyReader } from './key-template';
export { compileTrustProxy, forwardedClient } from './trust-proxy';
export type { TrustFunction, TrustProxy } from './trust-proxy';
