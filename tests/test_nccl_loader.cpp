// The NCCL loader without a GPU: where it looks, what it says when it finds nothing or the wrong
// library, and that NVLink multicast is off unless the user turned it on. Where this machine has
// NCCL itself, that it is loaded and its version read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpu/nccl.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            (std::string("gpuprobe_nccl_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // An empty file where a wheel's library would be: found by the search, refused by dlopen.
  fs::path fake_wheel(const fs::path& site) {
    const fs::path lib = site / "nvidia/nccl/lib/libnccl.so.2";
    fs::create_directories(lib.parent_path());
    std::ofstream(lib) << "";
    return lib;
  }
  fs::path root_;
};

TEST(NcclLoader, VersionCodes) {
  EXPECT_EQ(nccl::version_code(2, 28, 3), 22803);
  EXPECT_EQ(nccl::version_code(2, 7, 8), 2708);
  EXPECT_EQ(nccl::version_text(22803), "2.28.3");
  EXPECT_EQ(nccl::version_text(2708), "2.7.8");
  EXPECT_LT(nccl::version_code(2, 8, 4), nccl::version_code(2, 9, 6))
      << "the two encodings still order";
}

TEST(NcclLoader, ANamedLibraryThatIsNotThereSaysSo) {
  NcclSearch s;
  s.explicit_path = "/no/such/dir/libnccl.so.2";
  s.python_prefixes = {"/usr"};
  EXPECT_EQ(nccl_candidates(s), std::vector<std::string>{s.explicit_path})
      << "GPUPROBE_NCCL: that file alone";
  Nccl lib(s);
  EXPECT_FALSE(lib.available());
  EXPECT_NE(lib.why().find("NCCL not found"), std::string::npos) << lib.why();
  EXPECT_NE(lib.why().find("/no/such/dir/libnccl.so.2"), std::string::npos) << lib.why();
  EXPECT_NE(lib.why().find("GPUPROBE_NCCL"), std::string::npos) << lib.why();
  EXPECT_THROW(lib.group_start(), std::logic_error) << "no call without a library";
}

TEST(NcclLoader, ALibraryThatIsNotNcclIsRefused) {
  NcclSearch s;
  s.explicit_path = "libm.so.6";
  Nccl lib(s);
  EXPECT_FALSE(lib.available());
  EXPECT_NE(lib.why().find("lacks ncclGetVersion (not NCCL)"), std::string::npos) << lib.why();
}

TEST_F(TempTree, WheelsAreFoundUnderPythonPrefixes) {
  const fs::path venv_lib = fake_wheel(root_ / "venv/lib/python3.12/site-packages");
  const fs::path dist_lib = fake_wheel(root_ / "usr/lib/python3/dist-packages");
  const fs::path path_lib = fake_wheel(root_ / "pythonpath");
  fs::create_directories(root_ / "empty/lib/python3.11/site-packages");
  NcclSearch s;
  s.python_prefixes = {(root_ / "venv").string(), (root_ / "empty").string(),
                       (root_ / "usr").string(), (root_ / "missing").string(),
                       (root_ / "pythonpath").string() + "/"};
  const auto c = nccl_candidates(s);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], "libnccl.so.2") << "the system's first, by the loader's own search";
  EXPECT_EQ(fs::path(c[1]), venv_lib);
  EXPECT_EQ(fs::path(c[2]), dist_lib);
  EXPECT_EQ(fs::path(c[3]), path_lib);
}

TEST_F(TempTree, EveryFileTriedIsListed) {
  const fs::path bad = fake_wheel(root_ / "venv/lib/python3.12/site-packages");
  NcclSearch s;
  s.explicit_path = bad.string();
  Nccl lib(s);
  EXPECT_FALSE(lib.available());
  EXPECT_NE(lib.why().find(bad.string()), std::string::npos) << lib.why();
}

TEST(NcclLoader, MulticastStaysOffUnlessTheUserTurnedItOn) {
  const char* before = std::getenv("NCCL_NVLS_ENABLE");
  const std::string saved = before ? before : "";
  unsetenv("NCCL_NVLS_ENABLE");
  EXPECT_EQ(keep_nvls_off(), "0");
  NcclSearch s;
  s.explicit_path = "/no/such/libnccl.so.2";
  unsetenv("NCCL_NVLS_ENABLE");
  Nccl lib(s);
  ASSERT_NE(std::getenv("NCCL_NVLS_ENABLE"), nullptr) << "set before NCCL is loaded";
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  EXPECT_EQ(keep_nvls_off(), "1") << "the user's own setting stays";
  if (before) setenv("NCCL_NVLS_ENABLE", saved.c_str(), 1);
  else unsetenv("NCCL_NVLS_ENABLE");
}

// Where this machine has NCCL (a system install, or GPUPROBE_NCCL), it loads with every function
// the family calls; nothing here needs a GPU.
TEST(NcclLoader, TheInstalledLibraryLoads) {
  const Nccl lib(nccl_search_from_env());
  if (!lib.available()) GTEST_SKIP() << lib.why();
  EXPECT_GE(lib.version(), nccl::version_code(2, 7, 0));
  EXPECT_FALSE(lib.path().empty());
  EXPECT_EQ(lib.has_all_to_all(), lib.version() >= nccl::version_code(2, 28, 0))
      << nccl::version_text(lib.version());
}

}  // namespace
}  // namespace gpuprobe
