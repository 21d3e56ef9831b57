import { MemoryStore } from '../src';
import { describeStoreContract } from './contract/store-contract';

describeStoreContract('MemoryStore', () => new MemoryStore());
