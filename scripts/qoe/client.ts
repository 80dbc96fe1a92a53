/**
 * The client side of one QoE run: headless Debian Chromium on the player page, waiting for the
 * page's `window.holoquic.state()` to reach `ended` (docs/qoe.md → "Headless player page"), then
 * saving `{ qoe, error, pageStarted, console }` as JSON. Runs inside the client network namespace.
 *
 *   tsx scripts/qoe/client.ts --url URL --timeout SECONDS --out FILE [--spki-from HOST:PORT] [--started FILE]
 *
 * `--spki-from` reads the origin's certificate over TLS and allows it for HTTP/2 fetches with
 * `--ignore-certificate-errors-spki-list` (WebTransport uses the hashes from /config.json).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { validateQoeLog } from '../../src/qoe/schema';
import { PAGE_NEVER_STARTED } from './lib/aggregate';

/** base64 SHA-256 of the DER SubjectPublicKeyInfo of the certificate served at host:port. */
function spkiHash(hostPort: string): Promise<string> {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.slice(hostPort.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
      const cert = socket.getPeerCertificate(true);
      socket.end();
      if (!cert?.raw) return reject(new Error(`no certificate from ${hostPort}`));
      // Chromium pins the DER SubjectPublicKeyInfo (Node's `pubkey` is only the raw key).
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      resolve(createHash('sha256').update(spki).digest('base64'));
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error(`TLS to ${hostPort} timed out`)));
    socket.on('error', reject);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, timeout: { type: 'string' }, out: { type: 'string' }, 'spki-from': { type: 'string' }, started: { type: 'string' } },
  });
  if (!values.url || !values.out || !values.timeout) throw new Error('usage: client.ts --url URL --timeout SECONDS --out FILE [--spki-from HOST:PORT]');
  const timeoutMs = Number(values.timeout) * 1000;
  const args = ['--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  if (values['spki-from']) args.push(`--ignore-certificate-errors-spki-list=${await spkiHash(values['spki-from'])}`);

  const profile = mkdtempSync(join(tmpdir(), 'holoquic-qoe-'));
  const consoleLines: string[] = [];
  let qoe: unknown = null;
  let error: string | null = null;
  let pageStarted = false;
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`[pageerror] ${e.message}`));
    page.on('requestfailed', (r) => consoleLines.push(`[requestfailed] ${r.url()}: ${r.failure()?.errorText ?? '?'}`));
    await page.goto(values.url, { timeout: 30_000 });
    // The page's module script publishes window.holoquic before the load event. A page loaded
    // without it lost its script on the way (seen as net::ERR_NETWORK_CHANGED) and would wait
    // out the whole timeout: say so now (`pageStarted` false), and the runner runs it again once.
    pageStarted = await page.waitForFunction(() => 'holoquic' in window, undefined, { timeout: 15_000 }).then(() => true, () => false);
    if (!pageStarted) throw new Error(`${PAGE_NEVER_STARTED}: the page loaded without window.holoquic`);
    // The page has loaded and the player starts: the runner starts the bandwidth trace now, so that
    // every run meets the trace at the same point of its playback, however long Chromium took.
    if (values.started) writeFileSync(values.started, `${Date.now()}\n`);
    const deadline = Date.now() + timeoutMs;
    let state = 'loading';
    while (Date.now() < deadline) {
      state = await page.evaluate(() => (window as unknown as { holoquic?: { state(): string } }).holoquic?.state() ?? 'loading');
      if (state === 'ended' || state === 'failed') break;
      await page.waitForTimeout(500);
    }
    const result = await page.evaluate(() => {
      const api = (window as unknown as { holoquic?: { qoe(): unknown; error(): string | null } }).holoquic;
      return api ? { qoe: api.qoe(), error: api.error() } : { qoe: null, error: 'the page exposes no window.holoquic' };
    });
    if (state !== 'ended') error = `page state "${state}" after ${values.timeout} s${result.error ? `: ${result.error}` : ''}`;
    else if (result.error) error = result.error;
    if (result.qoe) qoe = validateQoeLog(result.qoe);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  writeFileSync(values.out, JSON.stringify({ qoe, error, pageStarted, console: consoleLines.slice(-200) }));
  console.log(error ? `client: ${error}` : 'client: QoE log saved');
}

main().catch((e) => {
  console.error(`client: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
});
