/**
 * Headless Debian Chromium through playwright-core (never a downloaded browser), with a fresh
 * profile per launch. Flags from ../shared/docs/findings.md §1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console and page errors, for failure messages. */
  log: string[];
  /** Whether the page's renderer process crashed (Playwright's `crash` event). */
  crashed(): boolean;
  close(): Promise<void>;
}

/**
 * `spki`: the origin's SPKI hash, so HTTPS reaches its self-signed certificate. `forceQuic`:
 * `host:port` that Chromium must reach over QUIC (HTTP/3) from the first request, as it would
 * after an `Alt-Svc` from a trusted origin (findings §1: only together with `spki`). `args`: more
 * command-line flags (e.g. `--enable-blink-features=WebTransportDraining`).
 */
export async function launch(options: { spki?: string; forceQuic?: string; args?: string[] } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'holoquic-e2e-'));
  const args = ['--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  // Lets HTTP/2 fetches reach the origin's self-signed certificate (WebTransport pins hashes instead).
  if (options.spki) args.push(`--ignore-certificate-errors-spki-list=${options.spki}`);
  if (options.forceQuic) args.push(`--origin-to-force-quic-on=${options.forceQuic}`);
  args.push(...(options.args ?? []));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args });
  const page = context.pages()[0] ?? (await context.newPage());
  const log: string[] = [];
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  let crashed = false;
  page.on('crash', () => { crashed = true; });
  return {
    context, page, log,
    crashed: () => crashed,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `probe` every 500 ms until it gives a value, or fails after `timeoutMs` naming `what`
 * with the browser's last console lines.
 */
export async function until<T>(browser: Browser, what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${browser.log.slice(-15).join('\n')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
