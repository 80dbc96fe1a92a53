/**
 * Check page for `HoloquicObject`: an application with its own three.js renderer, scene (a grey
 * background and a reference cube), camera and animation loop adds the streamed scene as one
 * object, placed and scaled by the app. `?manifest=` names the scene. The page exposes
 * `window.host` for the test: the object, the renderer, and a counter of frames drawn.
 */
import * as THREE from 'three';
import { HoloquicObject } from '../../src/app/holoquicObject';
import { defaultFraming } from '../../src/render/framing';

const params = new URLSearchParams(location.search);
const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
renderer.setSize(640, 480, false);
document.body.append(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x404040);
const camera = new THREE.PerspectiveCamera(50, 640 / 480, 0.01, 100);
const cube = new THREE.Mesh(new THREE.BoxGeometry(0.1, 0.1, 0.1), new THREE.MeshBasicMaterial({ color: 0xff0000 }));
scene.add(cube);

const holo = new HoloquicObject({ src: params.get('manifest') ?? '/content/demo/manifest.mpd', mode: 'qr' });
// The app places the streamed scene where it wants it in its world.
holo.object3D.position.set(10, 0, 0);
scene.add(holo.object3D);

const host = { holo, renderer, frames: 0, failed: '' };
(window as unknown as { host: typeof host }).host = host;

holo.player.addEventListener('error', (e) => (host.failed = (e as CustomEvent<{ message: string }>).detail.message));
holo.play().then(() => {
  // Frame the streamed scene where the app put it.
  const framing = defaultFraming(holo.player.scene!, camera.fov, camera.aspect);
  camera.position.copy(framing.eye).add(holo.object3D.position);
  camera.lookAt(framing.target.clone().add(holo.object3D.position));
}, (e: unknown) => (host.failed = String(e)));

renderer.setAnimationLoop(() => {
  holo.update(renderer, camera);
  renderer.render(scene, camera);
  host.frames++;
});
