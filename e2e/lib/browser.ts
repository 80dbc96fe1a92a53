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
  close(): Promise<void>;
}

export async function launch(options: { spki?: string } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'holoquic-e2e-'));
  const args = ['--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  // Lets HTTP/2 fetches reach the origin's self-signed certificate (WebTransport pins hashes instead).
  if (options.spki) args.push(`--ignore-certificate-errors-spki-list=${options.spki}`);
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args });
  const page = context.pages()[0] ?? (await context.newPage());
  const log: string[] = [];
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  return {
    context, page, log,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
