#pragma once
// Run directories (results/<gpu-slug>/<run-id>/) and atomic file writes, as the data
// contract of docs/design.md describes them.
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "base/csv.hpp"

namespace gpuprobe {

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"
std::string gpu_slug(const std::string& device_name);
// UTC time as YYYYMMDDTHHMMSSZ.
std::string run_id(std::time_t t);
// Creates root/<slug>/<run-id>/ for a run started at `start`. A run never overwrites
// another: when that directory exists, the next free second is taken. Returns the path and
// sets *id to the run-id used. The process that made a run folder may write every file in it.
std::string create_run_dir(const std::string& root, const std::string& slug, std::time_t start,
                           std::string* id);

// What a command may write in a run folder that another process made: its measurements
// (every *.csv: the families' observations, families.csv, invalid.csv, skipped.csv,
// not_measured.csv, parameters.csv) and benchmark.json are the run's, never an output.
enum class RunFileRights {
  none,        // every command: report.md, methods.md, an export beside them, nothing else
  parameters,  // gpuprobe analyze: also the run's parameters.csv, inferred again
  run,         // the run's own writer: every file (a test's stand-in for the runner; the
               // runner itself writes into the folder create_run_dir made, which needs none)
};
// Throws std::runtime_error, one line naming the path, when writing `path` would replace a
// run's own file that `rights` does not allow: the one guard every output goes through.
void check_output_path(const std::string& path, RunFileRights rights = RunFileRights::none);
// Writes `text` to `path` (after check_output_path) so that a reader never sees half a
// file: a regular file, or none yet, through a temporary file renamed into place; a
// symbolic link's target the same way, beside the target (the link stays); a character
// device, a FIFO and a descriptor of this process (/dev/stdout, /dev/fd/N) written through,
// as a shell redirection would (a FIFO that no process reads is an error, not a wait).
// Throws std::runtime_error with the path on any failure, a full device included.
void write_file_atomic(const std::string& path, const std::string& text,
                       RunFileRights rights = RunFileRights::none);
// The text of an input file (read_input_file of base/csv.hpp: regular files only, bounded).
std::string read_file(const std::string& path);
// Puts the folder `staged` in the place of `target` in one step (renameat2 RENAME_EXCHANGE;
// a plain rename where there is no target yet), so that a reader sees either the old folder
// or the new one, whole. The old contents are left at `staged` for the caller to remove.
// Where the file system cannot exchange, the old folder is moved aside first. Throws
// std::runtime_error naming both paths on failure.
void replace_dir(const std::string& staged, const std::string& target);
bool file_exists(const std::string& path);
// A run's own files, not a family's observations: parameters, families, invalid, skipped,
// not_measured and power_trace (by stem).
bool is_run_level_file(const std::string& stem);

// What a folder holds, read from the metadata of the files gpuprobe writes, so that no
// command writes into a folder it did not make for that purpose. A folder is a run when one
// of its *.csv files that is a regular file (a link to one counts) begins with `# key=value`
// metadata holding run_id=: every file `gpuprobe run` writes does (families.csv and
// parameters.csv from the first family on), and no other command writes a run_id. A
// byte-order mark before the first line is read past; FIFOs and devices are never opened.
enum class FolderKind {
  missing,  // no such folder
  empty,    // a folder with nothing in it
  run,      // a run (above)
  compare,  // the output of `gpuprobe compare` (its parameters.csv names run_1, run_2, ...)
  other,    // anything else: never written into
};
FolderKind folder_kind(const std::string& dir);
const char* folder_kind_name(FolderKind k);

// The metadata keys that say which GPU a file was measured on.
inline constexpr const char* kIdentityKeys[] = {"gpu", "compute_capability", "sm_count",
                                                "l2_bytes"};
// Files of one run name one GPU and one run (kIdentityKeys, and pci_bus_id, gpu_uuid where
// recorded, run_id): "" when they agree, else one line naming the key and the two files that
// differ ("a.csv names gpu=X, b.csv gpu=Y: files of two GPUs in one run"; for run_id "...:
// files of two runs in one folder"). A file without a key agrees.
std::string identity_conflict(const std::vector<std::pair<std::string, Metadata>>& files);

}  // namespace gpuprobe
