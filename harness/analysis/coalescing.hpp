#pragma once
// The GTC 2013 case study (microbench/coalescing.cu): an array of 12-byte structures read and
// written as AoS, through the read-only path, staged through shared memory, and as SoA.
#include "base/family.hpp"

namespace gpuprobe::coalescing {

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{
    "coalescing", "",
    "observations-only: the case study's speedups per layout are read from coalescing.csv as "
    "they are",
    "observations-only: a figure of four bars per GPU would add nothing to the table"};

// The names of coalescing.csv, written by the driver once each.
constexpr const char* kReadProbe = "read";          // us per pass, per layout
constexpr const char* kWriteProbe = "write";        // us per pass, per layout
constexpr const char* kSpeedupSuffix = "_speedup";  // <probe>_speedup: over plain AoS
constexpr const char* kLayoutColumn = "layout";
constexpr const char* kStructuresColumn = "structures";  // 12-byte structures per pass

}  // namespace gpuprobe::coalescing
