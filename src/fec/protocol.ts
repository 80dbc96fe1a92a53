/**
 * Messages between the transport (main thread) and the RaptorQ worker (`worker.ts`). Each
 * datagram request gets a decoder in the worker; symbols are posted in batches, the object comes
 * back as a transferred buffer.
 */

export type ToWorker =
  /** `maxTransferLength`: the largest object the client accepts for this request (oti.ts). */
  | { type: 'open'; id: number; oti: Uint8Array; maxTransferLength: number }
  /** Serialized EncodingPackets of one request, in arrival order. */
  | { type: 'symbols'; id: number; packets: Uint8Array[] }
  | { type: 'close'; id: number }
  /** Make room for decoding objects of up to `objectBytes` now (`reserveRaptorqMemory`); no answer. */
  | { type: 'reserve'; objectBytes: number };

/**
 * Every answer carries `memoryBytes`, the RaptorQ module's wasm memory in the worker then: wasm
 * memory never shrinks, and the worker decodes one object at a time (objectDecoder.ts), so it is
 * what the largest object decoded so far needed (the player's stats report it; the long-play
 * benchmark watches it).
 */
export type FromWorker =
  | { type: 'decoded'; id: number; object: Uint8Array; symbolsUsed: number; memoryBytes: number }
  | { type: 'error'; id: number; message: string; memoryBytes: number };
