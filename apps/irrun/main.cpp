// irrun: validate, run and compare the pooling layers of OpenVINO IR models.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "irrun/error.hpp"
#include "irrun/file_io.hpp"
#include "irrun/tensor.hpp"
#include "irrun/utf8.hpp"

namespace {

constexpr const char* kExamples = R"(
Examples:
  irrun check model.xml                     validate every pooling layer's declared shapes
  irrun check --strict a.xml b.xml          also fail on what OpenVINO silently ignores
  irrun info model.xml                      the graph as a table
  irrun model.xml --input x.npy -o out/     run it and save each output as out/NAME.npy
  irrun model.xml --random-input --seed 7   run on reproducible random inputs
  irrun model.xml --random-input -o golden/ --save-inputs   write a golden directory
  irrun model.xml --expect golden/          replay it and compare (exit 1 on a mismatch)
  irrun net.xml --layer pool5 --input x.bin run one pooling layer of a whole network
Exit codes: 0 ok, 1 check failed or --expect mismatch, 2 usage error, 3 bad model,
            4 bad input or golden, 5 output not writable, 6 unsupported op or type,
            7 resource limit (--max-memory).)";

bool is_subcommand(const std::string& arg) {
  return arg == "check" || arg == "info" || arg == "run" || arg == "bench";
}

// `irrun MODEL.xml ...` means `irrun run MODEL.xml ...`: insert "run" before the first
// argument that is neither a global option nor a subcommand, so run options may also come first
// (`irrun --layer pool MODEL.xml`).
bool is_global_flag(const std::string& a) {
  // Short flags may be combined: -qv.
  const bool short_flags = a.size() >= 2 && a[0] == '-' && a[1] != '-' &&
                           a.find_first_not_of("vqh", 1) == std::string::npos;
  return short_flags || a == "--verbose" || a == "--quiet" || a == "--help" || a == "--version" ||
         a.starts_with("--max-memory=");
}

// A first word that is neither a command nor a model's path (no '.' or '/', no such file):
// `irrun chek model.xml` is a mistyped command, not a run of the model "chek".
bool mistyped_command(const std::string& a) {
  std::error_code ec;
  return !a.empty() && a[0] != '-' && a.find_first_of("./") == std::string::npos &&
         !std::filesystem::exists(a, ec);
}

std::vector<std::string> normalise_args(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--max-memory") {  // a global option with a separate value: skip the value
      ++i;
      continue;
    }
    if (is_global_flag(a)) continue;
    if (is_subcommand(a)) break;
    if (mistyped_command(a))
      throw irrun::usage_error("unknown command '" + a +
                               "': the commands are check, info, run and bench (a model's path "
                               "alone runs it: irrun MODEL.xml ...)");
    // `irrun --layer p run m.xml`: a command's option before the command word, which CLI11
    // would report as "m.xml not expected". A command word right after an option may be its
    // value (`--output-dir run`), but not after `--option=value`.
    const auto may_take_value = [](const std::string& arg) {
      return arg.starts_with('-') && arg.find('=') == std::string::npos;
    };
    for (std::size_t j = i + 1; a.starts_with('-') && j < args.size(); ++j)
      if (is_subcommand(args[j]) && !may_take_value(args[j - 1]))
        throw irrun::usage_error(a + " comes before the command '" + args[j] +
                                 "': only -v, -q and --max-memory go there (irrun " + args[j] +
                                 " " + a + " ...)");
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "run");
    break;
  }
  return args;
}

// Whether stdout was closed at start. Descriptors 0-2 closed at start are opened again, so that
// no file irrun opens (a model, an output's temporary file) takes their number and receives what
// is meant for stdout or stderr: stdout on /dev/full, where a write fails as it would have (a
// run that writes nothing there is fine), stdin and stderr on /dev/null.
bool stdout_was_closed = false;

void open_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == 1) stdout_was_closed = true;
    const int opened = ::open(fd == 1 ? "/dev/full" : "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) ::close(opened);  // a lower one was free: not ours
  }
}

