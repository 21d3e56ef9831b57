/** The package ships no types: the one function sluice uses (ioredis computes slots with it too). */
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0 to 16383) of a key: CRC16 of its hash tag, or of the whole key. */
  export default function calculateSlot(key: string | Buffer): number;
}
