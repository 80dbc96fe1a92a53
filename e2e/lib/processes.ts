/**
 * Real processes for end-to-end tests: the built origin binary and the impairment relay. Each is
 * started on free ports, waited for by its ready line, and stopped (SIGTERM) by `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect } from 'node:tls';

export const ROOT = resolve(import.meta.dirname, '../..');
export const ORIGIN_BIN = resolve(ROOT, 'server/target/release/holoquic-origin');
export const IMPAIR_BIN = resolve(ROOT, 'server/target/release/holoquic-impair');
/** The built app the origin serves; HOLOQUIC_DIST points elsewhere (e.g. to test a build while
 *  a QoE experiment is measuring dist/). */
export const DIST = resolve(ROOT, process.env.HOLOQUIC_DIST ?? 'dist');

export function requireBuilt(...paths: string[]): void {
  for (const p of paths) {
    if (!existsSync(p)) throw new Error(`${p} is missing: build first with scripts/setup.sh`);
  }
}

export interface Running {
  process: ChildProcess;
  /** Everything it printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `bin args…` and resolves once a line matches `ready` (or rejects when it exits). */
export function start(bin: string, args: string[], ready: RegExp, timeoutMs = 20_000): Promise<{ running: Running; match: RegExpMatchArray }> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' } });
  let output = '';
  const running: Running = {
    process: child,
    output: () => output,
    stop: () => new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }),
  };
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ running, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited with ${code}:\n${output}`));
    });
  });
}

export interface Origin extends Running {
  quicPort: number;
  httpsBase: string;
  httpBase: string;
  /** The admin listener (`/metrics`, `/healthz`), on a free port of 127.0.0.1. */
  adminBase: string;
}

/**
 * The real origin on 127.0.0.1: QUIC and HTTPS share a port, plain HTTP has its own; free ports
 * unless `listen` / `httpListen` name them (e.g. to restart an origin where it was).
 */
export async function startOrigin(content: string, extra: string[] = [], listen = '127.0.0.1:0', httpListen = '127.0.0.1:0'): Promise<Origin> {
  requireBuilt(ORIGIN_BIN, resolve(DIST, 'index.html'));
  const { running, match } = await start(
    ORIGIN_BIN,
    ['--listen', listen, '--http-listen', httpListen, '--admin-listen', '127.0.0.1:0', '--content', content, '--web', DIST, '--cors', ...extra],
    /holoquic-origin: listening quic=\S+:(\d+) https=\S+ http=\S+:(\d+) admin=\S+:(\d+)/,
  );
  const quicPort = Number(match[1]);
  return {
    ...running,
    quicPort,
    httpsBase: `https://127.0.0.1:${quicPort}`,
    httpBase: `http://127.0.0.1:${match[2]}`,
    adminBase: `http://127.0.0.1:${match[3]}`,
  };
}

/** The UDP relay of holoquic-impair in front of `upstreamPort`, with impairment arguments (on a free port unless `listen` names one). */
export async function startRelay(upstreamPort: number, impairment: string[], listen = '127.0.0.1:0'): Promise<Running & { port: number }> {
  requireBuilt(IMPAIR_BIN);
  const { running, match } = await start(
    IMPAIR_BIN,
    ['relay', '--listen', listen, '--upstream', `127.0.0.1:${upstreamPort}`, ...impairment],
    /relaying \S+:(\d+) ->/,
  );
  return { ...running, port: Number(match[1]) };
}

/** base64 SHA-256 of the SubjectPublicKeyInfo served at host:port (for Chromium's SPKI allow-list). */
export function spkiHash(host: string, port: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      const cert = socket.getPeerCertificate(true);
      socket.end();
      if (!cert?.raw) return reject(new Error('no certificate'));
      // Chromium pins the DER SubjectPublicKeyInfo (Node's `pubkey` is only the raw key).
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      resolvePromise(createHash('sha256').update(spki).digest('base64'));
    });
    socket.on('error', reject);
  });
}

/** One counter or gauge of the origin's Prometheus `/metrics` (`holoquic_<name>`), from its admin listener. */
export async function originMetric(origin: Origin, name: string): Promise<number> {
  const text = await (await fetch(`${origin.adminBase}/metrics`)).text();
  const m = new RegExp(`^holoquic_${name} (\\d+)$`, 'm').exec(text);
  if (!m) throw new Error(`no holoquic_${name} in /metrics`);
  return Number(m[1]);
}
