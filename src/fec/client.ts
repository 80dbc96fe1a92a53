/**
 * The main-thread side of the RaptorQ worker: open a decoder per request, feed symbols (batched
 * per task turn so a burst of datagrams costs one message), await the object.
 */
import type { FromWorker, ToWorker } from './protocol';
import { startModuleWorker } from '../workers/moduleWorker';
// The bundled worker script's URL (Vite emits it beside this module; in development it is the source).
import fecWorkerUrl from './worker.ts?worker&url';

interface Pending {
  resolve: (object: Uint8Array) => void;
  reject: (error: Error) => void;
  batch: Uint8Array[];
}

export class FecWorkerClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private flushScheduled = false;
  /** The worker's wasm memory as its last answer reported it (bytes; 0 before any answer). */
  memoryBytes = 0;

  constructor(worker?: Worker) {
    this.worker = worker ?? startModuleWorker(fecWorkerUrl, { name: 'holoquic-fec' });
    this.worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const m = event.data;
      this.memoryBytes = m.memoryBytes;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.type === 'decoded') p.resolve(m.object);
      else p.reject(new Error(`RaptorQ decoding failed: ${m.message}`));
    };
    this.worker.onerror = (event) => {
      for (const p of this.pending.values()) p.reject(new Error(`RaptorQ worker failed: ${event.message}`));
      this.pending.clear();
    };
  }

  /**
   * Starts decoding request `id`; resolves with the object once enough symbols arrived. The worker
   * refuses (rejects) an OTI whose transfer length is above `maxTransferLength` or that breaks
   * RFC 6330's limits (oti.ts) before it allocates anything for it.
   */
  open(id: number, oti: Uint8Array, maxTransferLength: number): Promise<Uint8Array> {
    const result = new Promise<Uint8Array>((resolve, reject) => this.pending.set(id, { resolve, reject, batch: [] }));
    this.post({ type: 'open', id, oti, maxTransferLength });
    return result;
  }

  push(id: number, packet: Uint8Array): void {
    const p = this.pending.get(id);
    if (!p) return;
    p.batch.push(packet);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setTimeout(() => this.flush(), 0);
    }
  }

  /** Stops decoding `id` (done, cancelled or given up). */
  close(id: number): void {
    const p = this.pending.get(id);
    if (p) {
      this.pending.delete(id);
      p.reject(new Error('closed'));
    }
    this.post({ type: 'close', id });
  }

  /**
   * Lets the worker make room now for decoding objects of up to `objectBytes` (the largest the
   * manifest lets the player expect), so its memory is set while playback warms up.
   */
  reserve(objectBytes: number): void {
    this.post({ type: 'reserve', objectBytes });
  }

  terminate(): void {
    this.worker.terminate();
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const [id, p] of this.pending) {
      if (p.batch.length === 0) continue;
      const packets = p.batch;
      p.batch = [];
      this.post({ type: 'symbols', id, packets }, [...new Set(packets.map((b) => b.buffer as ArrayBuffer))]);
    }
  }

  private post(message: ToWorker, transfer: Transferable[] = []): void {
    this.worker.postMessage(message, transfer);
  }
}
