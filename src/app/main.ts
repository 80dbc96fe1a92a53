/**
 * The demo app: `<holoquic-player>` filling the window, a delivery-mode selector, loading
 * progress and the live statistics overlay. It also implements the automation contract of
 * docs/qoe.md ("Headless player page"): URL parameters configure the player and
 * `window.holoquic` reports state, error and the QoE log; `render=0` plays without drawing.
 */
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import { exposeAutomation, type PageParams, playerOptionsFrom, readPageParams, tracePoseSource } from './automation';
import { defineHoloquicPlayer, type HoloquicPlayerElement } from './component';
import { StatsOverlay } from './statsOverlay';

defineHoloquicPlayer();

const app = document.getElementById('app')!;
const progress = document.getElementById('progress')!;
const controls = document.getElementById('controls')!;

function say(text: string): void {
  progress.textContent = text;
  progress.hidden = text === '';
}

function modeSelector(element: HoloquicPlayerElement, initial: PlayerMode): HTMLLabelElement {
  const label = document.createElement('label');
  label.textContent = 'delivery ';
  const select = document.createElement('select');
  select.id = 'mode';
  for (const mode of PLAYER_MODES) select.append(new Option(mode, mode, false, mode === initial));
  select.addEventListener('change', () => element.setMode(select.value as PlayerMode));
  label.append(select);
  return label;
}

function playButton(element: HoloquicPlayerElement): HTMLButtonElement {
  const button = document.createElement('button');
  button.id = 'play';
  button.textContent = 'Play';
  button.addEventListener('click', () => {
    if (element.state === 'playing') element.pause();
    else element.play();
  });
  element.addEventListener('statechange', () => {
    button.textContent = element.state === 'playing' ? 'Pause' : 'Play';
    button.disabled = element.state === 'ended' || element.state === 'failed';
  });
  return button;
}

function cameraButton(element: HoloquicPlayerElement): HTMLButtonElement {
  const button = document.createElement('button');
  button.textContent = 'Fly camera';
  button.title = 'Orbit: drag to turn, wheel to zoom. Fly: W/A/S/D/R/F to move, drag to look, Q/E to roll.';
  button.addEventListener('click', () => {
    const view = element.renderer;
    if (!view) return;
    view.setCameraMode(view.cameraMode === 'orbit' ? 'fly' : 'orbit');
    button.textContent = view.cameraMode === 'orbit' ? 'Fly camera' : 'Orbit camera';
  });
  return button;
}

/** Saves the run's holoquic-qoe/1 log (docs/qoe.md) as a JSON file. */
function qoeButton(element: HoloquicPlayerElement): HTMLButtonElement {
  const button = document.createElement('button');
  button.id = 'qoe-export';
  button.textContent = 'QoE log';
  button.title = 'Download this session\'s QoE log (holoquic-qoe/1 JSON)';
  button.addEventListener('click', () => {
    const log = element.qoe();
    if (!log) return;
    const url = URL.createObjectURL(new Blob([JSON.stringify(log, null, 1)], { type: 'application/json' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = `holoquic-qoe-${log.startedAt.replace(/[:.]/g, '-')}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  return button;
}

/** Loading progress in words, from the element's events. */
function followProgress(element: HoloquicPlayerElement): void {
  let segments = 0;
  element.addEventListener('statechange', () => {
    const state = element.state;
    if (state === 'loading') say('Connecting to the origin, reading the manifest…');
    else if (state === 'ready') say('Ready.');
    else if (state === 'playing' && segments === 0) say('Buffering the first segment…');
    else if (state === 'failed') say(`Failed: ${element.error}`);
    else if (state === 'ended') say('Ended.');
    else if (state === 'paused') say('Paused.');
  });
  element.addEventListener('segment', () => {
    segments++;
    if (element.state === 'playing') say('');
  });
  element.addEventListener('freeze', (e) => {
    const detail = (e as CustomEvent<{ type: string }>).detail;
    if (detail.type === 'freeze-start') say('Rebuffering…');
    else if (detail.type === 'freeze-end') say('');
  });
}

async function start(params: PageParams): Promise<void> {
  const element = document.createElement('holoquic-player');
  element.id = 'player';
  element.setAttribute('src', params.manifestUrl);
  // The demo plays on: scenes are made to loop, and experiments run longer than one pass.
  element.setAttribute('loop', '');
  if (!params.render) element.setAttribute('render', 'off');
  const { manifestUrl: _manifest, ...options } = playerOptionsFrom(params);
  element.options = options;
  app.append(element);
  followProgress(element);
  controls.append(modeSelector(element, params.mode));
  if (params.render) controls.append(cameraButton(element));
  controls.append(playButton(element));
  controls.append(qoeButton(element));
  exposeAutomation(null);
  const overlay = new StatsOverlay(() => element.getStats());
  if (params.render) app.append(overlay.element);
  say('Connecting to the origin, reading the manifest…');
  try {
    const trace = await tracePoseSource(params);
    await element.load();
    if (trace) element.setPoseSource(trace);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    exposeAutomation(element.player, element.player ? null : message);
    say(`Failed: ${element.error ?? message}`);
    return;
  }
  exposeAutomation(element.player);
  if (params.render) overlay.start();
  say(params.autoplay ? '' : 'Press Play.');
  if (params.autoplay) element.play();
}

try {
  void start(readPageParams(location.search, location.origin));
} catch (e) {
  const message = e instanceof Error ? e.message : String(e);
  exposeAutomation(null, message);
  say(message);
}
