export { clientAddressKey, resolveIpv6Subnet } from './client-address';
export { headerValue, RequestView } from './http-request';
export type { HttpRequest } from './http-request';
export { compileKeyTemplate, KEY_VARIABLES } from './key-template';
export type { ClientAddressOptions, KeyReader } from './key-template';
export { compileTrustProxy, forwardedClient } from './trust-proxy';
export type { TrustFunction, TrustProxy } from './trust-proxy';
