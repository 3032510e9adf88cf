#pragma once
// A probe family declared once. Each family's header (harness/analysis/<family>.hpp) holds
// its descriptor, `<family>::kFamily`, which every part of the family names instead of
// repeating a string: the probe in microbench/<family>.cu (`name()` returns kFamily.name), the
// analyzer registry (GPUPROBE_REGISTER_ANALYZER(<family>::kFamily, fn)), the figure scripts
// (listed here, each starting "# family: <name>"), and the parameter names it may emit (the
// rows of docs/parameters.md whose family is <name>). Pure C++ without allocation, so that
// the CUDA sources and the host-only tests read the same constant, and so that it is ready
// before any registration at static-initialisation time runs. tests/test_families.cpp checks
// that the parts agree.
#include <map>
#include <string>
#include <string_view>

namespace gpuprobe {

struct FamilyDescriptor {
  std::string_view name;   // snake_case, what the family reveals; observations go to <name>.csv
  std::string_view plots;  // its figure scripts under plots/, separated by spaces ("" for none)
  // What the family lacks on purpose, with the reason ("" when it lacks nothing):
  std::string_view no_analyzer = "";  // figure-only or observations-only: why no parameter
  std::string_view no_figure = "";    // analysis-only: why no figure
  // Why a --quick run leaves the whole family out ("" when it runs in every run): its
  // parameters are then listed in the run's not_measured.csv with this reason.
  std::string_view not_in_quick = "";
};

// Every family described in this program, by name: those with an analyzer (registered with
// it) and those declared without one (GPUPROBE_DESCRIBE_FAMILY).
std::map<std::string, const FamilyDescriptor*>& family_descriptors();

struct DescribeFamily {
  explicit DescribeFamily(const FamilyDescriptor& d) { family_descriptors()[std::string(d.name)] = &d; }
};

}  // namespace gpuprobe

#define GPUPROBE_FAMILY_CAT2(a, b) a##b
#define GPUPROBE_FAMILY_CAT(a, b) GPUPROBE_FAMILY_CAT2(a, b)
// For a family with no analyzer (figure-only, observations-only), in its
// harness/analysis/<family>.cpp: GPUPROBE_DESCRIBE_FAMILY(loaded_latency::kFamily);
#define GPUPROBE_DESCRIBE_FAMILY(descriptor)                                                   \
  [[maybe_unused]] static ::gpuprobe::DescribeFamily GPUPROBE_FAMILY_CAT(gpuprobe_described_, \
                                                                         __LINE__)(descriptor)
