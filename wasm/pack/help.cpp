// holoquic-pack's help texts: the tool's overview and one page per mode. docs/packaging.md says
// the same at length; keep the two in step.
#include <string>

#include "cli.h"
#include "command_line.h"

namespace holoquic {
namespace {

const char* const kExitCodes =
    "Exit codes:\n"
    "  0  done\n"
    "  2  usage: unknown mode or option, a missing or malformed value, a value out of range,\n"
    "     a scene file whose content is wrong\n"
    "  3  input: a file or folder named is missing, unreadable or unusable (PLY, glTF, scene file)\n"
    "  4  output: encoding failed or the content directory could not be written\n";

const char* const kEncodingOptions =
    "  --codec avc|hevc       video codec group (default avc)\n"
    "  --inter 0|1            predict atlas frames from the previous one (default 1)\n"
    "  --smoothing            ask decoders for grid geometry smoothing of patch seams\n"
    "  --frame-rate N         frames per second, 1 … 120 (default 30)\n"
    "  --segment-seconds S    segment length, 0.1 … 60 s, a whole number of frames (default 1)\n"
    "  --threads N            encoding threads, 1 … 256 (default: all cores)\n"
    "  --grow                 publish a playable scene early (lowest quality first) and grow it in\n"
    "                         place; run again to resume one that was stopped\n"
    "  --wt-endpoint URL      a WebTransport endpoint (https) the manifest lists for players (repeatable)\n";

std::string overview() {
  return std::string(
             "holoquic-pack: point clouds, animated models or the built-in demo → a scene the origin serves\n"
             "(per object × quality × segment V-PCC files, a DASH manifest and a quality report).\n"
             "\n"
             "Usage: holoquic-pack MODE [options]      holoquic-pack MODE --help   for the mode's options\n"
             "\n"
             "Modes:\n"
             "  demo     four procedural dancing figures, nothing to supply\n"
             "  ply      folders or numbered patterns of PLY frames, one per object\n"
             "  gltf     animated glTF 2.0 models, one per object\n"
             "  sample   as gltf, but writes the sampled frames as PLY and encodes nothing\n"
             "  scene    everything from a scene file (JSON): sources, placement, timing, ladder, codec\n"
             "\n") +
         kExitCodes + "\nDocumentation: docs/packaging.md\n";
}

}  // namespace

std::string helpText(const std::string& mode) {
  if (mode.empty()) return overview();
  if (mode == "demo")
    return std::string(
               "Usage: holoquic-pack demo [--out DIR] [--seconds N] [--dense] [encoding options]\n"
               "\n"
               "Packs four procedural figures dancing in place (figure-0 … figure-3, played ping-pong).\n"
               "\n"
               "  --out DIR              content directory (default content/demo)\n"
               "  --seconds N            scene length in seconds, 1 … 3600 (default 10)\n"
               "  --dense                10-bit grid at 2.1 mm per voxel instead of 9 bits at 5.5 mm\n") +
           kEncodingOptions + "\n" + kExitCodes;
  if (mode == "ply")
    return std::string(
               "Usage: holoquic-pack ply --out DIR --object ID=SOURCE [--object ID=SOURCE …] [options]\n"
               "\n"
               "SOURCE is a folder of .ply frames (name order) or a numbered pattern such as\n"
               "captures/frame_%04d.ply (numbers from 0 or 1, consecutive). Frames play at the frame rate.\n"
               "\n"
               "  --out DIR              content directory (required); its last component names the scene\n"
               "  --object ID=SOURCE     one object, ID of a-z, 0-9 and '-' (repeatable)\n"
               "  --bits N               voxel grid bit depth, 4 … 15 (default 10)\n"
               "  --fit                  float coordinates in any unit: scaled onto the grid, aspect kept\n"
               "  --unit M               with --fit: metres per input unit (default 1; 0.001 for millimetres)\n"
               "  --scale M              metres per voxel (default: from --fit and --unit, else 1.8 m / 2^bits)\n"
               "  --seconds N            scene length in seconds, 1 … 3600 (default: the frames' whole segments)\n") +
           kEncodingOptions + "\n" + kExitCodes;
  if (mode == "gltf" || mode == "sample")
    return std::string("Usage: holoquic-pack ") + mode +
           " --out DIR --object ID=MODEL [--object ID=MODEL …] [options]\n"
           "\n" +
           (mode == "gltf" ? "Samples animated glTF 2.0 models (.glb, or .gltf with its files) onto a voxel grid and packs them.\n"
                           : "Samples animated glTF 2.0 models as gltf does and writes the frames as PLY files\n"
                             "(DIR/ID/frame-NNNNN.ply); nothing is encoded.\n") +
           "Draco and meshopt compression, quantized attributes and KHR_texture_transform are read;\n"
           "docs/packaging.md lists the glTF features that are refused.\n"
           "\n"
           "  --out DIR              output directory (required)\n"
           "  --object ID=MODEL      one object, ID of a-z, 0-9 and '-' (repeatable)\n"
           "  --seconds N            scene length in seconds, 1 … 3600 (default: the longest animation)\n"
           "  --animation I          which animation of each model (default 0)\n"
           "  --bits N               voxel grid bit depth, 4 … 15 (default 10)\n"
           "  --scale M              metres per voxel (default: the model's metres)\n" +
           (mode == "gltf" ? std::string(kEncodingOptions)
                           : std::string("  --frame-rate N         frames per second, 1 … 120 (default 30)\n"
                                         "  --segment-seconds S    segment length (default 1)\n")) +
           "\n" + kExitCodes;
  if (mode == "scene")
    return std::string(
               "Usage: holoquic-pack scene SCENE.json [--out DIR] [--threads N] [--grow] [--wt-endpoint URL …]\n"
               "\n"
               "Packs the scene a scene file describes: objects (PLY frames, glTF models or demo figures)\n"
               "with their placement, frame rate, segment length, scene length, quality ladder and codec.\n"
               "A rung may give \"targetMbps\" instead of its quantisers: they are then fitted per object\n"
               "on its first segment (at most 7 trial encodes per rung).\n"
               "Paths in the file are relative to the file's folder. Format: docs/packaging.md.\n"
               "\n"
               "  --out DIR              content directory (default: the file's \"out\", else content/<file name>)\n"
               "  --threads N            encoding threads, 1 … 256 (default: all cores)\n"
               "  --grow                 publish a playable scene early (lowest quality first) and grow it in\n"
               "                         place; run again to resume one that was stopped\n"
               "  --wt-endpoint URL      a WebTransport endpoint the manifest lists (repeatable; replaces the\n"
               "                         file's \"webtransportEndpoints\")\n"
               "\n") +
           kExitCodes;
  throw cli::UsageError("unknown mode '" + mode + "' (demo, ply, gltf, sample or scene; holoquic-pack --help)");
}

}  // namespace holoquic
