// One line for an argument no option or positional took: CLI11 says only "The following
// arguments were not expected", listed in reverse, without the command or a likely meaning.
#include <algorithm>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/spelling.hpp"

namespace irrun::cli {
namespace {

// The long names ("--name") a command takes, its own and the top level's.
std::vector<std::string> long_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* app = &cmd; app != nullptr; app = app->get_parent())
    for (const CLI::Option* opt : app->get_options())
      for (const auto& name : opt->get_lnames()) names.push_back("--" + name);
  return names;
}

// "a, b and c".
std::string listed(const std::vector<std::string>& items) {
  std::string list;
  for (std::size_t i = 0; i < items.size(); ++i)
    list += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return list;
}

// What typed likely meant among names: those it begins ("--output": --output-dir or
// --output-format), else the nearest, if within two edits and fewer than a third of its letters.
std::string meant(const std::string& typed, const std::vector<std::string>& names) {
  std::vector<std::string> longer;
  for (const auto& name : names)
    if (typed.size() > 2 && name.starts_with(typed)) longer.push_back(name);
  if (!longer.empty()) {
    auto list = listed(longer);
    const auto last = list.rfind(" and ");
    return last == std::string::npos ? list : list.replace(last, 5, " or ");
  }
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& name : names) {
    const auto d = edit_distance(typed, name);
    if (d < best_distance && 3 * d < name.size() - 2) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

// The other commands that take option name ("irrun run and bench").
std::string commands_taking(const CLI::App& top, const CLI::App& cmd, const std::string& name) {
  std::vector<std::string> found;
  for (const CLI::App* other : top.get_subcommands([](const CLI::App*) { return true; })) {
    if (other == &cmd) continue;
    for (const auto& known : long_names(*other))
      if (known == name && std::find(found.begin(), found.end(), other->get_name()) == found.end())
        found.push_back(other->get_name());
  }
  return found.empty() ? std::string() : "irrun " + listed(found);
}

}  // namespace

std::string unexpected_argument(const CLI::App& top, const std::vector<std::string>& args,
                                const std::string& fallback) {
  const auto parsed = top.get_subcommands();
  auto extras = top.remaining(true);
  extras.erase(std::remove(extras.begin(), extras.end(), "--"), extras.end());
  if (parsed.empty() || extras.empty()) return fallback;
  const CLI::App& cmd = *parsed.front();
  const std::string command = "irrun " + cmd.get_name();
  // After "--" every argument is positional: "-- --x" is no option.
  const auto separator = std::find(args.begin(), args.end(), "--");
  const auto at = [&](const std::string& e) { return std::find(args.begin(), separator, e); };
  const auto is_option = [&](const std::string& e) {
    return e.size() >= 2 && e[0] == '-' && at(e) != separator;
  };
  // An unknown option first, the one earliest on the command line (CLI11 lists the extras in
  // no promised order); else the first extra.
  auto first_it = extras.begin();
  for (auto it = extras.begin(); it != extras.end(); ++it)
    if (is_option(*it) && (!is_option(*first_it) || at(*it) < at(*first_it))) first_it = it;
  const std::string& first = *first_it;
  const bool positional = !is_option(first);
  const std::string more =
      extras.size() > 1 ? ", and " + std::to_string(extras.size() - 1) + " more" : "";
  if (positional)
    return command + ": unexpected argument '" + first + "'" + more + " (" + command + " --help)";

  const std::string name = first.substr(0, first.find('='));
  std::string hint;
  if (const auto others = commands_taking(top, cmd, name); !others.empty())
    hint = " (an option of " + others + ")";
  else if (const auto likely = name.starts_with("--") ? meant(name, long_names(cmd)) : "";
           !likely.empty())
    hint = " (did you mean " + likely + "?)";
  else
    hint = " (" + command + " --help)";
  return command + ": unknown option " + name + hint;
}

}  // namespace irrun::cli
