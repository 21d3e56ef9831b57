import { MemoryStore } from '../../src';
import { describeLossless } from '../contract/lossless-contract';

// The default: each limit its own in-process store; and both limits sharing one.
describeLossless('a memory store per limit', {
  stores: () => ({ perIp: new MemoryStore(), perSku: new MemoryStore() }),
});
const shared = new MemoryStore();
describeLossless('one memory store for both limits', { stores: () => ({ perIp: shared, perSku: shared }) });
