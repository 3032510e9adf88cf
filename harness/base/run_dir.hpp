#pragma once
// Run directories (results/<gpu-slug>/<run-id>/) and atomic file writes, as the data
// contract of DESIGN.md section 3 describes them.
#include <ctime>
#include <string>

namespace gpuprobe {

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"
std::string gpu_slug(const std::string& device_name);
// UTC time as YYYYMMDDTHHMMSSZ.
std::string run_id(std::time_t t);
// Creates root/<slug>/<run-id>/ for a run started at `start`. A run never overwrites
// another: when that directory exists, the next free second is taken. Returns the path and
// sets *id to the run-id used.
std::string create_run_dir(const std::string& root, const std::string& slug, std::time_t start,
                           std::string* id);
// Writes `text` to `path` through a temporary file renamed into place, so that a reader
// never sees half a file. Throws std::runtime_error with the path on failure.
void write_file_atomic(const std::string& path, const std::string& text);
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
// command writes into a folder it did not make for that purpose.
enum class FolderKind {
  missing,  // no such folder
  empty,    // a folder with nothing in it
  run,      // a run: an observations file, families.csv or parameters.csv with a run_id
  compare,  // the output of `gpuprobe compare` (its parameters.csv names run_1, run_2, ...)
  other,    // anything else: never written into
};
FolderKind folder_kind(const std::string& dir);
const char* folder_kind_name(FolderKind k);

}  // namespace gpuprobe
