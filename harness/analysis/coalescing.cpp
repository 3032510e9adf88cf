#include "analysis/coalescing.hpp"

namespace gpuprobe::coalescing {

GPUPROBE_DESCRIBE_FAMILY(coalescing::kFamily);

}  // namespace gpuprobe::coalescing
