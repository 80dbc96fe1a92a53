/**
 * The stylesheet of `<holoquic-player>`'s shadow DOM: the drawing area, the control bar (which
 * fades out while playing and comes back on pointer movement or keyboard focus), the XR buttons on
 * their own when the bar is off, the loading indicator and the error overlay. Focus is always
 * visible (`:focus-visible` rings), and motion respects `prefers-reduced-motion`.
 */
export const PLAYER_STYLE = `
:host { display: block; position: relative; overflow: hidden; background: #101318; min-height: 150px;
  color: #fff; font: 13px/1.2 system-ui, sans-serif; }
:host(:fullscreen) { width: 100%; height: 100%; }
.view { position: absolute; inset: 0; }
[hidden] { display: none !important; }
button, select { font: 600 13px system-ui, sans-serif; color: #fff; background: #0009; border: 1px solid #fff6;
  border-radius: 6px; padding: 6px 10px; cursor: pointer; min-height: 32px; }
button:hover, select:hover { background: #000c; }
select option { color: #000; background: #fff; }
:focus-visible { outline: 2px solid #6cf; outline-offset: 2px; }

.xr { display: flex; gap: 8px; }
.xr.alone { position: absolute; bottom: 12px; left: 50%; transform: translateX(-50%); }

.bar { position: absolute; left: 0; right: 0; bottom: 0; display: flex; flex-wrap: wrap; align-items: center; gap: 8px;
  padding: 24px 12px 10px; background: linear-gradient(to top, #000b, #0000); transition: opacity 0.25s; }
.bar.idle:not(:focus-within) { opacity: 0; pointer-events: none; }
:host(.idle) { cursor: none; }
.bar .play { width: 44px; font-size: 15px; }
.bar .time { font-variant-numeric: tabular-nums; white-space: nowrap; min-width: 8.5em; }
.bar .grow { flex: 1 1 160px; display: flex; }

.timeline { flex: 1; min-width: 120px; height: 24px; margin: 0; background: transparent; cursor: pointer;
  -webkit-appearance: none; appearance: none; --track: #fff3; }
.timeline::-webkit-slider-runnable-track { height: 6px; border-radius: 3px; background: var(--track); }
.timeline::-moz-range-track { height: 6px; border-radius: 3px; background: var(--track); }
.timeline::-webkit-slider-thumb { -webkit-appearance: none; width: 14px; height: 14px; margin-top: -4px; border-radius: 50%;
  background: #fff; border: 0; }
.timeline::-moz-range-thumb { width: 14px; height: 14px; border-radius: 50%; background: #fff; border: 0; }

.busy { position: absolute; top: 50%; left: 50%; width: 44px; height: 44px; margin: -22px 0 0 -22px; border-radius: 50%;
  border: 4px solid #fff4; border-top-color: #fff; animation: spin 0.9s linear infinite; pointer-events: none; }
@keyframes spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .busy { animation-duration: 3s; } .bar { transition: none; } }

.error { position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center; justify-content: center;
  gap: 8px; padding: 24px; background: #101318e8; text-align: center; }
.error strong { font-size: 16px; }
.error p { margin: 0; max-width: 36em; color: #fffc; overflow-wrap: anywhere; }
`;
