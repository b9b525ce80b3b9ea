// What a command run in a simulated container writes: its commands, the
// shell's syntax, stdin, exit codes, and a terminal's line discipline.
#include "member/kubelet/sim_process.h"

#include <gtest/gtest.h>

#include "member/test_util.h"

namespace flotilla::member::kubelet {
namespace {

ProcessContext Context() {
  return {"web-1",
          "shop",
          "10.244.0.7",
          "n1",
          member::testing::Parse(R"({"name": "app", "image": "nginx:1.27",
              "command": ["nginx"], "args": ["-g", "daemon off;"],
              "env": [{"name": "COLOR", "value": "blue"},
                      {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]})"),
          TimePoint(std::chrono::seconds(1764806400))};
}

struct Ran {
  std::string out, err;
  int code = 0;
  std::optional<std::string> failure;
};

// Runs `argv` with `input` on stdin (then closed).
Ran Exec(std::vector<std::string> argv, const std::string& input = "", bool tty = false) {
  SimProcess p(Context(), std::move(argv), tty);
  Ran r;
  auto add = [&](const ProcessOutput& o) {
    r.out += o.out;
    r.err += o.err;
  };
  add(p.Start());
  if (!input.empty()) add(p.Input(input));
  add(p.EndInput());
  EXPECT_TRUE(p.exited());
  r.code = p.exit_code();
  r.failure = p.failure();
  return r;
}

TEST(SimProcessTest, CommandsAnswerFromThePod) {
  EXPECT_EQ(Exec({"echo", "hello", "world"}).out, "hello world\n");
  EXPECT_EQ(Exec({"echo", "-n", "x"}).out, "x");
  EXPECT_EQ(Exec({"hostname"}).out, "web-1\n");
  EXPECT_EQ(Exec({"/bin/cat", "/etc/hostname"}).out, "web-1\n");
  EXPECT_NE(Exec({"cat", "/etc/hosts"}).out.find("10.244.0.7\tweb-1\n"), std::string::npos);
  EXPECT_NE(Exec({"cat", "/etc/resolv.conf"}).out.find("search shop.svc.cluster.local"),
            std::string::npos);
  EXPECT_EQ(Exec({"printenv", "COLOR"}).out, "blue\n");
  std::string env = Exec({"env"}).out;
  EXPECT_NE(env.find("HOSTNAME=web-1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("COLOR=blue\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("FROM_SECRET"), std::string::npos) << env;  // not resolved
  EXPECT_EQ(Exec({"date"}).out, "Thu Dec  4 00:00:00 UTC 2025\n");
  EXPECT_NE(Exec({"ps"}).out.find("    1 root     nginx -g daemon off;\n"), std::string::npos);
}

TEST(SimProcessTest, ExitCodesAndErrors) {
  EXPECT_EQ(Exec({"false"}).code, 1);
  Ran missing = Exec({"cat", "/nope"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err, "cat: can't open '/nope': No such file or directory\n");
  EXPECT_EQ(Exec({"printenv", "NOPE"}).code, 1);
  // An executable that is not there cannot be run at all.
  Ran unknown = Exec({"curl", "x"});
  ASSERT_TRUE(unknown.failure.has_value());
  EXPECT_NE(unknown.failure->find("exec: \"curl\": executable file not found in $PATH"),
            std::string::npos);
  EXPECT_EQ(unknown.out, "");
}

TEST(SimProcessTest, AShellScriptWithItsSyntax) {
  Ran r = Exec({"sh", "-c",
                "echo \"$HOSTNAME is ${COLOR}\"; echo 'a  $b'; false && echo no || "
                "echo yes; echo $?; nosuch; echo code=$?"});
  EXPECT_EQ(r.out, "web-1 is blue\na  $b\nyes\n0\ncode=127\n");
  EXPECT_EQ(r.err, "sh: nosuch: not found\n");
  EXPECT_EQ(Exec({"bash", "-c", "echo x; exit 3; echo never"}).out, "x\n");
  EXPECT_EQ(Exec({"bash", "-c", "echo x; exit 3"}).code, 3);
  EXPECT_EQ(Exec({"sh", "-c", "echo a # a comment"}).out, "a\n");
  Ran pipe = Exec({"sh", "-c", "echo a | wc -l; echo never"});
  EXPECT_EQ(pipe.err, "sh: pipes are not simulated\n");
  EXPECT_EQ(pipe.code, 2);
}

TEST(SimProcessTest, StdinFeedsAShellAndCat) {
  Ran sh = Exec({"sh"}, "echo one\nprintenv COLOR\nexit 4\necho never\n");
  EXPECT_EQ(sh.out, "one\nblue\n");
  EXPECT_EQ(sh.code, 4);
  // A last line without its newline still runs when stdin ends.
  EXPECT_EQ(Exec({"sh"}, "echo a\necho b").out, "a\nb\n");
  EXPECT_EQ(Exec({"cat"}, "line 1\nline 2\n").out, "line 1\nline 2\n");
  // No stdin: a shell and cat end at once.
  EXPECT_EQ(Exec({"sh"}).code, 0);
}

TEST(SimProcessTest, ATerminalEchoesPromptsAndEndsLinesWithCrLf) {
  SimProcess p(Context(), {"sh"}, true);
  EXPECT_EQ(p.Start().out, "# ");
  // Typed keys come back; Enter is CR; output lines end in CR LF.
  EXPECT_EQ(p.Input("echo hi").out, "echo hi");
  EXPECT_EQ(p.Input("\r").out, "\r\nhi\r\n# ");
  // DEL erases, ^C drops the line, stderr shows on the one output.
  EXPECT_EQ(p.Input("lsx\x7f").out, "lsx\b \b");
  EXPECT_EQ(p.Input("\x03").out, "^C\r\n# ");
  ProcessOutput bad = p.Input("nosuch\r");
  EXPECT_EQ(bad.out, "nosuch\r\nsh: nosuch: not found\r\n# ");
  EXPECT_EQ(bad.err, "");
  // ^D on an empty line ends the shell with the last command's code.
  EXPECT_EQ(p.Input("\x04").out, "exit\r\n");
  EXPECT_TRUE(p.exited());
  EXPECT_EQ(p.exit_code(), 127);
}

}  // namespace
}  // namespace flotilla::member::kubelet
