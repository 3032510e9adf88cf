#include "analysis/loaded_latency.hpp"

namespace gpuprobe::loaded_latency {

GPUPROBE_DESCRIBE_FAMILY(loaded_latency::kFamily);

}  // namespace gpuprobe::loaded_latency
