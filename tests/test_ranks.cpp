// One process per GPU without a GPU or NCCL: where a process stands, read from each launcher's
// variables, and NCCL's unique id handed from rank 0 to another rank through a file (two
// threads here, as two processes on a shared file system would).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "base/ranks.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    rank_plan_from_env(env_of(vars));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Ranks, EachLauncherIsRead) {
  RankPlan p = rank_plan_from_env(
      env_of({{"GPUPROBE_RANK", "1"}, {"GPUPROBE_NRANKS", "2"}, {"GPUPROBE_JOB", "x7"}}));
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.nranks, 2);
  EXPECT_EQ(p.local_rank, 1) << "no local rank given: one host";
  EXPECT_EQ(p.job, "x7");
  EXPECT_EQ(p.source, "GPUPROBE_RANK/GPUPROBE_NRANKS");

  p = rank_plan_from_env(env_of({{"SLURM_PROCID", "5"},
                                 {"SLURM_NTASKS", "8"},
                                 {"SLURM_LOCALID", "1"},
                                 {"SLURM_JOB_ID", "4242"},
                                 {"SLURM_STEP_ID", "0"}}));
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.nranks, 8);
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.job, "4242.0");

  // mpirun inside a Slurm allocation: Open MPI's ranks, not the allocation's.
  p = rank_plan_from_env(env_of({{"SLURM_PROCID", "0"},
                                 {"SLURM_NTASKS", "1"},
                                 {"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}));
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.nranks, 4);
  EXPECT_EQ(p.source, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE/OMPI_COMM_WORLD_LOCAL_RANK");

  p = rank_plan_from_env(env_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.job, "");
}

TEST(Ranks, BadEnvironmentNamesTheVariable) {
  EXPECT_NE(error_of({}).find("GPUPROBE_RANK"), std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", "0"}}).find("GPUPROBE_NRANKS is not set"),
            std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", "2"}, {"GPUPROBE_NRANKS", "2"}}).find("GPUPROBE_RANK='2'"),
            std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", "x"}, {"GPUPROBE_NRANKS", "2"}}).find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", "0"}, {"GPUPROBE_NRANKS", "0"}}).find("GPUPROBE_NRANKS"),
            std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", "0"}, {"GPUPROBE_NRANKS", "99999999999999999999"}})
                .find("GPUPROBE_NRANKS"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "-1"}})
                .find("SLURM_LOCALID"),
            std::string::npos);
  EXPECT_NE(error_of({{"GPUPROBE_RANK", ""}, {"GPUPROBE_NRANKS", "2"}}).find("GPUPROBE_RANK=''"),
            std::string::npos);
}

TEST(Ranks, LocalDevice) {
  RankPlan p;
  p.local_rank = 3;
  EXPECT_EQ(local_device(p, 1), 0) << "the launcher gave this task its one GPU";
  EXPECT_EQ(local_device(p, 4), 3);
  EXPECT_THROW(local_device(p, 2), std::invalid_argument);
  EXPECT_THROW(local_device(p, 0), std::invalid_argument);
}

TEST(Ranks, IdFileTextRoundTrips) {
  NcclId id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 37 + 5);
  NcclId back{};
  std::string job;
  ASSERT_TRUE(parse_id_file(id_file_text(id, "4242.0"), &back, &job));
  EXPECT_EQ(back, id);
  EXPECT_EQ(job, "4242.0");
  const std::string good = id_file_text(id, "");
  EXPECT_FALSE(parse_id_file("", &back, &job));
  EXPECT_FALSE(parse_id_file("gpuprobe-nccl-id 2" + good.substr(good.find('\n')), &back, &job));
  std::string short_id = good;
  short_id.erase(short_id.size() - 3, 2);
  EXPECT_FALSE(parse_id_file(short_id, &back, &job));
  std::string bad_hex = good;
  bad_hex[bad_hex.find("id=") + 3] = 'g';
  EXPECT_FALSE(parse_id_file(bad_hex, &back, &job));
}

class IdFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("gpuprobe_ranks_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "nccl-id").string(); }
  fs::path dir_;
};

TEST_F(IdFile, RankZeroHandsItsIdToAnother) {
  NcclId id{};
  id.fill(0xab);
  id[0] = 1;
  NcclId got{};
  std::string error;
  std::thread other([&] {
    try {
      got = wait_for_id_file(path(), "job-1", 10, 0.01);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the other rank is waiting
  write_id_file(path(), id, "job-1");
  other.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(got, id);
}

TEST_F(IdFile, AStaleFileOfAnotherJobIsWaitedPast) {
  NcclId old{}, fresh{};
  old.fill(1);
  fresh.fill(2);
  write_id_file(path(), old, "job-0");
  NcclId got{};
  std::thread other([&] { got = wait_for_id_file(path(), "job-1", 10, 0.01); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  write_id_file(path(), fresh, "job-1");
  other.join();
  EXPECT_EQ(got, fresh);
}

TEST_F(IdFile, NoFileOrAStaleOneEndsWithTheReason) {
  try {
    wait_for_id_file(path(), "job-1", 0.1, 0.01);
    ADD_FAILURE() << "no file, no id";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no NCCL id for this job"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no file"), std::string::npos) << e.what();
  }
  write_id_file(path(), NcclId{}, "job-0");
  try {
    wait_for_id_file(path(), "job-1", 0.1, 0.01);
    ADD_FAILURE() << "a stale file is no id";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stale"), std::string::npos) << e.what();
  }
  write_file_atomic(path(), "something else\n");
  EXPECT_THROW(wait_for_id_file(path(), "job-1", 0.1, 0.01), std::runtime_error);
}

TEST(Ranks, ProcessRanksAreKeptForTheFamily) {
  // Nothing in the test program sets them before this test.
  RankPlan p;
  p.rank = 1;
  p.nranks = 2;
  set_process_ranks(p);
  ASSERT_NE(process_ranks(), nullptr);
  EXPECT_EQ(process_ranks()->nranks, 2);
}

}  // namespace
}  // namespace gpuprobe
