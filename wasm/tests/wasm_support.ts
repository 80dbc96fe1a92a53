/**
 * Shared by the Node tests of the wasm build (run by CTest in wasm/build-wasm through tsx): loading
 * the module, the pictures vpcc-dump-pictures writes, and TMC2's conformance logs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HevcDecoder, type HevcModuleFactory } from '../../src/decoder/hevc';
import type { VpccModule, VpccModuleFactory } from '../../src/decoder/vpcc';
import type { DumpedPicture } from './dumped_pictures';

// The hand-over of dumped pictures is browser-safe code of its own (the Chromium benchmark uses it too).
export { type DumpedPicture, putDumpedPicture, putFramePictures } from './dumped_pictures';

/**
 * Loads the core module from a build directory (passing the binary: no fetch in Node):
 * vpcc.mjs + vpcc.wasm, or with `threaded` the pthreads build vpcc-mt.mjs + .wasm, whose
 * threads are Node worker_threads running vpcc-mt.worker.js. Emscripten 3.1.6's Node code
 * in an ES module still calls CommonJS `require` and reads `__dirname`, given here. A process
 * that loaded the threaded build must end with process.exit (its idle threads keep it alive).
 */
export async function loadModule(buildDir: string, options: { threaded?: boolean } = {}): Promise<VpccModule> {
  const name = options.threaded ? 'vpcc-mt' : 'vpcc';
  const script = join(buildDir, `${name}.mjs`);
  if (options.threaded) Object.assign(globalThis, { require: createRequire(script), __dirname: buildDir, __filename: script });
  const factory = (await import(script)).default as VpccModuleFactory;
  return factory({ wasmBinary: readFileSync(join(buildDir, `${name}.wasm`)), mainScriptUrlOrBlob: pathToFileURL(script).href });
}

/** Loads the optional HEVC module (vpcc-hevc.mjs + vpcc-hevc.wasm) from a build directory. */
export async function loadHevc(buildDir: string): Promise<HevcDecoder> {
  const factory = (await import(join(buildDir, 'vpcc-hevc.mjs'))).default as HevcModuleFactory;
  return new HevcDecoder(await factory({ wasmBinary: readFileSync(join(buildDir, 'vpcc-hevc.wasm')) }));
}

/**
 * Decodes a stream's video natively into a temporary directory and reads the pictures back into
 * memory (the directory is removed again).
 */
export function dumpPictures(dumpTool: string, stream: string): DumpedPicture[] {
  const dir = mkdtempSync(join(tmpdir(), 'vpcc-pictures-'));
  try {
    const run = spawnSync(dumpTool, [stream, dir], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${dumpTool} failed (${run.status}): ${run.stderr}`);
    return readFileSync(join(dir, 'pictures.txt'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const [stream, index, width, height, bitDepth, chroma444, file] = line.split(' ');
        return {
          stream: +stream, index: +index, width: +width, height: +height, bitDepth: +bitDepth,
          chroma444: chroma444 === '1', samples: readFileSync(join(dir, file)),
        };
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Values of `key = value` on each line of a TMC2 decoder log that has `key`, in order (as
 * wasm/tests/tmc2_logs.h reads them for the native tests): e.g. "MD5 checksum" in
 * NAME_dec_pcframe_log.txt (before post-processing) and NAME_dec_rec_pcframe_log.txt (after).
 */
export function tmc2LogValues(path: string, key: string): string[] {
  const re = new RegExp(`${key}\\s*=\\s*([0-9a-f]+)`);
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const m = re.exec(line);
      return m ? [m[1]] : [];
    });
}

/** Minimal assertion bookkeeping for a test script run by CTest (exit code 1 on any failure). */
/** Exit status CTest reads as "skipped" (SKIP_RETURN_CODE): some checks lacked their data. */
export const SKIP_EXIT_CODE = 77;

export class Checks {
  failures = 0;
  skips = 0;
  equal<T>(got: T, want: T, what: string): void {
    if (got === want) return;
    this.failures++;
    console.error(`FAIL ${what}: got ${String(got)}, want ${String(want)}`);
  }
  ok(condition: boolean, what: string): void {
    if (!condition) {
      this.failures++;
      console.error(`FAIL ${what}`);
    }
  }
  /** Records checks not made for want of data: not a pass, so finish() then reports a skip. */
  skip(why: string): void {
    this.skips++;
    console.log(`skipped: ${why}`);
  }
  finish(): never {
    if (this.failures) {
      console.log(`${this.failures} failure(s)`);
      process.exit(1);
    }
    console.log(this.skips ? `no failures, ${this.skips} skip(s)` : 'all checks passed');
    process.exit(this.skips ? SKIP_EXIT_CODE : 0);
  }
}
