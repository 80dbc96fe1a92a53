/**
 * A real S3 store for end-to-end tests and benchmarks: SeaweedFS (`weed mini`: master, volume,
 * filer and S3 gateway in one process) on 127.0.0.1 in a temporary directory, with one bucket and
 * static credentials; killed (as a crash would) and started again over the same data and ports by
 * the test. The Node twin of the origin's Rust test support (`tests/support/seaweed.rs`): same
 * binary, bucket, credentials, port rule and readiness; it also opens weed's Prometheus port, whose
 * request counters say what the origins asked the store.
 *
 * The binary is the one `scripts/setup.sh` installs (`.holoquic/tools/seaweedfs-<version>/weed`,
 * or under `HOLOQUIC_TOOLS`), or `HOLOQUIC_WEED`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from './processes';

export const BUCKET = 'holoquic';
export const ACCESS_KEY = 'holoquic-test';
export const SECRET_KEY = 'holoquic-test-secret';
/** The SeaweedFS version `scripts/setup.sh` installs (keep equal to it and to seaweed.rs). */
export const WEED_VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';

/** `HOLOQUIC_WEED`, else the binary `scripts/setup.sh` installs; null when neither exists. */
export function weedBinary(): string | null {
  const named = process.env.HOLOQUIC_WEED;
  const tools = process.env.HOLOQUIC_TOOLS ?? resolve(ROOT, '.holoquic/tools');
  const path = named ?? join(tools, `seaweedfs-${WEED_VERSION}`, 'weed');
  return existsSync(path) ? path : null;
}

/** What a test says when there is no store: a loud skip, or a failure under `HOLOQUIC_REQUIRE_S3`. */
export function skipWithoutWeed(test: string): boolean {
  if (weedBinary()) return false;
  if (process.env.HOLOQUIC_REQUIRE_S3) throw new Error('HOLOQUIC_REQUIRE_S3 is set but no SeaweedFS binary was found: run scripts/setup.sh (or set HOLOQUIC_WEED)');
  console.warn(`\n*** SKIPPED ${test}: no SeaweedFS binary (run scripts/setup.sh, or set HOLOQUIC_WEED); set HOLOQUIC_REQUIRE_S3=1 to make this an error ***\n`);
  return true;
}

/** weed prints this once the bucket exists and every component answers. */
const READY = /All enabled components are running and ready to use/;

export interface Seaweed {
  /** `http://127.0.0.1:PORT` of the S3 gateway. */
  endpoint: string;
  /**
   * `--config FILE` for the origin and `holoquic-publish`: a TOML file of the `s3_*` settings
   * that reach this store (so the secret is on no command line).
   */
  flags: string[];
  /** Kills the store (SIGKILL: no goodbye to its clients). */
  stop(): Promise<void>;
  /** Starts it again on its ports over its data; resolves once it is ready. */
  resume(): Promise<void>;
  /** `SeaweedFS_s3_request_total` by `TYPE code` (e.g. `GET 200`, `GET 304`) from its metrics. */
  requests(): Promise<Map<string, number>>;
  /** The last lines weed printed, for failure messages. */
  log(): string;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/** Starts the store and waits until it is ready (five tries on fresh ports, as seaweed.rs). */
export async function startSeaweed(): Promise<Seaweed> {
  const binary = weedBinary();
  if (!binary) throw new Error('no SeaweedFS binary: run scripts/setup.sh (or set HOLOQUIC_WEED)');
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'holoquic-weed-'));
    const store = seaweedIn(binary, dir, await freePortPairs(5));
    try {
      await store.resume();
      return store;
    } catch (e) {
      await store.close();
      if (attempt >= 5) throw e;
      console.warn(`weed did not start (try ${attempt}), again on other ports: ${(e as Error).message}`);
    }
  }
}

function seaweedIn(binary: string, dir: string, ports: number[]): Seaweed {
  const [master, volume, filer, s3, metrics] = ports;
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true });
  let child: ChildProcess | null = null;
  let output = '';
  const endpoint = `http://127.0.0.1:${s3}`;
  const config = join(dir, 'origin.toml');
  writeFileSync(config, [
    `s3_endpoint = "${endpoint}"`, 's3_region = "us-east-1"', `s3_access_key_id = "${ACCESS_KEY}"`,
    `s3_secret_access_key = "${SECRET_KEY}"`, 's3_allow_http = true', '',
  ].join('\n'));
  const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;
  const store: Seaweed = {
    endpoint,
    flags: ['--config', config],
    stop: () => new Promise((done) => {
      const c = child;
      child = null;
      if (!c || exited(c)) return done();
      c.once('exit', () => done());
      c.kill('SIGKILL');
    }),
    resume: () => {
      if (child) throw new Error('weed is already running');
      output = '';
      const c = spawn(binary, [
        'mini', '-ip=127.0.0.1', '-ip.bind=127.0.0.1', '-webdav=false', '-admin.ui=false', '-master.telemetry=false',
        '-s3.port.iceberg=0', '-s3.port.lance=0', `-bucket=${BUCKET}`, `-dir=${data}`,
        `-master.port=${master}`, `-volume.port=${volume}`, `-filer.port=${filer}`, `-s3.port=${s3}`, `-metricsPort=${metrics}`,
      ], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY } });
      child = c;
      // A first start on a loaded machine takes a while (4–5 s on an idle 2-core VM).
      return new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`weed not ready after 60 s:\n${store.log()}`)), 60_000);
        const onData = (chunk: Buffer) => {
          output = (output + chunk.toString()).slice(-20_000);
          if (READY.test(output)) {
            clearTimeout(timer);
            ready();
          }
        };
        c.stdout!.on('data', onData);
        c.stderr!.on('data', onData);
        c.once('exit', (code, signal) => {
          clearTimeout(timer);
          fail(new Error(`weed exited (${code ?? signal}) before it was ready:\n${store.log()}`));
        });
      });
    },
    requests: async () => {
      const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      const counts = new Map<string, number>();
      for (const m of text.matchAll(/^SeaweedFS_s3_request_total\{([^}]*)\} (\S+)$/gm)) {
        const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(m[1])?.[1] ?? '';
        if (label('bucket') !== BUCKET) continue;
        const key = `${label('type')} ${label('code')}`;
        counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
      }
      return counts;
    },
    log: () => output.split('\n').slice(-40).join('\n'),
    close: async () => {
      await store.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return store;
}

/**
 * `count` ports free on 127.0.0.1 together with the port 10000 above each (SeaweedFS's gRPC), all
 * below the kernel's ephemeral range so no client socket takes one meanwhile. They are taken only
 * when weed binds them: another process may take one first, and weed then exits (hence the tries).
 */
async function freePortPairs(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < 1000 && ports.length < count; i++) {
    const port = 11_000 + Math.floor(Math.random() * 11_000);
    if (ports.some((p) => Math.abs(p - port) < 2)) continue;
    if ((await isFree(port)) && (await isFree(port + 10_000))) ports.push(port);
  }
  if (ports.length < count) throw new Error('no free ports for SeaweedFS');
  return ports;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const server = createServer();
    server.once('error', () => answer(false));
    server.listen(port, '127.0.0.1', () => server.close(() => answer(true)));
  });
}
