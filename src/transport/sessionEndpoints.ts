/**
 * Where a `WebTransportSession` (webtransport.ts) can open sessions: the endpoints the origin's
 * `/config.json` and the manifest list (merged by endpoints.ts), or the one session URL the
 * options pin; read at the start and again while failing over (a restarted origin has new
 * certificate hashes). The failover rules (failover.ts) count these endpoints, so they start
 * again whenever the number of endpoints changes.
 */
import { type FailoverSettings, FailoverRules } from './failover';
import { mergeEndpoints } from './endpoints';
import { message, openSession } from './openSession';
import { fetchOriginConfig, type OriginConfig, type WebTransportEndpoint } from './originConfig';

/** The settings of where and how sessions are opened (part of `WebTransportSessionOptions`). */
export interface EndpointSettings {
  /** Origin base URL whose `/config.json` names the session URL and certificate hashes (if it has one). */
  originBase: string;
  /**
   * That `/config.json`, already asked for (`fetchOriginConfig`): the player asks for it beside the
   * manifest, so the session does not wait a round trip for it after the manifest has come.
   */
  originConfig?: Promise<OriginConfig>;
  /** Session URLs the manifest lists (docs/mpd.md), tried after the origin's own (endpoints.ts). */
  manifestEndpoints?: readonly string[];
  /** Session URL to use instead of the configuration's (e.g. through a relay in tests). */
  webtransportUrl?: string;
  /** The failover rules' settings (failover.ts; defaults there). */
  failover?: Partial<FailoverSettings>;
  /** An attempt to open a session that has not opened after this long has failed (default 4000 ms). */
  connectTimeoutMs?: number;
}

/** How long a new `/config.json` is waited for while failing over (a copy read before will do). */
const CONFIG_REFRESH_TIMEOUT_MS = 2000;

export class SessionEndpoints {
  private endpoints: WebTransportEndpoint[] = [];
  /** The origin had a `/config.json` at the start: worth reading again while failing over. */
  private originHasConfig = false;
  private failoverRules = new FailoverRules(1);
  /** `settings.originConfig` until the first read uses it (a later read asks again: hashes change). */
  private prefetched: Promise<OriginConfig> | undefined;

  constructor(private readonly settings: EndpointSettings) {
    this.prefetched = settings.originConfig;
  }

  /** The failover rules over the current endpoints (replaced when their number changes). */
  get rules(): FailoverRules {
    return this.failoverRules;
  }

  /** How many endpoints there are (0: nowhere to open a session). */
  get count(): number {
    return this.endpoints.length;
  }

  /**
   * Reads `/config.json` and merges its endpoints with the manifest's. Resolves to why there is
   * no configuration ('' when there is one): a static host has none.
   */
  async read(): Promise<string> {
    let config: OriginConfig | null = null;
    let noConfig = '';
    try {
      const prefetched = this.prefetched;
      this.prefetched = undefined;
      config = await (prefetched ?? fetchOriginConfig(this.settings.originBase));
    } catch (e) {
      noConfig = message(e);
    }
    this.originHasConfig = config !== null;
    this.use(mergeEndpoints(config, this.settings.manifestEndpoints ?? []));
    return noConfig;
  }

  /**
   * Reads `/config.json` again (new certificate hashes after a restart), once and briefly; keeps
   * the old list if that fails, and does not ask a host that had none.
   */
  async refresh(): Promise<void> {
    if (!this.originHasConfig) return;
    try {
      const config = await fetchOriginConfig(this.settings.originBase, AbortSignal.timeout(CONFIG_REFRESH_TIMEOUT_MS), { attempts: 1 });
      this.use(mergeEndpoints(config, this.settings.manifestEndpoints ?? []));
    } catch {
      // the origin that served the page may be the one that is gone: the endpoints read before will do
    }
  }

  /**
   * Opens a session to endpoint `i`, or rejects (within the connect timeout) naming it; `onLate`
   * receives a session whose handshake completed after the timeout (openSession.ts).
   */
  open(i: number, onLate?: (wt: WebTransport) => void): Promise<WebTransport> {
    return openSession(this.endpoints[i], this.settings.connectTimeoutMs ?? 4000, onLate);
  }

  /** Endpoint `i`'s session URL ('unknown' past the list). */
  url(i: number): string {
    return this.endpoints[i]?.url ?? 'unknown';
  }

  /** The endpoints to use from now on (the failover rules start again if their number changed). */
  private use(endpoints: WebTransportEndpoint[]): void {
    // A session URL given in the options replaces the list (one endpoint, pinned as the first).
    const override = this.settings.webtransportUrl;
    const list = override ? [{ url: override, certificateHashes: endpoints[0]?.certificateHashes ?? [] }] : endpoints;
    if (list.length !== this.endpoints.length) this.failoverRules = new FailoverRules(list.length, this.settings.failover);
    this.endpoints = list;
  }
}
