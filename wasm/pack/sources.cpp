// The three kinds of source, opened in two steps: first what fixes each one's natural length
// (files listed, models loaded), then, with the scene's length known, what depends on it (the
// grid a glTF animation or a float PLY sequence is fitted to covers exactly the frames used).
#include "sources.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli.h"
#include "figures.h"
#include "gltf.h"
#include "ply_frames.h"
#include "surface_sampler.h"
#include "vpcc/ply.h"

using namespace vpcc;

namespace holoquic {
namespace {

/// A source before the scene's length is known.
struct Opening {
  Source source;
  unsigned naturalSegments = 0;                      // 0: any length (the demo)
  std::function<void(Source&)> settle = [](Source&) {};  // called once `segments` is set
};

/// Frame `index` of a sequence of `n`: looped; a sequence shorter than one segment is played
/// forward then backward to fill it.
size_t sequenceFrame(size_t index, size_t n, unsigned framesPerSegment) {
  if (n >= framesPerSegment) return index % n;
  const size_t period = n > 1 ? 2 * n - 2 : 1;
  index %= period;
  return index < n ? index : period - index;
}

Opening openDemo(const ScenePlan& plan, const ObjectPlan& o) {
  FigureStyle style;
  style.seed = o.demoSeed;
  style.bits = o.dense ? 10 : 9;
  style.metresPerVoxel = o.dense ? 0.0021 : 0.0055;
  Opening op;
  op.source.bits = style.bits;
  op.source.metresPerVoxel = o.metresPerVoxel > 0 ? o.metresPerVoxel : style.metresPerVoxel;
  op.source.playMode = "pingpong";
  const unsigned perSegment = plan.framesPerSegment(), rate = plan.frameRate;
  op.source.segment = [style, perSegment, rate](unsigned k) {
    std::vector<InputFrame> frames;
    for (unsigned f = 0; f < perSegment; ++f) frames.push_back(figureFrame(style, double(k * perSegment + f) / rate));
    return frames;
  };
  return op;
}

Opening openPly(const ScenePlan& plan, const ObjectPlan& o) {
  const std::vector<std::string> files = listPlyFrames(o.path);
  const unsigned perSegment = plan.framesPerSegment();
  Opening op;
  op.source.bits = o.bits;
  op.naturalSegments = std::max<unsigned>(1, unsigned(files.size() / perSegment));
  const ObjectPlan object = o;
  op.settle = [files, perSegment, object](Source& s) {
    const size_t used = std::min(files.size(), size_t(s.segments) * perSegment);
    auto fit = std::make_shared<GridFit>();
    if (object.fit) {
      // One grid for the whole sequence: a fixed scale, so the object keeps its size over time.
      std::fprintf(stderr, "%s: fitting %zu frames onto the %u-bit grid\n", s.id.c_str(), used, s.bits);
      std::array<double, 6> box = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
      for (size_t i = 0; i < used; ++i) {
        try {
          growBounds(readPly(files[i]), box);
        } catch (const std::exception& e) {
          throw cli::InputError(e.what());
        }
      }
      if (box[0] > box[3]) throw cli::InputError(object.path + ": the frames have no points");
      *fit = fitToGrid(box, s.bits);
    }
    s.metresPerVoxel = object.metresPerVoxel > 0 ? object.metresPerVoxel
                       : object.fit              ? object.unitMetres / fit->voxelsPerUnit
                                                 : 1.8 / double(1u << s.bits);
    if (object.fit)
      std::fprintf(stderr, "%s: %.6g voxels per input unit, %.6g m per voxel\n", s.id.c_str(), fit->voxelsPerUnit, s.metresPerVoxel);
    const unsigned bits = s.bits;
    const bool fitted = object.fit;
    s.segment = [files, perSegment, bits, fit, fitted](unsigned k) {
      std::vector<InputFrame> frames;
      for (unsigned f = 0; f < perSegment; ++f) {
        const std::string& file = files[sequenceFrame(size_t(k) * perSegment + f, files.size(), perSegment)];
        try {
          const PlyCloud cloud = readPly(file);
          frames.push_back(fitted ? voxelize(cloud, bits, *fit, file) : voxelize(cloud, bits, file));
        } catch (const std::exception& e) {
          throw cli::InputError(e.what());
        }
        if (frames.back().size() == 0) throw cli::InputError(file + ": no points");
      }
      return frames;
    };
  };
  return op;
}

/// An animated glTF model sampled at the frame rate onto a grid that holds the frames used.
Opening openGltf(const ScenePlan& plan, const ObjectPlan& o) {
  std::shared_ptr<const GltfModel> model;
  try {
    model = std::make_shared<const GltfModel>(loadGltf(o.path));
  } catch (const std::exception& e) {
    throw cli::InputError(e.what());
  }
  const int animation = model->animations.empty() ? -1 : o.animation;
  if (animation >= int(model->animations.size()))
    throw cli::InputError(o.path + ": no animation " + std::to_string(o.animation) + " (it has " + std::to_string(model->animations.size()) + ")");
  Opening op;
  op.source.bits = o.bits;
  op.naturalSegments = 1;
  if (animation >= 0) {
    const double length = model->animations[size_t(animation)].end - model->animations[size_t(animation)].start;
    op.naturalSegments = std::max(1u, unsigned(std::ceil(length / plan.segmentSeconds - 1e-6)));
  }
  const unsigned perSegment = plan.framesPerSegment(), rate = plan.frameRate;
  const ObjectPlan object = o;
  op.settle = [model, animation, perSegment, rate, object](Source& s) {
    std::array<double, 6> box = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
    for (unsigned f = 0; f < s.segments * perSegment; ++f) growBox(poseModel(*model, animation, f / double(rate)), box);
    if (box[0] > box[3]) throw cli::InputError(object.path + ": the model has no triangles to sample");
    const VoxelGrid grid = fitGrid(box, s.bits);
    s.metresPerVoxel = object.metresPerVoxel > 0 ? object.metresPerVoxel : 1 / grid.voxelsPerUnit;  // glTF units are metres
    const std::string file = object.path;
    s.segment = [model, animation, grid, file, perSegment, rate](unsigned k) {
      std::vector<InputFrame> frames;
      for (unsigned f = 0; f < perSegment; ++f) {
        const unsigned index = k * perSegment + f;
        frames.push_back(voxelizeSurfaces(*model, poseModel(*model, animation, index / double(rate)), grid));
        if (frames.back().size() == 0) throw cli::InputError(file + ": frame " + std::to_string(index) + " samples to no points");
      }
      return frames;
    };
  };
  return op;
}

}  // namespace

std::vector<Source> openSources(const ScenePlan& plan) {
  std::vector<Opening> openings;
  unsigned longest = 0;
  for (const ObjectPlan& o : plan.objects) {
    openings.push_back(o.kind == SourceKind::Demo ? openDemo(plan, o) : o.kind == SourceKind::Ply ? openPly(plan, o) : openGltf(plan, o));
    openings.back().source.id = o.id;
    longest = std::max(longest, openings.back().naturalSegments);
  }
  unsigned segments = plan.seconds > 0 ? unsigned(std::lround(plan.seconds / plan.segmentSeconds)) : longest;
  if (segments == 0) segments = std::max(1u, unsigned(std::lround(10 / plan.segmentSeconds)));  // demo figures only: 10 s
  std::vector<Source> sources;
  for (Opening& op : openings) {
    op.source.segments = segments;
    op.settle(op.source);
    sources.push_back(std::move(op.source));
  }
  return sources;
}

}  // namespace holoquic
