/**
 * RaptorQ decoding off the main thread: one `ObjectFecDecoder` per datagram request. Symbols
 * wait in JavaScript; each object is decoded in wasm memory in one call once it has enough.
 */
import { loadRaptorq, ObjectFecDecoder, raptorqMemoryBytes, reserveRaptorqMemory } from './objectDecoder';
import type { FromWorker, ToWorker } from './protocol';

const decoders = new Map<number, ObjectFecDecoder>();
const ready = loadRaptorq();
const post = (message: FromWorker, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(message, transfer);

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  try {
    // A module that failed to load fails every request with its reason, instead of leaving the
    // transport waiting for an answer that never comes.
    await ready;
    switch (m.type) {
      case 'open':
        decoders.get(m.id)?.free();
        decoders.set(m.id, new ObjectFecDecoder(m.oti, m.maxTransferLength));
        break;
      case 'symbols': {
        const decoder = decoders.get(m.id);
        if (!decoder) break; // closed already: late symbols are dropped
        for (const packet of m.packets) {
          const object = decoder.push(packet);
          if (object) {
            decoders.delete(m.id);
            post({ type: 'decoded', id: m.id, object, symbolsUsed: decoder.symbolsReceived, memoryBytes: raptorqMemoryBytes() }, [object.buffer]);
            break;
          }
        }
        break;
      }
      case 'close':
        decoders.get(m.id)?.free();
        decoders.delete(m.id);
        break;
      case 'reserve':
        reserveRaptorqMemory(m.objectBytes);
        break;
    }
  } catch (e) {
    // A reservation the memory cannot have is no error (objects grow it as they come): no answer.
    if (m.type === 'reserve') return;
    decoders.get(m.id)?.free();
    decoders.delete(m.id);
    post({ type: 'error', id: m.id, message: e instanceof Error ? e.message : String(e), memoryBytes: raptorqMemoryBytes() });
  }
};
