#include "irrun/error.hpp"

#include <locale>
#include <sstream>

namespace irrun {
namespace {

// (An ostringstream rather than string concatenation: GCC 12 warns falsely on the latter.)
std::string located(const std::string& path, std::size_t line, const std::string& detail) {
  std::ostringstream s;
  s.imbue(std::locale::classic());  // not the global locale's "1.557" for line 1557
  s << path;
  if (line) s << ':' << line;
  s << ": " << detail;
  return s.str();
}

}  // namespace

ModelError::ModelError(std::string path, std::size_t line, std::string detail)
    : Error(ExitCode::bad_model, located(path, line, detail)),
      path_(std::move(path)),
      line_(line),
      detail_(std::move(detail)) {}

}  // namespace irrun