// A report that never reached stdout (a full disk, a closed descriptor) must not pass for one
// that did: exit 5 where the command itself found nothing worse than a failed check.
int stdout_written(int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = stdout_was_closed ? EBADF : errno;
  if (flushed && !std::ferror(stdout)) return code;
  spdlog::error("standard output: cannot write{}",
                err ? ": " + std::generic_category().message(err) : std::string());
  const bool worse = code != static_cast<int>(irrun::ExitCode::ok) &&
                     code != static_cast<int>(irrun::ExitCode::check_failed);
  return worse ? code : static_cast<int>(irrun::ExitCode::output_failed);
}

// A signal that ends the process first removes the temporary files of the writes in progress,
// then ends it as the signal would have (SA_RESETHAND restores the default action).
extern "C" void on_terminating_signal(int sig) {
  irrun::remove_temporary_files();
  ::raise(sig);
}

void remove_temporary_files_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_terminating_signal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    // A signal ignored at start (nohup, a shell's background job) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
      ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  open_standard_descriptors();
  remove_temporary_files_on_signals();
  // A pipe whose reader is gone (`irrun check ... | head -1`) is a failed write to stdout (exit
  // 5, with the --junit report still written), not a silent death by SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"irrun: validate, run and compare the pooling layers of OpenVINO IR models",
               "irrun"};
  app.footer(kExamples);
  app.set_version_flag("--version", std::string("irrun ") + IRRUN_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  irrun::cli::Globals globals;
  app.add_flag("-v,--verbose", globals.verbose, "Log details on stderr");
  app.add_flag("-q,--quiet", globals.quiet, "Print only problems and errors");
  std::string max_memory;
  app.add_option("--max-memory", max_memory,
                 "Memory irrun may allocate for tensors, e.g. 512M, 8G (default: 75% of RAM); "
                 "more fails with exit code 7 (check: exit 1, and it goes on with the next file)")
      ->check(
          [](const std::string& v) {
            return irrun::parse_memory_size(v) ? std::string()
                                               : "expected a size such as 1048576, 512M or 8G";
          },
          "SIZE");

  const std::vector<irrun::cli::Command> commands{
      irrun::cli::add_check(app, globals),
      irrun::cli::add_info(app, globals),
      irrun::cli::add_run(app, globals),
      irrun::cli::add_bench(app, globals),
  };

  // The logger first: a failed --help on stdout is reported on stderr too.
  auto logger = spdlog::stderr_color_mt("irrun");
  logger->set_pattern("irrun: %^%l%$: %v");
  spdlog::set_default_logger(logger);

  std::vector<std::string> args;
  try {
    args = normalise_args(argc, argv);
  } catch (const irrun::Error& e) {
    spdlog::error("{}", irrun::escape_controls(e.what()));
    return static_cast<int>(e.code());
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes them
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return stdout_written(app.exit(e));  // --help, --version
    // One line, as every other error (CLI11's own output adds a second).
    const std::string what = e.what() + std::string(" (irrun --help, irrun COMMAND --help)");
    spdlog::error("{}",
                  irrun::escape_controls(dynamic_cast<const CLI::ExtrasError*>(&e)
                                             ? irrun::cli::unexpected_argument(app, args, what)
                                             : what));
    return static_cast<int>(irrun::ExitCode::usage);
  }

  logger->set_level(globals.verbose ? spdlog::level::debug
                    : globals.quiet ? spdlog::level::err
                                    : spdlog::level::info);
  irrun::set_memory_limit(
      max_memory.empty() ? irrun::default_memory_limit() : *irrun::parse_memory_size(max_memory),
      "--max-memory");

  for (const auto& command : commands) {
    if (!command.sub->parsed()) continue;
    try {
      return stdout_written(command.run());
    } catch (const irrun::Error& e) {
      spdlog::error("{}", irrun::escape_controls(e.what()));
      return static_cast<int>(e.code());
    } catch (const std::bad_alloc&) {
      spdlog::error("out of memory");
      return static_cast<int>(irrun::ExitCode::limit);
    } catch (const std::exception& e) {
      spdlog::error("{}", irrun::escape_controls(e.what()));
      return static_cast<int>(irrun::ExitCode::bad_model);
    }
  }
  return static_cast<int>(irrun::ExitCode::usage);
}
