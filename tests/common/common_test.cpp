// The shared helpers below every library: the hash and what it covers, the CRC-32, ceil_div, the
// config lookup rule, bounded input reads, outputs that never overwrite an input or leave their
// folder, atomic writes, locks and running a process.
#include "common/config_dir.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/int_math.h"
#include "common/process.h"
#include "tests/input_error.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ltc {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Hash, Fnv1aKeepsTheValuesExistingStoresWereWrittenWith) {
  // ltc's offset basis (see common/hash.h), not the published one: these are the names existing
  // results stores and Slurm records carry.
  EXPECT_EQ(fnv1a_hex(""), "14650fb0739d0383");
  EXPECT_EQ(fnv1a_hex("a"), "44bd8ad473cd9906");
  EXPECT_EQ(fnv1a_hex("foobar"), "88fad7c0a8ff07f2");
}

TEST(Hash, FieldsAreSeparated) {
  EXPECT_NE(Fnv1a().field("ab").field("c").hex(), Fnv1a().field("a").field("bc").hex());
  EXPECT_EQ(Fnv1a().bytes("ab").bytes("c").hex(), fnv1a_hex("abc"));
}

TEST(Hash, FilesFingerprintFollowsNamesAndContentsNotOrder) {
  const fs::path d = fresh_dir("ltc-hash-test");
  const std::string a = (d / "a.sv").string(), b = (d / "b.sv").string();
  std::ofstream(a) << "module a; endmodule\n";
  std::ofstream(b) << "module b; endmodule\n";
  const std::string h = files_fingerprint({a, b});
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(files_fingerprint({b, a}), h);
  EXPECT_NE(files_fingerprint({a}), h);
  std::ofstream(b) << "module b2; endmodule\n";
  EXPECT_NE(files_fingerprint({a, b}), h);
  fs::rename(b, d / "c.sv");
  std::ofstream(b) << "module b; endmodule\n";
  EXPECT_NE(files_fingerprint({a, (d / "c.sv").string()}), h);  // same contents, other name
  EXPECT_THROW(files_fingerprint({(d / "missing.sv").string()}), std::runtime_error);
  fs::remove_all(d);
}

TEST(Hash, HdlFingerprintCoversTheIncludeFoldersHeaders) {
  const fs::path d = fresh_dir("ltc-hdl-hash-test");
  const std::string top = (d / "top.sv").string();
  std::ofstream(top) << "`include \"defs.svh\"\n";
  std::ofstream(d / "defs.svh") << "`define A 1\n";
  const std::string h = hdl_fingerprint({top}, {d.string()});
  EXPECT_EQ(h, files_fingerprint({top, (d / "defs.svh").string()}));
  std::ofstream(d / "defs.svh") << "`define A 2\n";
  EXPECT_NE(hdl_fingerprint({top}, {d.string()}), h);
  fs::remove_all(d);
}

TEST(Hash, Crc32MatchesTheCheckValueAndZlib) {
  // The CRC-32 check value of the catalogue of CRC algorithms, and zlib.crc32 of two strings.
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
}

TEST(IntMath, CeilDiv) {
  EXPECT_EQ(ceil_div(0, 4), 0);
  EXPECT_EQ(ceil_div(1, 4), 1);
  EXPECT_EQ(ceil_div(4, 4), 1);
  EXPECT_EQ(ceil_div(5, 4), 2);
  static_assert(ceil_div(27648, 64) == 432);
}

TEST(ConfigDir, EnvironmentFolderWinsWhenItHoldsTheKind) {
  const fs::path d = fresh_dir("ltc-config-dir-test");
  fs::create_directories(d / "gpus");
  ::setenv("LTC_CONFIG_DIR", d.c_str(), 1);
  EXPECT_EQ(config_dir("gpus"), (d / "gpus").string());
  EXPECT_EQ(config_dir(), d.string());
  // A kind the folder lacks falls back to the source tree's, for every kind alike.
  EXPECT_EQ(config_dir("models"), std::string(LTC_SOURCE_DIR) + "/configs/models");
  ::unsetenv("LTC_CONFIG_DIR");
  EXPECT_EQ(config_dir("models"), std::string(LTC_SOURCE_DIR) + "/configs/models");
  EXPECT_EQ(config_dir("gpus"), std::string(LTC_SOURCE_DIR) + "/configs/gpus");
  fs::remove_all(d);
}

TEST(FileIo, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  const fs::path d = fresh_dir("ltc-atomic-test");
  const std::string f = (d / "sub" / "x.txt").string();
  write_text_atomic(f, "one");
  write_text_atomic(f, "two");
  EXPECT_EQ(read_text(f), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(d / "sub"), fs::directory_iterator{}), 1);
  EXPECT_THROW(read_text((d / "missing").string()), std::runtime_error);
  fs::remove_all(d);
}

using test_support::input_error_of;

