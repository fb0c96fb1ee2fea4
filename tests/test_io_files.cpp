// io/read_file.h and the write-then-rename of io/tmp_file.h: the one
// whole-file read and the one atomic write every reader and writer uses.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/read_file.h"
#include "io/tmp_file.h"
#include "support/test_util.h"

namespace ropegrad {
namespace {

namespace fs = std::filesystem;

class IoFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ropegrad_io_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Every file in the directory, for "no temporary file left behind".
  int files() const {
    int n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++n;
    return n;
  }
  fs::path dir_;
};

TEST_F(IoFiles, ReadFileReturnsEveryByte) {
  const std::string bytes("a\0b\xff\n", 5);
  std::ofstream(path("f.bin"), std::ios::binary) << bytes;
  EXPECT_EQ(io::read_file(path("f.bin"), "test"), bytes);
  std::ofstream(path("empty")).flush();
  EXPECT_EQ(io::read_file(path("empty"), "test"), "");
}

TEST_F(IoFiles, ReadFileNamesTheOpAndThePath) {
  EXPECT_RG_ERROR(io::read_file(dir_.string(), "load_npy", "a .npy file"), "load_npy",
                  "'" + dir_.string() + "' is a directory, not a .npy file");
  EXPECT_RG_ERROR(io::read_file(path("missing"), "text"), "text", "cannot open '" + path("missing") + "'");
}

TEST_F(IoFiles, WriteFileAtomicallyReplacesAndLeavesNoTemporaryFile) {
  nn::write_file_atomically(path("out.txt"), "first", "test");
  EXPECT_EQ(io::read_file(path("out.txt"), "test"), "first");
  nn::write_file_atomically(path("out.txt"), std::string(100000, 'x'), "test");
  EXPECT_EQ(io::read_file(path("out.txt"), "test"), std::string(100000, 'x'));
  EXPECT_EQ(files(), 1);
}

TEST_F(IoFiles, WriteFileAtomicallyIntoAMissingDirectoryFailsAndKeepsNothing) {
  EXPECT_RG_ERROR(nn::write_file_atomically(path("no/such/dir/out.txt"), "x", "write"), "write", "cannot write",
                  path("no/such/dir/out.txt"));
  EXPECT_EQ(files(), 0);
}

TEST_F(IoFiles, ReplaceWithTmpFailsWhenTheTargetIsADirectoryAndRemovesTheTemporaryFile) {
  fs::create_directories(path("target/inside"));  // rename cannot replace a non-empty directory with a file
  const std::string tmp = nn::unique_tmp_path(path("target"));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  nn::write_all(fd, "abc", 3, tmp, "test");
  EXPECT_RG_ERROR(nn::replace_with_tmp(fd, tmp, path("target"), "test"), "test", "cannot rename", tmp,
                  path("target"));
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(fs::is_directory(path("target/inside")));
}

TEST_F(IoFiles, WriteFileAtomicallyLeavesUnrelatedFilesAlone) {
  // Files the program did not write, named like its temporary files: none is read, replaced or removed.
  const std::string neighbours[] = {"out.txt.tmp", "out.txt.1.zzzz.tmp", "out.txt.2.0123456789abcdef.tmp.keep",
                                    "other.txt"};
  for (const std::string& name : neighbours) std::ofstream(path(name)) << "mine: " << name;
  nn::write_file_atomically(path("out.txt"), "new", "test");
  nn::write_file_atomically(path("out.txt"), "newer", "test");
  EXPECT_EQ(io::read_file(path("out.txt"), "test"), "newer");
  for (const std::string& name : neighbours) EXPECT_EQ(io::read_file(path(name), "test"), "mine: " + name) << name;
  EXPECT_EQ(files(), 5);
}

}  // namespace
}  // namespace ropegrad
