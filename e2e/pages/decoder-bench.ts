/**
 * The one-decoder benchmark page (decoder-bench.html), driven by e2e/bench/one-decoder.ts through
 * `window.holoquicDecoderBench`: one benchmark worker (decoder-bench-worker.ts) gets a segment
 * and its pictures (decoded natively beforehand) from this origin, then reconstructs its frames
 * in rounds while the driver reads the worker threads' CPU time around each run.
 */
import type { CoreModuleInfo } from '../../src/decoder/coreModule';

export type BenchRequest =
  | { type: 'load'; segment: ArrayBuffer; pictures: ArrayBuffer }
  | { type: 'run'; rounds: number; postProcess: boolean };

export type BenchReply =
  | { type: 'loaded'; core: CoreModuleInfo; points: number[]; crossOriginIsolated: boolean }
  | { type: 'ran'; frameMs: number[] }
  | { type: 'failed'; message: string };

declare global {
  interface Window {
    holoquicDecoderBench: {
      /** Starts the worker and loads the segment and pictures at these paths. */
      load(segmentPath: string, picturesPath: string): Promise<Extract<BenchReply, { type: 'loaded' }>>;
      /** Reconstructs every frame `rounds` times (with post-processing unless told not to): wall ms per frame. */
      run(rounds: number, postProcess: boolean): Promise<number[]>;
    };
  }
}

let worker: Worker | undefined;

function ask(request: BenchRequest, transfer: Transferable[] = []): Promise<BenchReply> {
  return new Promise((resolve, reject) => {
    worker!.onmessage = (event: MessageEvent<BenchReply>) => {
      if (event.data.type === 'failed') reject(new Error(event.data.message));
      else resolve(event.data);
    };
    worker!.onerror = (event) => reject(new Error(event.message));
    worker!.postMessage(request, transfer);
  });
}

async function fetchBytes(path: string): Promise<ArrayBuffer> {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${path}`);
  return response.arrayBuffer();
}

window.holoquicDecoderBench = {
  async load(segmentPath, picturesPath) {
    worker ??= new Worker(new URL('./decoder-bench-worker.ts', import.meta.url), { type: 'module' });
    const [segment, pictures] = await Promise.all([fetchBytes(segmentPath), fetchBytes(picturesPath)]);
    const reply = await ask({ type: 'load', segment, pictures }, [segment, pictures]);
    if (reply.type !== 'loaded') throw new Error(`unexpected reply ${reply.type}`);
    return reply;
  },
  async run(rounds, postProcess) {
    const reply = await ask({ type: 'run', rounds, postProcess });
    if (reply.type !== 'ran') throw new Error(`unexpected reply ${reply.type}`);
    return reply.frameMs;
  },
};
