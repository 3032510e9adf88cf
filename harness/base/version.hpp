#pragma once

namespace gpuprobe {

// The version this build was configured with: `git describe` of the checkout, or
// -DGPUPROBE_VERSION=... where the sources came without their .git. Defined in a file the
// configure step writes (only when the text changes), so a new commit rebuilds that one file.
const char* gpuprobe_version();

}  // namespace gpuprobe