TEST(FileIo, InputReadsTakeRegularFilesOnlyAndNeverBlock) {
  const fs::path d = fresh_dir("ltc-input-read");
  std::ofstream(d / "a.json") << "{}";
  EXPECT_EQ(read_input_file((d / "a.json").string()), "{}");
  // A device that never ends, a FIFO with no writer (would block forever), a directory, a
  // missing file: each refused at once, naming the path and what it is.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(
      input_error_of([] { read_input_file("/dev/zero"); }).find("/dev/zero: is a character device"),
      std::string::npos);
  const std::string fifo = (d / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(input_error_of([&] {
              read_input_file(fifo);
            }).find("is a FIFO (named pipe), not a regular file"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { read_input_file(d.string()); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { read_input_file((d / "none").string()); }).find("cannot open"),
            std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // The size limit: a file over it is refused by name and limit, one at it is read.
  std::ofstream(d / "big") << std::string(100, 'x');
  EXPECT_NE(input_error_of([&] {
              read_input_file((d / "big").string(), 99);
            }).find("over the limit of 99 bytes"),
            std::string::npos);
  EXPECT_EQ(read_input_file((d / "big").string(), 100).size(), 100u);
  // read_text (files ltc wrote) has the same checks but is a failed run, not bad input.
  EXPECT_THROW(read_text("/dev/zero"), std::runtime_error);
  fs::remove_all(d);
}

TEST(FileIo, AnOutputThatIsAnInputIsRefusedUnderAnySpelling) {
  const fs::path d = fresh_dir("ltc-out-in");
  const std::string in = (d / "cfg.json").string();
  std::ofstream(in) << "{}";
  fs::create_hard_link(in, d / "link.json");
  EXPECT_NE(input_error_of([&] {
              check_not_an_input(in, "--out", {"x", in});
            }).find("--out: '" + in + "' is the input file"),
            std::string::npos);
  const std::string other_spelling = (d / "." / "cfg.json").string();
  EXPECT_THROW(check_not_an_input(other_spelling, "--out", {in}), InputError);
  EXPECT_THROW(check_not_an_input((d / "link.json").string(), "--out", {in}), InputError);
  // A new file, or an existing one that is not an input, is fine.
  EXPECT_NO_THROW(check_not_an_input((d / "new.lmt").string(), "--out", {in}));
  std::ofstream(d / "old.lmt") << "x";
  EXPECT_NO_THROW(check_not_an_input((d / "old.lmt").string(), "--out", {in, ""}));
  fs::remove_all(d);
}

TEST(FileIo, FileNamesThatWouldLeaveTheirFolderAreRefused) {
  for (const char* bad : {"../../evil", "..", ".", ".hidden", "a/b", "/abs", "", "a b", "a\\b"}) {
    EXPECT_NE(input_error_of([&] {
                check_file_name(bad, "spec.json: field 'name'");
              }).find("spec.json: field 'name': '"),
              std::string::npos)
        << bad;
  }
  EXPECT_THROW(check_file_name(std::string(129, 'a'), "name"), InputError);
  for (const char* good : {"dp4", "wbits-crossovers", "dse_lut.fp16", "A1"}) {
    EXPECT_NO_THROW(check_file_name(good, "name")) << good;
  }
}

TEST(FileIo, AnAtomicFileAppearsOnlyWhenCommitted) {
  const fs::path d = fresh_dir("ltc-atomic-file");
  const std::string path = (d / "run.vcd").string();
  {
    AtomicFile f(path);
    std::ofstream(f.temporary()) << "half";
  }  // a failed run: nothing at the path, no temporary left
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 0);
  {
    AtomicFile f(path);
    std::ofstream(f.temporary()) << "whole";
    EXPECT_FALSE(fs::exists(path));
    f.commit();
  }
  EXPECT_EQ(read_text(path), "whole");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
  fs::remove_all(d);
}

TEST(FileIo, FailFastLockNamesTheHolder) {
  const fs::path d = fresh_dir("ltc-lock-test");
  const std::string path = (d / "store.lock").string();
  FileLock held(path);
  // flock locks belong to the open file description, so a second open in this process conflicts.
  try {
    FileLock second(path, "results store " + d.string());
    FAIL() << "second lock succeeded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos)
        << e.what();
  }
  fs::remove_all(d);
}

TEST(Process, CapturesOutputAndExitCode) {
  const fs::path d = fresh_dir("ltc-process-test");
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, d.string(),
                                      (d / "log").string(), 0);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.log.find("out"), std::string::npos);
  EXPECT_NE(r.log.find("err"), std::string::npos);
  const ProcessResult t = run_process({"sleep", "5"}, d.string(), (d / "log2").string(), 0.2);
  EXPECT_TRUE(t.timed_out);
  EXPECT_THROW(run_process({"ltc-no-such-program"}, d.string(), (d / "log3").string(), 0),
               std::runtime_error);
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  fs::remove_all(d);
}

}  // namespace
}  // namespace ltc
