/**
 * Which Representations this player can decode, by the V3C level the manifest declares for each
 * (docs/mpd.md, `hq:v3cLevelIdc`): one whose level allows atlases larger than the decoder takes
 * is left out of the ladder before anything of it is fetched, so neither the ABR nor a re-request
 * can choose it. A Representation without a declared level stays (older manifests): its segments
 * meet the decoder's own cap when they are decoded.
 */
import type { SceneModel } from '../model/scene';
import { levelMaxAtlasSamples, levelName } from '../model/v3cLevels';
import { ManifestError } from './mpd';

/**
 * `scene` with each object's ladder cut to the Representations a decoder taking atlases of up to
 * `maxAtlasSamples` samples decodes (the order and the ids kept). Undefined: every one stays.
 * Throws `ManifestError` naming the object when none of its Representations is left.
 */
export function keepDecodable(scene: SceneModel, maxAtlasSamples: number | undefined): SceneModel {
  if (maxAtlasSamples === undefined) return scene;
  const objects = scene.objects.map((object) => {
    const decodable = object.representations.filter((r) => {
      if (r.v3cLevelIdc === undefined) return true;
      const allowed = levelMaxAtlasSamples(r.v3cLevelIdc);
      return allowed !== undefined && allowed <= maxAtlasSamples;
    });
    if (decodable.length === 0) {
      const levels = [...new Set(object.representations.map((r) => r.v3cLevelIdc!))].map(describeLevel).join(', ');
      throw new ManifestError(
        `${object.id}: no Representation this player decodes: every one declares a V3C level (${levels}) allowing atlases ` +
          `larger than the ${maxAtlasSamples} samples its decoder takes`,
      );
    }
    return decodable.length === object.representations.length ? object : { ...object, representations: decodable };
  });
  return { ...scene, objects };
}

function describeLevel(idc: number): string {
  const samples = levelMaxAtlasSamples(idc);
  return samples === undefined ? `idc ${idc}, no level known` : `${levelName(idc)}: ${samples} samples`;
}
