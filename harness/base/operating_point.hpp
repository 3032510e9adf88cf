#pragma once
// The operating point every number was measured at: the GPU's power, clocks, temperature and
// clock-event (throttle) reasons, sampled through NVML while the families run
// (gpu/power_sampler.hpp). Pure C++: the trace file (power_trace.csv), each family's summary
// (families.csv columns and its observations file's metadata), and the mark a value gets when
// a power, thermal or slowdown reason was active while it was measured.
#include <string>
#include <vector>

#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

// NVML's clock-event reasons (nvmlClocksEventReasons), by bit, with the names runs write.
struct ThrottleReason {
  unsigned long long bit;
  const char* name;
};
const std::vector<ThrottleReason>& throttle_reasons();
// "sw_power_cap|hw_slowdown" for a mask; "none" for 0; unknown bits as "other".
std::string throttle_reason_text(unsigned long long mask);
// The mask of a text that throttle_reason_text wrote ("other" and unknown names add nothing).
unsigned long long throttle_reason_mask(const std::string& text);

// The reasons that lower the clock below what the GPU would otherwise run: power (software
// cap, hardware brake), thermal (software, hardware) and the hardware slowdown. The others
// (idle, application clocks, sync boost, display) say why the clock is where it is set.
constexpr unsigned long long kLimitingReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// One NVML reading; NaN where the driver did not answer.
struct OperatingSample {
  double t_s = 0;          // seconds since the run started (host steady clock)
  std::string family;      // the family running then ("" between families)
  double power_w = 0;      // NVML_FI_DEV_POWER_INSTANT where the driver has it, else power_avg_w
  double power_avg_w = 0;  // nvmlDeviceGetPowerUsage: the driver's average over about a second
  double energy_j = 0;     // nvmlDeviceGetTotalEnergyConsumption, updated about every 100 ms
  double sm_clock_mhz = 0, mem_clock_mhz = 0, temperature_c = 0;
  unsigned long long reasons = 0;
};

// The trace's file in a run folder, and its text and reader (columns: time_s, family, power_w,
// power_avg_w, energy_j, sm_clock_mhz, mem_clock_mhz, temperature_c, reasons).
inline constexpr const char* kTraceFile = "power_trace.csv";
std::string format_trace(const Metadata& meta, const std::vector<OperatingSample>& samples);
std::vector<OperatingSample> trace_from_table(const CsvTable& t);

// One family's operating point, from the samples taken while it ran.
struct OperatingPoint {
  int samples = 0;
  double start_s = 0, end_s = 0;  // first and last sample
  double power_w = 0;             // mean: the energy counter's rise over the time it took, where it
                                  // rose; else the mean of the power samples
  double power_max_w = 0;         // largest power sample
  double sm_clock_mhz = 0, sm_clock_min_mhz = 0, mem_clock_mhz = 0;  // median, least, median
  double temperature_max_c = 0;
  unsigned long long reasons = 0;  // every reason seen but gpu_idle
  double limited_fraction = 0;     // of the samples, those with a limiting reason
};
OperatingPoint summarize_family(const std::vector<OperatingSample>& trace,
                                const std::string& family);

// families.csv: the columns appended after its first six, and one family's cells (empty cells
// where NVML gave no sample).
const std::vector<std::string>& operating_point_columns();
std::vector<std::string> operating_point_cells(const OperatingPoint& op);
// A family's observations file: `# family_power_w=`, `# family_throttle_reasons=` and the rest.
void add_operating_point_metadata(Metadata& meta, const OperatingPoint& op);

// A value measured while a limiting reason was active is right less often (its clock moved
// while it ran): its confidence is multiplied by 1 - kThrottlePenalty x the fraction of the
// family's samples that had one (0.7 at the worst), and its evidence names the reasons.
constexpr double kThrottlePenalty = 0.3;
// Marks `params` by the family metadata `meta` (add_operating_point_metadata); a family
// without it, or that ran unthrottled, is left as it was. Returns whether it marked.
bool mark_throttled(std::vector<Parameter>& params, const Metadata& meta);

}  // namespace gpuprobe
